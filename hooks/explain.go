package hooks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/projections/ledger"
)

// Errors of Explain.
var (
	// ErrBadTarget: neither a 16-hex handle nor a positive sequence number.
	ErrBadTarget = errors.New("give a handle (16 hex characters) or a sequence number")
	// ErrNoFold: the handle or sequence names no fold in the log.
	ErrNoFold = errors.New("no fold in the log")
)

// maxExplained bounds the folds one Explain describes, and the retrieves
// listed per fold.
const maxExplained = 20

// Explanation is the answer of Explain: why each fold of a handle, or of one
// invocation, happened, traced through the log.
type Explanation struct {
	// Target is what was asked, as given.
	Target string `json:"target"`
	// Folds are the folds explained, in log order. TotalFolds counts every
	// fold the target names (at most maxExplained are explained).
	Folds      []FoldWhy `json:"folds"`
	TotalFolds int       `json:"total_folds"`
}

// FoldWhy explains one fold.
type FoldWhy struct {
	// Seq is the batch of the folding invocation; Time, Reader and Project
	// its time, reader and project; Tool and Source (command or path) its
	// output's origin; RawBytes the size of its text.
	Seq      events.Seq `json:"seq"`
	Time     string     `json:"time"`
	Reader   string     `json:"reader"`
	Project  string     `json:"project,omitempty"`
	Tool     string     `json:"tool,omitempty"`
	Source   string     `json:"source,omitempty"`
	RawBytes int        `json:"raw_bytes"`
	// The fold itself: marker kind, scope claimed, handle, where the lines
	// were in the text (0-based) and how many, their bytes and the marker's.
	Marker      string `json:"marker"`
	Scope       string `json:"scope"`
	Handle      string `json:"handle"`
	FirstLine   int    `json:"first_line"`
	Lines       int    `json:"lines"`
	Bytes       int    `json:"bytes"`
	MarkerBytes int    `json:"marker_bytes"`
	// GainBytes is the gain the scope requires (DefaultBars: 64 for this reader's own
	// lines, 128 for lines shown only elsewhere in the project); BarBytes =
	// MarkerBytes + GainBytes is the size the lines had to reach; Cleared
	// reports Bytes >= BarBytes.
	GainBytes int  `json:"gain_bytes"`
	BarBytes  int  `json:"bar_bytes"`
	Cleared   bool `json:"cleared"`
	// From is the source the marker names; LedgerSource the first source
	// the ledger held for the lines.
	From         string `json:"from,omitempty"`
	LedgerSource string `json:"ledger_source,omitempty"`
	// First is the earlier invocation that first delivered the block's
	// first non-blank line in the fold's scope (this reader since its last
	// compaction; or the project); Deliveries every invocation that first
	// delivered some of the block's lines, in log order.
	First      *Delivery  `json:"first_delivery,omitempty"`
	Deliveries []Delivery `json:"deliveries"`
	// ArchiveMissing is set when the log no longer holds the block's
	// Archived event (its batch is unreadable, or omni gc removed it): the
	// lines, and so their first delivery, cannot be traced.
	ArchiveMissing bool `json:"archive_missing,omitempty"`
	// BlockLines counts the block's distinct non-blank lines; TracedLines
	// those a delivery was found for.
	BlockLines  int `json:"block_lines"`
	TracedLines int `json:"traced_lines"`
	// Compacted is the first compaction of the reader's session after the
	// fold (nil: none since); Retrieves the retrieves of the handle after
	// it; Ended the end of the reader's session.
	Compacted *Later  `json:"compacted,omitempty"`
	Retrieves []Later `json:"retrieves"`
	Ended     *Later  `json:"ended,omitempty"`
}

// Delivery is one earlier invocation that delivered lines of a block.
type Delivery struct {
	Seq     events.Seq `json:"seq"`
	Time    string     `json:"time"`
	Reader  string     `json:"reader"`
	Project string     `json:"project,omitempty"`
	Door    string     `json:"door,omitempty"`
	Tool    string     `json:"tool,omitempty"`
	Source  string     `json:"source,omitempty"`
	// LineSource is the ledger's source identity when it differs from
	// Source (the file of a plain shell read).
	LineSource string `json:"line_source,omitempty"`
	// Lines counts the block's lines this invocation delivered first.
	Lines int `json:"lines"`
}

// Later is an event after the fold.
type Later struct {
	Seq    events.Seq `json:"seq"`
	Time   string     `json:"time"`
	Reader string     `json:"reader,omitempty"`
	// What is the compaction trigger, or the end reason.
	What string `json:"what,omitempty"`
}

// ParseTarget reads an explain target: a handle (16 hex characters, any
// case, optionally quoted or written omni_retrieve("...")) or a sequence
// number. Errors: ErrBadTarget.
func ParseTarget(s string) (handle string, seq events.Seq, err error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "omni_retrieve(")
	t = strings.TrimSuffix(t, ")")
	t = strings.ToLower(strings.Trim(t, "\"'` "))
	if len(t) == pipeline.HandleLen && isHex(t) {
		return t, 0, nil
	}
	if n, err := strconv.ParseUint(t, 10, 64); err == nil && n > 0 {
		return "", events.Seq(n), nil
	}
	return "", 0, ErrBadTarget
}

// foldRef locates one Folded event and what is needed to explain it.
type foldRef struct {
	ev   events.Event
	why  *FoldWhy
	keys map[uint64]int // block line key -> position among the block's keys
	list []uint64       // the block's distinct non-blank keys, in order
	// first deliveries, per key, as indexes into deliveries
	first map[uint64]int
	last  map[uint64]int64 // unix seconds of the latest delivery per key
}

// Explain answers `omni explain` from the log alone: for a handle, every
// fold that issued it; for a sequence, every fold of that invocation. For
// each it finds, by replaying the deliveries before the fold the way the
// ledger records them (first source kept, 30-day window, a compaction
// empties the session's readers), which earlier invocation first delivered
// the block's lines to the fold's scope, the bar the fold cleared, and
// whether the reader's session has since compacted, ended or retrieved the
// handle. Errors: ErrBadTarget, ErrNoFold, or a wrapped log error.
func Explain(ctx context.Context, log events.Log, target string) (Explanation, error) {
	handle, seq, err := ParseTarget(target)
	if err != nil {
		return Explanation{}, err
	}
	out := Explanation{Target: target, Folds: []FoldWhy{}}
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer dec.Close()

	// Pass 1: the folds, the invocations that made them, and the archives.
	var refs []*foldRef
	wanted := map[string]bool{}
	archives := map[string]*events.Archived{}
	if seq != 0 {
		batch, err := log.Get(ctx, seq)
		if errors.Is(err, events.ErrNotFound) {
			return out, fmt.Errorf("sequence %d: %w", seq, ErrNoFold)
		}
		if err != nil {
			return out, fmt.Errorf("explain: %w", err)
		}
		for _, ev := range batch {
			if ev.Kind == events.KindFolded && ev.Folded != nil {
				out.TotalFolds++
				if len(refs) < maxExplained {
					refs = append(refs, &foldRef{ev: ev})
					wanted[ev.Folded.Handle] = true
				}
			}
		}
	} else {
		wanted[handle] = true
	}
	invocations := map[events.Seq]*events.Event{} // the Emitted event of each folding batch
	archivedAt := map[string]events.Seq{}
	distiller := map[events.Seq]string{}
	err = log.Read(ctx, 0, func(ev events.Event) error {
		switch ev.Kind {
		case events.KindArchived:
			if a := ev.Archived; a != nil && wanted[a.Handle] && archives[a.Handle] == nil {
				archives[a.Handle] = a
				archivedAt[a.Handle] = ev.Seq
			}
		case events.KindDistilled:
			if d := ev.Distilled; d != nil && archivedAt[handle] == ev.Seq {
				distiller[ev.Seq] = d.Distiller
			}
		case events.KindFolded:
			if seq == 0 && ev.Folded != nil && ev.Folded.Handle == handle {
				out.TotalFolds++
				if len(refs) < maxExplained {
					refs = append(refs, &foldRef{ev: ev})
				}
			}
		case events.KindEmitted:
			for _, r := range refs {
				if r.ev.Seq == ev.Seq {
					e := ev
					invocations[ev.Seq] = &e
					break
				}
			}
		}
		if seq != 0 && ev.Seq > seq && len(archives) == len(wanted) {
			return errStopRead
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopRead) {
		return out, fmt.Errorf("explain: %w", err)
	}
	if len(refs) == 0 {
		if seq != 0 {
			return out, fmt.Errorf("sequence %d: %w", seq, ErrNoFold)
		}
		if at, ok := archivedAt[handle]; ok {
			by := "the first-seen stages"
			if d := distiller[at]; d != "" {
				by = "the " + d + " distiller"
			}
			return out, fmt.Errorf("handle %s was archived at seq %d by %s, not by a ledger fold (omni diff %d shows that call): %w",
				handle, at, by, at, ErrNoFold)
		}
		return out, fmt.Errorf("handle %s: %w", handle, ErrNoFold)
	}
	for _, r := range refs {
		f := r.ev.Folded
		w := &FoldWhy{Seq: r.ev.Seq, Time: timeStr(r.ev.Time), Reader: r.ev.Reader().String(), Project: r.ev.Project,
			Marker: f.Marker, Scope: string(f.Scope), Handle: f.Handle, FirstLine: f.FirstLine, Lines: f.Lines,
			Bytes: f.Bytes, MarkerBytes: f.MarkerBytes, From: f.From, LedgerSource: f.Source,
			Deliveries: []Delivery{}, Retrieves: []Later{}}
		w.GainBytes = pipeline.DefaultBars.SessionGain
		if f.Scope == events.ScopeProject {
			w.GainBytes = pipeline.DefaultBars.ProjectGain
		}
		w.BarBytes = w.MarkerBytes + w.GainBytes
		w.Cleared = w.Bytes >= w.BarBytes
		if em := invocations[r.ev.Seq]; em != nil && em.Emitted != nil {
			w.Tool, w.Source, w.RawBytes = em.Emitted.Tool, em.Emitted.Source, em.Emitted.RawBytes
		}
		r.why = w
		r.keys, r.first, r.last = map[uint64]int{}, map[uint64]int{}, map[uint64]int64{}
		w.ArchiveMissing = archives[f.Handle] == nil
		if a := archives[f.Handle]; a != nil {
			data := a.Data
			if a.Codec == events.CodecZstd {
				if data, err = dec.DecodeAll(a.Data, nil); err != nil {
					return out, fmt.Errorf("explain: archive %s: %w", f.Handle, err)
				}
			}
			for _, ln := range pipeline.SplitLines(nil, string(data)) {
				if _, ok := r.keys[ln.Key]; ln.Key != 0 && !ok {
					r.keys[ln.Key] = len(r.list)
					r.list = append(r.list, ln.Key)
				}
			}
		}
		w.BlockLines = len(r.list)
	}

	// Pass 2: replay the deliveries before each fold; note what came after.
	var deliveries []Delivery
	var door string
	window := int64(ledger.Window / time.Second)
	err = log.Read(ctx, 0, func(ev events.Event) error {
		switch ev.Kind {
		case events.KindInvoked:
			if ev.Invoked != nil {
				door = string(ev.Invoked.Door)
			}
		case events.KindEmitted:
			em := ev.Emitted
			if em == nil || len(em.Lines) == 0 {
				return nil
			}
			now := ev.Time.Unix()
			di := -1
			for _, r := range refs {
				if ev.Seq >= r.ev.Seq {
					continue
				}
				session := r.ev.Folded.Scope != events.ScopeProject
				if session && ev.Reader() != r.ev.Reader() || !session && ev.Project != r.ev.Project {
					continue
				}
				for _, k := range em.Lines {
					if _, ok := r.keys[k]; !ok {
						continue
					}
					if old, ok := r.first[k]; ok && r.last[k] >= now-window {
						r.first[k], r.last[k] = old, now
						continue
					}
					if di < 0 {
						di = len(deliveries)
						deliveries = append(deliveries, Delivery{Seq: ev.Seq, Time: timeStr(ev.Time), Reader: ev.Reader().String(),
							Project: ev.Project, Door: door, Tool: em.Tool, Source: em.Source, LineSource: em.LineSource})
					}
					r.first[k], r.last[k] = di, now
				}
			}
		case events.KindCompacted:
			for _, r := range refs {
				if ev.Session != r.ev.Session {
					continue
				}
				if ev.Seq < r.ev.Seq {
					if r.ev.Folded.Scope != events.ScopeProject {
						clear(r.first)
						clear(r.last)
					}
				} else if ev.Seq > r.ev.Seq && r.why.Compacted == nil {
					what := ""
					if ev.Compacted != nil {
						what = ev.Compacted.Trigger
					}
					r.why.Compacted = &Later{Seq: ev.Seq, Time: timeStr(ev.Time), Reader: ev.Reader().String(), What: what}
				}
			}
		case events.KindRetrieved:
			rt := ev.Retrieved
			if rt == nil || !rt.Found {
				return nil
			}
			for _, r := range refs {
				if ev.Seq > r.ev.Seq && rt.Handle == r.ev.Folded.Handle && len(r.why.Retrieves) < maxExplained {
					r.why.Retrieves = append(r.why.Retrieves, Later{Seq: ev.Seq, Time: timeStr(ev.Time), Reader: ev.Reader().String()})
				}
			}
		case events.KindSessionEnded:
			for _, r := range refs {
				if ev.Seq > r.ev.Seq && ev.Session == r.ev.Session && r.why.Ended == nil {
					what := ""
					if ev.SessionEnded != nil {
						what = ev.SessionEnded.Reason
					}
					r.why.Ended = &Later{Seq: ev.Seq, Time: timeStr(ev.Time), Reader: ev.Reader().String(), What: what}
				}
			}
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("explain: %w", err)
	}
	for _, r := range refs {
		w := r.why
		cut := r.ev.Time.Unix() - window
		count := map[int]int{}
		firstDi := -1
		for _, k := range r.list {
			di, ok := r.first[k]
			if !ok || r.last[k] < cut {
				continue
			}
			w.TracedLines++
			count[di]++
			if firstDi < 0 {
				firstDi = di
			}
		}
		idx := make([]int, 0, len(count))
		for di := range count {
			idx = append(idx, di)
		}
		sort.Ints(idx) // deliveries are numbered in log order
		for _, di := range idx {
			d := deliveries[di]
			d.Lines = count[di]
			w.Deliveries = append(w.Deliveries, d)
			if di == firstDi {
				dd := d
				w.First = &dd
			}
		}
		out.Folds = append(out.Folds, *w)
	}
	return out, nil
}

var errStopRead = errors.New("explain: stop")

func timeStr(t time.Time) string { return t.UTC().Format(time.RFC3339) }
