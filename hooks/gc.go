package hooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omnictx/omni/events"
)

// Purger is a log that can remove its oldest batches (events/jetstream,
// events/memlog).
type Purger interface {
	Purge(ctx context.Context, before events.Seq) error
}

// ErrNoPurge: the log cannot remove batches.
var ErrNoPurge = errors.New("this log cannot remove batches")

// GCPlan is what GC decided.
type GCPlan struct {
	// Cutoff is the retention time asked for; Before the first sequence kept
	// (0 when nothing is old enough); First and Last the log's range before.
	Cutoff              time.Time
	Before, First, Last events.Seq
}

// PlanGC finds the first batch whose time is at or after cutoff and appends
// a Pruned event naming it, so the projections forget the handles archived
// below it. It removes nothing: the caller writes a checkpoint (the log
// below Before is about to go, and only a checkpoint holds what it
// taught), then calls Purge. Before is 0 when no batch is older than
// cutoff. Errors: the log's, wrapped.
func (e *Engine) PlanGC(ctx context.Context, cutoff time.Time) (GCPlan, error) {
	p := GCPlan{Cutoff: cutoff.UTC()}
	var err error
	if p.First, err = e.log.First(ctx); err != nil {
		return p, fmt.Errorf("gc: %w", err)
	}
	if p.Last, err = e.log.Last(ctx); err != nil {
		return p, fmt.Errorf("gc: %w", err)
	}
	stop := errors.New("stop")
	var before events.Seq
	err = e.log.Read(ctx, p.First, func(ev events.Event) error {
		if !ev.Time.Before(cutoff) {
			before = ev.Seq
			return stop
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return p, fmt.Errorf("gc: %w", err)
	}
	if before == 0 {
		before = p.Last + 1 // everything is older than the cutoff
	}
	if before <= p.First {
		return p, nil
	}
	p.Before = before
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opt.Now().UTC()
	ev := events.Event{ID: e.newID(now), Kind: events.KindPruned, Time: now,
		Pruned: &events.Pruned{Before: before, Cutoff: p.Cutoff}}
	if err := e.append(ctx, []events.Event{ev}); err != nil {
		return p, fmt.Errorf("gc: record: %w", err)
	}
	return p, nil
}
