package hooks

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/replay"
)

// CheckpointVersion is the first byte of an encoded Checkpoint. Bump it
// whenever a projection's fold or snapshot layout changes, so that a
// checkpoint written by another build is ignored (folded from the log)
// instead of trusted.
const CheckpointVersion byte = 3

// Checkpoint is the Engine's projections as they were after folding every
// batch up to and including Seq.
type Checkpoint struct {
	// Seq is the newest batch folded into the projections.
	Seq events.Seq
	// FirstID is the ID of the first event of batch Seq: a log that was
	// replaced (a new store at the same path) does not hold it there.
	FirstID string
	// Ledger, Stats and Session are the projections' MarshalBinary bytes.
	Ledger, Stats, Session []byte
	// NextID is set on a base snapshot (omni gc): batch Seq was removed, and
	// NextID is the ID of the first event of batch Seq+1, the oldest one
	// kept, so a base is only ever used on the log it was cut from.
	NextID string
}

// ErrBadCheckpoint wraps every reason a checkpoint's bytes cannot be used.
var ErrBadCheckpoint = errors.New("bad checkpoint")

// Checkpoint snapshots the projections: their state is copied under the
// Engine's lock and encoded after it is released. It fails when nothing was
// folded yet (Seq 0: there is nothing to save).
func (e *Engine) Checkpoint() (Checkpoint, error) {
	e.mu.Lock()
	if e.dry {
		e.mu.Unlock()
		return Checkpoint{}, errors.New("checkpoint: a replaying engine has no log state")
	}
	if e.applied == 0 {
		e.mu.Unlock()
		return Checkpoint{}, errors.New("checkpoint: empty log")
	}
	cp := Checkpoint{Seq: e.applied, FirstID: e.firstID}
	ls, ss, xs := e.ledger.Snapshot(), e.stats.Snapshot(), e.session.Snapshot()
	e.mu.Unlock()
	var err error
	if cp.Ledger, err = ls.Encode(); err != nil {
		return Checkpoint{}, err
	}
	if cp.Stats, err = ss.Encode(); err != nil {
		return Checkpoint{}, err
	}
	if cp.Session, err = xs.Encode(); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}

// Applied returns the sequence of the newest batch folded into the
// projections.
func (e *Engine) Applied() events.Seq {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applied
}

// checkpointWire is Checkpoint without its methods, so gob encodes its
// fields instead of calling MarshalBinary again.
type checkpointWire Checkpoint

// Restored returns the sequence of the checkpoint the Engine started from,
// 0 when it folded the whole log.
func (e *Engine) Restored() events.Seq {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restored
}

// MarshalBinary encodes the checkpoint: CheckpointVersion, then gob.
func (cp Checkpoint) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte(CheckpointVersion)
	if err := gob.NewEncoder(&b).Encode(checkpointWire(cp)); err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded. Errors wrap
// ErrBadCheckpoint.
func (cp *Checkpoint) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty", ErrBadCheckpoint)
	}
	if data[0] != CheckpointVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBadCheckpoint, data[0], CheckpointVersion)
	}
	var x checkpointWire
	if err := gob.NewDecoder(bytes.NewReader(data[1:])).Decode(&x); err != nil {
		return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	*cp = Checkpoint(x)
	return nil
}

// NewFromCheckpoint is New starting from cp: when cp is valid for log (its
// batch Seq is in the log and starts with the event FirstID) the
// projections are restored from it and only the batches after Seq are
// folded; otherwise (cp nil, stale, corrupt, from another log) it is
// ignored, said through opt.Logf, and the whole log is folded. The result
// is the same state a full fold gives.
func NewFromCheckpoint(ctx context.Context, log events.Log, opt Options, cp *Checkpoint) (*Engine, error) {
	if cp == nil {
		return New(ctx, log, opt)
	}
	e := newEngine(log, opt)
	if err := e.restore(ctx, cp); err != nil {
		e.opt.Logf("checkpoint ignored: %v", err)
		return New(ctx, log, opt)
	}
	if cp.NextID != "" {
		e.opt.Logf("checkpoint ignored: it is a base snapshot")
		return New(ctx, log, opt)
	}
	if _, err := replay.Fold(ctx, log, cp.Seq+1, 0, e.ledger, e.stats, e.session, (*batchMark)(e)); err != nil {
		return nil, fmt.Errorf("fold log after checkpoint %d: %w", cp.Seq, err)
	}
	return e, nil
}

// restore validates cp against the log and loads its projections.
func (e *Engine) restore(ctx context.Context, cp *Checkpoint) error {
	if cp.Seq == 0 {
		return fmt.Errorf("%w: sequence 0", ErrBadCheckpoint)
	}
	batch, err := e.log.Get(ctx, cp.Seq)
	if err != nil {
		return fmt.Errorf("%w: batch %d: %v", ErrBadCheckpoint, cp.Seq, err)
	}
	if len(batch) == 0 || batch[0].ID != cp.FirstID {
		return fmt.Errorf("%w: batch %d is not the one it was taken at (another log?)", ErrBadCheckpoint, cp.Seq)
	}
	if err := e.load(cp); err != nil {
		return err
	}
	e.applied, e.restored, e.firstID = cp.Seq, cp.Seq, cp.FirstID
	return nil
}

// load replaces the projections with cp's.
func (e *Engine) load(cp *Checkpoint) error {
	if err := e.ledger.UnmarshalBinary(cp.Ledger); err != nil {
		return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if err := e.stats.UnmarshalBinary(cp.Stats); err != nil {
		return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if err := e.session.UnmarshalBinary(cp.Session); err != nil {
		return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if e.ledger.Last() > cp.Seq {
		return fmt.Errorf("%w: ledger is at %d, past the checkpoint's %d", ErrBadCheckpoint, e.ledger.Last(), cp.Seq)
	}
	return nil
}

// batchMark is a projection recording the newest batch folded into the
// Engine (applied, firstID).
type batchMark Engine

// Apply notes ev's batch as the newest folded (replay.Projection).
func (m *batchMark) Apply(ev events.Event) {
	if ev.Seq > m.applied {
		m.applied, m.firstID = ev.Seq, ev.ID
	}
}
