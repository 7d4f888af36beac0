package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/omnictx/omni/events"
)

// ErrUnreachable: the cluster behind a store opened with Options.URL does
// not answer now (disconnected, or an operation failed within the last
// back-off). Nothing was sent; the caller fails open at once instead of
// waiting out a deadline on every call.
var ErrUnreachable = errors.New("the cluster does not answer")

const (
	// remoteOpTimeout bounds an append or a get on a cluster: under the
	// hook's 4 s deadline (cmd/omni hookDeadline), so the daemon answers
	// "pass through" before the hook gives up.
	remoteOpTimeout = 2 * time.Second
	// minBackoff and maxBackoff bound the back-off after a failed
	// operation: the first failure waits 1 s before the next try, each
	// further one doubles it up to 30 s.
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// gate is the back-off of a store on a cluster.
type gate struct {
	mu      sync.Mutex
	until   time.Time     // operations fail at once before this
	backoff time.Duration // the current back-off, 0 when healthy
	why     string        // the failure that set until
	skipped atomic.Int64  // operations refused without a try
	onState func(down bool, why string)
}

// allow returns ErrUnreachable (wrapped, with the reason) when the store is
// on a cluster that is disconnected or inside its back-off; nil otherwise
// (and always for an embedded store).
func (st *Store) allow() error {
	if st.remote == nil {
		return nil
	}
	g := &st.remote.gate
	if s := st.nc.Status(); s != nats.CONNECTED {
		g.skipped.Add(1)
		return fmt.Errorf("%w: connection %s", ErrUnreachable, s)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if wait := time.Until(g.until); wait > 0 {
		g.skipped.Add(1)
		return fmt.Errorf("%w: %s (next try in %s)", ErrUnreachable, g.why, wait.Round(time.Millisecond))
	}
	return nil
}

// observe records the outcome of one operation on a cluster: a failure
// other than a conflict or the caller's own cancellation starts (or
// doubles) the back-off; a success ends it.
func (st *Store) observe(err error) {
	if st.remote == nil || errors.Is(err, events.ErrConflict) || errors.Is(err, context.Canceled) {
		return
	}
	g := &st.remote.gate
	g.mu.Lock()
	var changed, down bool
	var why string
	if err == nil {
		changed = g.backoff != 0
		g.backoff, g.until, g.why = 0, time.Time{}, ""
	} else {
		changed = g.backoff == 0
		g.backoff = min(max(2*g.backoff, minBackoff), maxBackoff)
		g.until = time.Now().Add(g.backoff)
		g.why, why, down = err.Error(), err.Error(), true
	}
	f := g.onState
	g.mu.Unlock()
	if changed && f != nil {
		f(down, why)
	}
}

// remoteContext bounds an operation on a cluster by remoteOpTimeout (2 s)
// or ctx's earlier deadline; an embedded store gets opContext.
func (st *Store) remoteContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if st.remote == nil {
		return opContext(ctx)
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < remoteOpTimeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, remoteOpTimeout)
}

// Unavailable returns why operations on the cluster fail at once now
// (ErrUnreachable, wrapped), nil when they are tried (and always for an
// embedded store). It costs no round trip.
func (st *Store) Unavailable() error {
	if st.remote == nil {
		return nil
	}
	g := &st.remote.gate
	if s := st.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("%w: connection %s", ErrUnreachable, s)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if wait := time.Until(g.until); wait > 0 {
		return fmt.Errorf("%w: %s (next try in %s)", ErrUnreachable, g.why, wait.Round(time.Millisecond))
	}
	return nil
}

// Skipped returns how many operations the back-off refused without trying
// them (0 for an embedded store).
func (st *Store) Skipped() int64 {
	if st.remote == nil {
		return 0
	}
	return st.remote.gate.skipped.Load()
}

// OnClusterState sets f to be called when a store on a cluster starts
// failing operations at once (down true, with the failure) and when an
// operation succeeds again (down false): one call per change, for the log.
func (st *Store) OnClusterState(f func(down bool, why string)) {
	if st.remote == nil {
		return
	}
	st.remote.gate.mu.Lock()
	st.remote.gate.onState = f
	st.remote.gate.mu.Unlock()
}
