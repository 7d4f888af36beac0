package hooks

import (
	"context"
	"errors"
	"fmt"

	"github.com/omnictx/omni/events"
)

// Recent is one recorded invocation, summarised for people and MCP clients.
type Recent struct {
	// Seq is the batch of the invocation; Time when it happened (RFC 3339).
	Seq  events.Seq `json:"seq"`
	Time string     `json:"time"`
	// Reader is "session" or "session/agent"; Project its project.
	Reader  string `json:"reader"`
	Project string `json:"project,omitempty"`
	// Tool and Source (command or path) of the output.
	Tool   string `json:"tool"`
	Source string `json:"source,omitempty"`
	// RawBytes the host produced; DeliveredBytes the model read.
	RawBytes       int `json:"raw_bytes"`
	DeliveredBytes int `json:"delivered_bytes"`
	// Folds lists the markers issued (kind and handle).
	Folds []RecentFold `json:"folds,omitempty"`
	// Changed reports that the model read something other than the raw
	// text (a fold, a distillation, a redaction, a cut).
	Changed bool `json:"changed"`
	// Distiller names the distiller that shortened the text ("" none).
	Distiller string `json:"distiller,omitempty"`
	// Reason says why nothing changed ("" when something did).
	Reason string `json:"reason,omitempty"`
	// Failed reports the failure path.
	Failed bool `json:"failed,omitempty"`
}

// RecentFold is one marker of a Recent invocation.
type RecentFold struct {
	Marker string `json:"marker"`
	Handle string `json:"handle"`
	Lines  int    `json:"lines"`
	Bytes  int    `json:"bytes"`
}

// RecentCalls returns up to n of the newest invocations that delivered
// text, newest first, reading the log backwards from its last batch.
func RecentCalls(ctx context.Context, log events.Log, n int) ([]Recent, error) {
	return RecentCallsWhere(ctx, log, n, nil)
}

// RecentCallsWhere is RecentCalls over the invocations whose Emitted event
// keep accepts (nil: all): a scope by project or session. It reads the
// log backwards until it has n or reaches the log's first batch.
func RecentCallsWhere(ctx context.Context, log events.Log, n int, keep func(events.Event) bool) ([]Recent, error) {
	last, err := log.Last(ctx)
	if err != nil {
		return nil, fmt.Errorf("recent: %w", err)
	}
	first, err := log.First(ctx)
	if err != nil {
		return nil, fmt.Errorf("recent: %w", err)
	}
	var out []Recent
	for seq := last; seq >= first && seq > 0 && len(out) < n; seq-- {
		batch, err := log.Get(ctx, seq)
		if errors.Is(err, events.ErrNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("recent: %w", err)
		}
		var r *Recent
		for _, ev := range batch {
			if ev.Kind != events.KindEmitted || ev.Emitted == nil || keep != nil && !keep(ev) {
				continue
			}
			em := ev.Emitted
			r = &Recent{Seq: seq, Time: ev.Time.UTC().Format("2006-01-02T15:04:05Z07:00"), Reader: ev.Reader().String(),
				Project: ev.Project, Tool: em.Tool, Source: em.Source, RawBytes: em.RawBytes,
				DeliveredBytes: em.DeliveredBytes, Reason: em.Reason, Failed: em.Failed, Changed: em.Replied}
		}
		if r == nil {
			continue
		}
		for _, ev := range batch {
			if d := ev.Distilled; d != nil && !d.Passthrough {
				r.Distiller = d.Distiller
			}
			if f := ev.Folded; f != nil {
				r.Folds = append(r.Folds, RecentFold{Marker: f.Marker, Handle: f.Handle, Lines: f.Lines, Bytes: f.Bytes})
			}
		}
		out = append(out, *r)
	}
	return out, nil
}
