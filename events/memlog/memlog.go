// Package memlog is an in-memory events.Log for tests, benchmarks and dry
// runs. Batches are kept encoded, exactly as a real store would hold them,
// so tests exercise the codec too.
package memlog

import (
	"context"
	"sync"

	"github.com/omnictx/omni/events"
)

// Log is an in-memory events.Log. The zero value is not usable; call New.
// It is safe for concurrent use.
type Log struct {
	mu      sync.RWMutex
	batches [][]byte // batches[i] holds Seq i+1
	first   events.Seq
	closed  bool
	// FailAppend, when set, makes Append return its error (fault tests).
	FailAppend func(batch []events.Event) error
}

var _ events.Log = (*Log)(nil)

// New returns an empty log.
func New() *Log { return &Log{first: 1} }

// Append encodes batch and stores it under the next sequence.
func (l *Log) Append(ctx context.Context, batch []events.Event) (events.Seq, error) {
	if f := l.FailAppend; f != nil {
		if err := f(batch); err != nil {
			return 0, err
		}
	}
	b, err := events.Encode(batch)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, events.ErrClosed
	}
	l.batches = append(l.batches, b)
	return events.Seq(len(l.batches)), nil
}

var _ events.Conditional = (*Log)(nil)

// AppendAfter is Append when the newest batch is last (0: empty), else
// events.ErrConflict with nothing stored.
func (l *Log) AppendAfter(ctx context.Context, batch []events.Event, last events.Seq) (events.Seq, error) {
	if f := l.FailAppend; f != nil {
		if err := f(batch); err != nil {
			return 0, err
		}
	}
	b, err := events.Encode(batch)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, events.ErrClosed
	}
	if events.Seq(len(l.batches)) != last {
		return 0, events.ErrConflict
	}
	l.batches = append(l.batches, b)
	return events.Seq(len(l.batches)), nil
}

// Read calls fn for every event from seq from on, in order.
func (l *Log) Read(ctx context.Context, from events.Seq, fn func(events.Event) error) error {
	if from < l.first {
		from = l.first
	}
	for seq := from; ; seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.RLock()
		if l.closed {
			l.mu.RUnlock()
			return events.ErrClosed
		}
		if int(seq) > len(l.batches) {
			l.mu.RUnlock()
			return nil
		}
		b := l.batches[seq-1]
		l.mu.RUnlock()
		evs, err := events.Decode(b, seq)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

// Get returns the batch at seq.
func (l *Log) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, events.ErrClosed
	}
	if seq < l.first || int(seq) > len(l.batches) {
		return nil, events.ErrNotFound
	}
	return events.Decode(l.batches[seq-1], seq)
}

// Last returns the newest sequence, 0 when empty.
func (l *Log) Last(ctx context.Context) (events.Seq, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return events.Seq(len(l.batches)), nil
}

// First returns the oldest sequence, 0 when empty.
func (l *Log) First(ctx context.Context) (events.Seq, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.batches) == 0 {
		return 0, nil
	}
	return l.first, nil
}

var _ events.Rewriter = (*Log)(nil)

// Replace stores batch in place of the batch at seq (events.Rewriter).
func (l *Log) Replace(ctx context.Context, seq events.Seq, batch []events.Event) error {
	b, err := events.Encode(batch)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return events.ErrClosed
	}
	if seq < l.first || int(seq) > len(l.batches) {
		return events.ErrNotFound
	}
	l.batches[seq-1] = b
	return nil
}

// Close makes every later call fail with events.ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return nil
}

// Purge removes every batch with a sequence below before (physical
// retention, omni gc); sequences are never reused, First reports the new
// start, and Get of a removed batch is events.ErrNotFound. The newest
// batch is never removed: before is capped at Last.
func (l *Log) Purge(ctx context.Context, before events.Seq) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return events.ErrClosed
	}
	before = min(before, events.Seq(len(l.batches)))
	for ; l.first < before; l.first++ {
		l.batches[l.first-1] = nil
	}
	return nil
}
