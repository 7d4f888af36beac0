package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omnictx/omni/events"
)

// ErrNoDelivery: the sequence holds no invocation that delivered text.
var ErrNoDelivery = errors.New("no invocation that delivered text")

// ErrWithheld: the invocation's raw input is not in the log, so its raw
// text cannot be shown. Diff wraps it in one of the two causes below.
var ErrWithheld = errors.New("its raw input is not in the log")

// The causes of ErrWithheld: the input held credentials and was never
// stored (Params["input"] "withheld:secrets"), or omni forget erased it
// ("withheld:forgotten").
var (
	ErrWithheldSecrets   = fmt.Errorf("%w: it held credentials, so it was never stored", ErrWithheld)
	ErrWithheldForgotten = fmt.Errorf("%w: 'omni forget' erased it", ErrWithheld)
)

// DiffResult is the raw and delivered text of one recorded invocation.
type DiffResult struct {
	// Seq is the invocation's batch; Time, Reader, Project, Door, Event
	// (the host's hook event name, hooks only), Tool and Source describe it.
	Seq     events.Seq `json:"seq"`
	Time    string     `json:"time"`
	Reader  string     `json:"reader"`
	Project string     `json:"project,omitempty"`
	Door    string     `json:"door"`
	Event   string     `json:"event,omitempty"`
	Tool    string     `json:"tool,omitempty"`
	Source  string     `json:"source,omitempty"`
	// Raw is the text the tool produced; Delivered what the reader was
	// given, as the rerun rendered it.
	Raw       string `json:"raw"`
	Delivered string `json:"delivered"`
	// Folds lists the markers the invocation issued (from the log).
	Folds []RecentFold `json:"folds"`
	// Reason says why nothing changed ("" when something did).
	Reason string `json:"reason,omitempty"`
	// Match reports that the rerun printed exactly what the log says was
	// delivered (SHA-256 of the output), so Delivered is what the reader got.
	Match bool `json:"match"`
}

// LastDelivery returns the sequence of the newest invocation that delivered
// text (0 when there is none).
func LastDelivery(ctx context.Context, log events.Log) (events.Seq, error) {
	rs, err := RecentCalls(ctx, log, 1)
	if err != nil || len(rs) == 0 {
		return 0, err
	}
	return rs[0].Seq, nil
}

// Diff reruns the invocation at seq (0: the newest that delivered text)
// the way Replay does — projections rebuilt from the batches before it,
// its recorded input, time and project, nothing appended — and returns the
// raw text beside the delivered one. Errors: ErrNoDelivery (wrapped), or a
// wrapped log or rerun error.
//
// After omni gc the projections start from the base snapshot base loads.
func Diff(ctx context.Context, log events.Log, seq events.Seq, base BaseLoader) (DiffResult, error) {
	if seq == 0 {
		var err error
		if seq, err = LastDelivery(ctx, log); err != nil {
			return DiffResult{}, fmt.Errorf("diff: %w", err)
		}
		if seq == 0 {
			return DiffResult{}, fmt.Errorf("diff: the log holds %w", ErrNoDelivery)
		}
	}
	batch, err := log.Get(ctx, seq)
	if errors.Is(err, events.ErrNotFound) {
		return DiffResult{}, fmt.Errorf("diff: sequence %d is not in the log: %w", seq, ErrNoDelivery)
	}
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff: %w", err)
	}
	var inv, emEv *events.Event
	r := DiffResult{Seq: seq, Folds: []RecentFold{}}
	for i := range batch {
		ev := &batch[i]
		switch {
		case ev.Kind == events.KindInvoked && ev.Invoked != nil:
			inv = ev
		case ev.Kind == events.KindEmitted && ev.Emitted != nil:
			emEv = ev
		case ev.Kind == events.KindFolded && ev.Folded != nil:
			f := ev.Folded
			r.Folds = append(r.Folds, RecentFold{Marker: f.Marker, Handle: f.Handle, Lines: f.Lines, Bytes: f.Bytes})
		}
	}
	if inv == nil || emEv == nil {
		return DiffResult{}, fmt.Errorf("diff: sequence %d holds %w", seq, ErrNoDelivery)
	}
	em := emEv.Emitted
	r.Time, r.Reader, r.Project = timeStr(inv.Time), inv.Reader().String(), inv.Project
	r.Door, r.Tool, r.Source, r.Reason = string(inv.Invoked.Door), em.Tool, em.Source, em.Reason

	if in := inv.Invoked.Params[string(events.ParamInput)]; strings.HasPrefix(in, events.InputWithheld) {
		cause := ErrWithheldSecrets
		if in == events.InputForgotten {
			cause = ErrWithheldForgotten
		}
		return r, fmt.Errorf("diff: sequence %d: %w (recorded: %d B raw, %d B delivered)", seq, cause, em.RawBytes, em.DeliveredBytes)
	}
	e := newEngine(log, Options{})
	e.dry = true
	if err := e.foldAll(ctx, seq, base); err != nil {
		return r, fmt.Errorf("diff: fold before %d: %w", seq, err)
	}
	rec, err := e.Recorded(batch)
	if err != nil {
		return r, fmt.Errorf("diff: %w", err)
	}
	res, printed, err := e.rerunRecorded(ctx, rec)
	if err != nil {
		return r, fmt.Errorf("diff: %w", err)
	}
	if rec.Door == events.DoorHook || rec.Door == events.DoorBench {
		r.Event = res.Event
	}
	r.Raw, r.Delivered = res.Raw, res.Delivered
	if res.Raw == "" && res.Delivered == "" {
		r.Delivered = r.Raw
	}
	r.Match = sha(printed) == em.Output
	return r, nil
}
