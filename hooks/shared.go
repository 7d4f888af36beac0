package hooks

import (
	"context"
	"errors"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/replay"
)

// maxRedecide bounds how many times one invocation is decided again because
// other writers of a shared log appended first: each round folds their
// batches, so only a steady stream of appends from other machines, faster
// than one decision, exhausts it; the invocation then fails open (the raw
// output passes and nothing is recorded).
const maxRedecide = 4

// followGapWait bounds the read a follower does when a batch arrives
// after a gap (Follow).
const followGapWait = 2 * time.Second

// errStale: another writer appended after the batch a decision was made
// at; its batches were folded, and the invocation must be decided again.
var errStale = errors.New("another writer appended first: decide again")

// stampOrigin sets the Engine's machine and user on the events of a batch
// about to be appended (events that carry one keep it).
func (e *Engine) stampOrigin(batch []events.Event) {
	if e.opt.Machine == "" && e.opt.User == "" {
		return
	}
	for i := range batch {
		if batch[i].Machine == "" {
			batch[i].Machine, batch[i].User = e.opt.Machine, e.opt.User
		}
	}
}

// appendDecision appends the batch of one decision, inv (its Invoked
// event) then evs. On a shared log (Options.Shared, a log implementing
// events.Conditional) it records the position the decision was made at in
// inv (Invoked.At, the newest batch folded) and appends only if that is
// still the log's newest batch; when another writer appended first it
// folds their batches and returns errStale, and the caller decides again
// with what they taught. Otherwise it is append.
func (e *Engine) appendDecision(ctx context.Context, inv *events.Event, evs []events.Event) error {
	if _, ok := e.log.(events.Conditional); ok && !e.dry && e.opt.Shared {
		inv.Invoked.At = e.applied
	}
	return e.appendAtHead(ctx, append([]events.Event{*inv}, evs...))
}

// catchUp folds, in order, every batch after the newest one folded, up to
// and including upto (0: to the log's end). Errors: the log's.
func (e *Engine) catchUp(ctx context.Context, upto events.Seq) error {
	to := events.Seq(0)
	if upto != 0 {
		if upto <= e.applied {
			return nil
		}
		to = upto + 1
	}
	// To the end: the log's newest batch before the read. Every batch up
	// to it is visited by the read; one it does not deliver (removed, or
	// rejected as forged on a team's stream) is passed over, so the next
	// conditional append expects the log's real last batch instead of
	// conflicting with an unreadable one forever.
	var last events.Seq
	if to == 0 {
		if l, err := e.log.Last(ctx); err == nil {
			last = l
		}
	}
	err := replay.Batches(ctx, e.log, e.applied+1, to, func(b []events.Event) error {
		e.apply(b)
		return nil
	})
	if err == nil && last > e.applied {
		e.applied = last
	}
	return err
}

// CatchUp folds every batch the log holds after the newest one the
// projections hold: the batches other machines appended to a shared log.
// Errors: the log's (the projections keep what was folded).
func (e *Engine) CatchUp(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.catchUp(ctx, 0)
}

// Follow folds one batch a follower of a shared log read (in log order,
// with Seq and Index set), unless the projections already hold it (the
// Engine's own appends, or a catch-up). A batch after a gap first folds
// the gap from the log; batches removed from the log (omni gc) leave a
// gap the read cannot fill, and the batch is folded after it.
func (e *Engine) Follow(batch []events.Event) {
	if len(batch) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	seq := batch[0].Seq
	if seq <= e.applied {
		return
	}
	if seq > e.applied+1 {
		ctx, cancel := context.WithTimeout(context.Background(), followGapWait)
		err := e.catchUp(ctx, seq-1)
		cancel()
		if err != nil {
			e.opt.Logf("follow: fold batches %d..%d: %v", e.applied+1, seq-1, err)
			return // a later batch, or the next decision's catch-up, retries
		}
		if seq <= e.applied {
			return
		}
	}
	e.apply(batch)
}
