// Package replay folds an event log into projections. It imports events
// only and declares the one method it needs of a projection, so any fold
// (ledger, stats, session, a test's) can be rebuilt from the log at any
// sequence.
package replay

import (
	"context"
	"errors"

	"github.com/omnictx/omni/events"
)

// Projection is a pure fold step: Apply must touch only the projection's own
// in-memory state, with no I/O and no clock.
type Projection interface {
	Apply(events.Event)
}

var errStop = errors.New("replay: stop")

// Fold applies, in log order, every event with from <= Seq < to to every
// projection (to 0 means up to the end), and returns the sequence of the
// last batch applied (0 if none). Each event is applied to the projections
// in the order given.
func Fold(ctx context.Context, log events.Log, from, to events.Seq, ps ...Projection) (events.Seq, error) {
	var last events.Seq
	err := log.Read(ctx, from, func(e events.Event) error {
		if to != 0 && e.Seq >= to {
			return errStop
		}
		for _, p := range ps {
			p.Apply(e)
		}
		last = e.Seq
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return last, err
	}
	return last, nil
}

// Batches calls fn once per batch, in order, with the batch's events, for
// every batch with from <= Seq < to (to 0 means to the end). fn sees a batch
// before the caller applies it anywhere, which is what a verifier needs:
// decide with the state before the batch, then apply it.
func Batches(ctx context.Context, log events.Log, from, to events.Seq, fn func([]events.Event) error) error {
	var cur []events.Event
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b := cur
		cur = nil
		return fn(b)
	}
	err := log.Read(ctx, from, func(e events.Event) error {
		if to != 0 && e.Seq >= to {
			return errStop
		}
		if len(cur) > 0 && cur[0].Seq != e.Seq {
			if err := flush(); err != nil {
				return err
			}
		}
		cur = append(cur, e)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	return flush()
}
