package hooks

import (
	"context"
	"errors"
	"fmt"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/replay"
)

// ErrBeforeRetained: the sequence asked for was removed by omni gc.
var ErrBeforeRetained = errors.New("before the retained range (omni gc removed the older batches)")

// Replayed is the outcome of rerunning one recorded invocation.
type Replayed struct {
	// Seq is the batch of the invocation.
	Seq events.Seq `json:"seq"`
	// Door, Event and Tool describe it.
	Door  events.Door `json:"door"`
	Event string      `json:"event,omitempty"`
	Tool  string      `json:"tool,omitempty"`
	// Output is what the rerun printed (a hook reply, or the exec/pipe
	// text); base64 in JSON.
	Output []byte `json:"output"`
	// Want and Got are the SHA-256 of what was delivered and of Output.
	Want string `json:"want_sha256,omitempty"`
	Got  string `json:"got_sha256"`
	// Match reports Want == Got; Compared is false for invocations that
	// deliver nothing (compactions, session events) and for withheld ones.
	Match    bool `json:"match"`
	Compared bool `json:"compared"`
	// Withheld reports an invocation whose raw input was not stored because
	// it held credentials: it cannot be rerun.
	Withheld bool `json:"withheld,omitempty"`
}

// Replay rebuilds the projections from the batches before seq, reruns the
// decision of the invocation at seq with its recorded time and project, and
// reports whether the output is byte-identical to what was delivered.
//
// When omni gc removed the oldest batches, the state starts from the base
// snapshot base loads; a seq below the retained range is ErrBeforeRetained,
// and a missing base ErrNoBase (wrapped).
func Replay(ctx context.Context, log events.Log, seq events.Seq, base BaseLoader) (Replayed, error) {
	e := newEngine(log, Options{})
	e.dry = true
	if first, err := log.First(ctx); err != nil {
		return Replayed{}, err
	} else if seq < first {
		return Replayed{}, fmt.Errorf("%w: sequence %d, the log starts at %d", ErrBeforeRetained, seq, first)
	}
	batch, err := log.Get(ctx, seq)
	if err != nil {
		return Replayed{}, fmt.Errorf("read batch %d: %w", seq, err)
	}
	// The state the decision read: the batches up to the position it
	// recorded (a shared log), else every batch before it.
	to := seq
	if at := decidedAt(batch); at != 0 && at < seq {
		to = at + 1
	}
	if err := e.foldAll(ctx, to, base); err != nil {
		return Replayed{}, fmt.Errorf("fold before %d: %w", to, err)
	}
	return e.rerun(ctx, batch)
}

// decidedAt returns the position the batch's decision recorded
// (Invoked.At), 0 when none was recorded.
func decidedAt(batch []events.Event) events.Seq {
	for _, ev := range batch {
		if ev.Invoked != nil {
			return ev.Invoked.At
		}
	}
	return 0
}

// VerifySummary counts the outcome of Verify.
type VerifySummary struct {
	// Batches read; Invocations rerun; Compared those that delivered text;
	// Identical those whose rerun matched byte for byte; Withheld those whose
	// input was not stored (it held credentials).
	Batches     int `json:"batches"`
	Invocations int `json:"invocations"`
	Compared    int `json:"compared"`
	Identical   int `json:"identical"`
	Withheld    int `json:"withheld"`
	// Mismatches lists the sequences that did not match (at most 100).
	Mismatches []events.Seq `json:"mismatches"`
	// Missing lists sequences inside the retained range that the log could
	// not give back (a damaged store file; at most 100), MissingCount counts
	// them all. The log never removes a single batch, so each is a loss,
	// and the decisions after it may not replay exactly.
	Missing      []events.Seq `json:"missing,omitempty"`
	MissingCount int          `json:"missing_count,omitempty"`
	// RecordedLost counts the batches Lost events in the log record as
	// lost (omni gc --repair, or a truncation noticed at daemon start); the
	// gaps they explain are not in Missing.
	RecordedLost int `json:"recorded_lost,omitempty"`
}

// Verify reruns every invocation in the log against the state before it, in
// one pass, calling progress (if not nil) after each batch.
//
// When omni gc removed the oldest batches, it starts from the base snapshot
// base loads and covers the retained range; without one it fails with
// ErrNoBase (wrapped).
func Verify(ctx context.Context, log events.Log, base BaseLoader, progress func(seq events.Seq)) (VerifySummary, error) {
	e := newEngine(log, Options{})
	e.dry = true
	var s VerifySummary
	first, err := log.First(ctx)
	if err != nil {
		return s, err
	}
	last, err := log.Last(ctx)
	if err != nil {
		return s, err
	}
	if err := e.loadBase(ctx, first, base); err != nil {
		return s, err
	}
	next := first
	var gaps []events.Seq
	recorded := map[events.Seq]bool{}
	err = replay.Batches(ctx, log, first, 0, func(batch []events.Event) error {
		for q := next; q < batch[0].Seq; q++ {
			gaps = append(gaps, q)
		}
		next = batch[0].Seq + 1
		s.Batches++
		for _, ev := range batch {
			if ev.Lost != nil {
				s.RecordedLost += len(ev.Lost.Seqs)
				for _, q := range ev.Lost.Seqs {
					recorded[q] = true
				}
			}
		}
		if hasInvoked(batch) {
			var r Replayed
			var err error
			if at := decidedAt(batch); at != 0 && at+1 != batch[0].Seq {
				// Decided before other writers' batches that precede it in
				// the log (not how omni appends, but a log may hold it):
				// rebuild the state at its position.
				r, err = Replay(ctx, log, batch[0].Seq, base)
			} else {
				r, err = e.rerun(ctx, batch)
			}
			if err != nil {
				return err
			}
			s.Invocations++
			if r.Withheld {
				s.Withheld++
			}
			if r.Compared {
				s.Compared++
				if r.Match {
					s.Identical++
				} else if len(s.Mismatches) < 100 {
					s.Mismatches = append(s.Mismatches, batch[0].Seq)
				}
			}
		}
		e.apply(batch)
		if progress != nil {
			progress(batch[0].Seq)
		}
		return nil
	})
	for q := next; err == nil && first > 0 && q <= last; q++ {
		gaps = append(gaps, q)
	}
	// A gap a Lost event explains (recorded later, so known only now) is
	// a known loss, not a missing batch.
	for _, q := range gaps {
		if recorded[q] {
			continue
		}
		s.MissingCount++
		if len(s.Missing) < 100 {
			s.Missing = append(s.Missing, q)
		}
	}
	return s, err
}

func hasInvoked(batch []events.Event) bool {
	for _, ev := range batch {
		if ev.Kind == events.KindInvoked {
			return true
		}
	}
	return false
}

// rerun decides an invocation batch again (dry) against the engine's
// current state (rerunRecorded) and compares what it printed with what
// was delivered.
func (e *Engine) rerun(ctx context.Context, batch []events.Event) (Replayed, error) {
	rec, err := e.Recorded(batch)
	if err != nil {
		return Replayed{}, err
	}
	r := Replayed{Seq: rec.Seq, Door: rec.Door}
	if rec.Withheld != "" {
		r.Withheld = true
		return r, nil
	}
	res, out, err := e.rerunRecorded(ctx, rec)
	if err != nil {
		return r, err
	}
	r.Event, r.Tool, r.Output = res.Event, res.Tool, out
	r.Got = sha(r.Output)
	if rec.Emitted != nil {
		r.Compared = true
		r.Want = rec.Emitted.Output
		r.Match = r.Want == r.Got
	}
	return r, nil
}
