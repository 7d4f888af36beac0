// Package stats is the savings projection: a pure fold over the event log
// into byte and call totals per tool and per marker kind. It imports events
// and the standard library only; every figure can be traced to the Emitted
// and Folded events that made it.
package stats

import (
	"sort"

	"github.com/omnictx/omni/events"
)

// Totals are byte and call counts over one population of Emitted events.
type Totals struct {
	// Calls counts invocations; Replied those whose text was changed.
	Calls, Replied int
	// RawBytes is what the hosts produced; DeliveredBytes what the model read.
	RawBytes, DeliveredBytes int64
	// RepeatBytes is the available repetition: bytes of non-blank lines the
	// reader had already been delivered.
	RepeatBytes int64
	// Failed counts failure-path calls; Unrecorded those the host did not show.
	Failed, Unrecorded int
}

// SavedBytes is RawBytes - DeliveredBytes: bytes that never reached the model.
func (t Totals) SavedBytes() int64 { return t.RawBytes - t.DeliveredBytes }

// FoldTotals count folds of one marker kind.
type FoldTotals struct {
	Folds int
	// Lines and Bytes measure what the folds replaced; MarkerBytes what
	// replaced it.
	Lines       int
	Bytes       int64
	MarkerBytes int64
	// Retrieved counts Retrieved events naming a handle of this kind.
	Retrieved int
}

// Stats is the fold state. Not safe for concurrent use.
type Stats struct {
	All     Totals
	ByTool  map[string]*Totals
	ByFold  map[string]*FoldTotals
	handles map[string]string // handle -> marker kind of its first fold
	// Compactions counts Compacted events.
	Compactions int
}

// New returns empty stats.
func New() *Stats {
	return &Stats{ByTool: map[string]*Totals{}, ByFold: map[string]*FoldTotals{}, handles: map[string]string{}}
}

// Apply folds one event; unknown kinds are ignored.
func (s *Stats) Apply(e events.Event) {
	switch e.Kind {
	case events.KindEmitted:
		em := e.Emitted
		if em == nil {
			return
		}
		t := s.ByTool[em.Tool]
		if t == nil {
			t = &Totals{}
			s.ByTool[em.Tool] = t
		}
		for _, x := range []*Totals{&s.All, t} {
			x.Calls++
			if em.Replied {
				x.Replied++
			}
			x.RawBytes += int64(em.RawBytes)
			x.DeliveredBytes += int64(em.DeliveredBytes)
			x.RepeatBytes += int64(em.RepeatBytes)
			if em.Failed {
				x.Failed++
			}
			if em.Unrecorded {
				x.Unrecorded++
			}
		}
	case events.KindFolded:
		f := e.Folded
		if f == nil {
			return
		}
		ft := s.ByFold[f.Marker]
		if ft == nil {
			ft = &FoldTotals{}
			s.ByFold[f.Marker] = ft
		}
		ft.Folds++
		ft.Lines += f.Lines
		ft.Bytes += int64(f.Bytes)
		ft.MarkerBytes += int64(f.MarkerBytes)
		if _, ok := s.handles[f.Handle]; !ok {
			s.handles[f.Handle] = f.Marker
		}
	case events.KindRetrieved:
		if r := e.Retrieved; r != nil && r.Found {
			if k, ok := s.handles[r.Handle]; ok {
				s.ByFold[k].Retrieved++
			}
		}
	case events.KindCompacted:
		s.Compactions++
	}
}

// Tools returns the tool names in ByTool, sorted.
func (s *Stats) Tools() []string {
	out := make([]string, 0, len(s.ByTool))
	for k := range s.ByTool {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
