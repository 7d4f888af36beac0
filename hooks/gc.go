package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/replay"
)

// Physical retention (omni gc --before). The log has no age
// limit: replay needs it. gc removes the oldest batches only together with
// a base snapshot, the projections' state just below the cutoff, so that
// the retained batches still fold, replay and verify exactly as before. In
// order, each step safe to interrupt:
//
//  1. fold the batches below the cutoff into a fresh (dry) Engine, starting
//     from the current base when an earlier gc left one;
//  2. save that state as the new base (GCOptions.SaveBase); a failure stops
//     gc with nothing changed;
//  3. append a Pruned batch naming the blocks archived below the cutoff
//     that a retained batch still names, with Archived events storing them
//     again above it: no retained marker ever names removed bytes;
//  4. remove the batches below the cutoff (Purger).
//
// A crash after 2 leaves a base nobody uses yet; after 3, kept blocks
// stored twice (content-addressed, harmless) and the rest forgotten by the
// ledger, so a later fold archives them anew.

// Purger is a log that can remove its oldest batches (events/jetstream,
// events/memlog).
type Purger interface {
	// Purge removes every batch with a sequence below before, never the
	// newest one.
	Purge(ctx context.Context, before events.Seq) error
}

// BaseLoader returns the base snapshot saved by omni gc for a log whose
// oldest retained batch is first: nil, nil when none is stored.
type BaseLoader func(first events.Seq) (*Checkpoint, error)

// Errors of the retention path.
var (
	// ErrNoPurge: the log cannot remove batches.
	ErrNoPurge = errors.New("this log cannot remove batches")
	// ErrNoBase: omni gc removed the log's oldest batches and the base
	// snapshot that stands for them is missing or unusable, so the
	// projections cannot be rebuilt exactly.
	ErrNoBase = errors.New("the batches before the retained range were removed by omni gc and their base snapshot is missing")
)

// gcBatchBytes caps the compressed archive bytes per batch gc appends,
// well under the store's 32 MiB message limit (events/jetstream).
const gcBatchBytes = 8 << 20

// GCOptions are the steps of GC that live outside the Engine.
type GCOptions struct {
	// Base loads the current base when the log no longer starts at 1.
	Base BaseLoader
	// SaveBase stores the new base snapshot durably before anything is
	// appended or removed. Required unless DryRun.
	SaveBase func(Checkpoint) error
	// DryRun reports what would be removed and changes nothing.
	DryRun bool
	// Progress, if set, is called after each batch folded into the base.
	Progress func(seq, last events.Seq)
}

// GCPlan is what GC found and did.
type GCPlan struct {
	// Cutoff is the retention time asked for (UTC).
	Cutoff time.Time `json:"cutoff"`
	// First and Last are the log's range before gc.
	First events.Seq `json:"first"`
	Last  events.Seq `json:"last"`
	// Before is the oldest sequence kept; 0 when no batch is old enough.
	// The newest batch is always kept.
	Before events.Seq `json:"before"`
	// Removed is the number of batches removed (or, in a dry run, that
	// would be).
	Removed int `json:"removed"`
	// Kept and KeptBytes count the blocks archived below Before that a
	// retained batch names, stored again above it (bytes uncompressed).
	Kept      int   `json:"kept"`
	KeptBytes int64 `json:"kept_bytes"`
	// Forgotten counts the archived blocks below Before that nothing
	// retained names: their handles no longer retrieve.
	Forgotten int `json:"forgotten"`
	// DryRun is true when nothing was changed.
	DryRun bool `json:"dry_run,omitempty"`
}

// GC removes the batches older than cutoff (see the steps above). The
// Engine must own the log (the daemon's, or an in-process one under the
// store lock); hooks keep running meanwhile and wait only during step 3.
// Errors: ErrNoPurge, ErrNoBase, SaveBase's, the log's; on any error
// before step 4 nothing was removed.
func (e *Engine) GC(ctx context.Context, cutoff time.Time, o GCOptions) (GCPlan, error) {
	e.gcMu.Lock() // one gc at a time: each one's base must match the log it leaves
	defer e.gcMu.Unlock()
	p := GCPlan{Cutoff: cutoff.UTC(), DryRun: o.DryRun}
	pr, ok := e.log.(Purger)
	if !ok {
		return p, ErrNoPurge
	}
	var err error
	if p.First, err = e.log.First(ctx); err != nil {
		return p, fmt.Errorf("gc: %w", err)
	}
	if p.Last, err = e.log.Last(ctx); err != nil {
		return p, fmt.Errorf("gc: %w", err)
	}
	if p.First == 0 {
		return p, nil
	}
	// 1. The state below the cutoff, folded batch by batch until the first
	// batch at or after it.
	b := newEngine(e.log, Options{})
	b.dry = true
	if err := b.loadBase(ctx, p.First, o.Base); err != nil {
		return p, fmt.Errorf("gc: %w", err)
	}
	stop := errors.New("stop")
	var nextID string
	err = replay.Batches(ctx, e.log, p.First, p.Last, func(batch []events.Event) error {
		if !batch[0].Time.Before(cutoff) {
			p.Before, nextID = batch[0].Seq, batch[0].ID
			return stop
		}
		b.apply(batch)
		if o.Progress != nil {
			o.Progress(batch[0].Seq, p.Last)
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return p, fmt.Errorf("gc: fold: %w", err)
	}
	if p.Before == 0 { // every batch but the newest is older than the cutoff
		last, err := e.log.Get(ctx, p.Last)
		if err != nil || len(last) == 0 {
			return p, fmt.Errorf("gc: read batch %d: %v", p.Last, err)
		}
		p.Before, nextID = p.Last, last[0].ID
	}
	if p.Before <= p.First {
		p.Before = 0
		return p, nil
	}
	p.Removed = int(p.Before - p.First)
	e.mu.Lock()
	kept := e.ledger.Kept(p.Before)
	p.Kept = len(kept)
	for _, h := range kept {
		b, _ := e.ledger.Block(h)
		p.KeptBytes += int64(b.Bytes)
	}
	p.Forgotten = e.ledger.Below(p.Before) - len(kept)
	e.mu.Unlock()
	if o.DryRun {
		return p, nil
	}
	// 2. The base: the state after batch Before-1.
	base := Checkpoint{Seq: p.Before - 1, NextID: nextID}
	ls, ss, xs := b.ledger.Snapshot(), b.stats.Snapshot(), b.session.Snapshot()
	if base.Ledger, err = ls.Encode(); err == nil {
		if base.Stats, err = ss.Encode(); err == nil {
			base.Session, err = xs.Encode()
		}
	}
	if err != nil {
		return p, fmt.Errorf("gc: encode base: %w", err)
	}
	if o.SaveBase == nil {
		return p, errors.New("gc: no place to save the base snapshot")
	}
	if err := o.SaveBase(base); err != nil {
		return p, fmt.Errorf("gc: save base (nothing removed): %w", err)
	}
	// 3. Keep what retained batches name, then record the cut.
	if p.Kept, p.KeptBytes, err = e.keep(ctx, p); err != nil {
		return p, fmt.Errorf("gc: keep blocks (nothing removed): %w", err)
	}
	// 4. Remove.
	if err := pr.Purge(ctx, p.Before); err != nil {
		return p, fmt.Errorf("gc: remove batches below %d: %w", p.Before, err)
	}
	return p, nil
}

// keep appends the Pruned batch and the Archived events that store the
// kept blocks again, under the Engine's lock (so no hook names a block
// between the list and the cut), and returns the kept blocks and bytes.
// On a shared log another machine may have named a block in a batch this
// Engine has not folded yet, so its first batch is appended only after
// the newest batch folded (appendAtHead): when another writer appended
// first, their batches are folded and the list is made again (at most
// maxRedecide rounds).
func (e *Engine) keep(ctx context.Context, p GCPlan) (int, int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for round := 0; ; round++ {
		n, total, err := e.keepOnce(ctx, p)
		if !errors.Is(err, errStale) || round == maxRedecide {
			return n, total, err
		}
	}
}

// keepOnce is one round of keep; e.mu is held. errStale: another writer
// appended before the Pruned batch (nothing was stored; their batches are
// folded now).
func (e *Engine) keepOnce(ctx context.Context, p GCPlan) (int, int64, error) {
	kept := e.ledger.Kept(p.Before)
	now := e.opt.Now().UTC()
	batch := []events.Event{{ID: e.newID(now), Kind: events.KindPruned, Time: now,
		Pruned: &events.Pruned{Before: p.Before, Cutoff: p.Cutoff, Kept: kept}}}
	size, total := 0, int64(0)
	// The first batch (the Pruned event's) goes at the log's head; the
	// rest follow it.
	first := true
	appendKept := func(ctx context.Context, batch []events.Event) error {
		if first {
			first = false
			return e.appendAtHead(ctx, batch)
		}
		return e.append(ctx, batch)
	}
	for _, h := range kept {
		blk, _ := e.ledger.Block(h)
		evs, err := e.log.Get(ctx, blk.Seq)
		if err != nil {
			return 0, total, fmt.Errorf("read archive %s: %w", h, err)
		}
		if blk.Index >= len(evs) || evs[blk.Index].Archived == nil || evs[blk.Index].Archived.Handle != h {
			return 0, total, fmt.Errorf("read archive %s: event %d.%d is not its Archived event", h, blk.Seq, blk.Index)
		}
		a := *evs[blk.Index].Archived
		if size > 0 && size+len(a.Data) > gcBatchBytes {
			if err := appendKept(ctx, batch); err != nil {
				return 0, total, err
			}
			batch, size = nil, 0
		}
		// The copy keeps the project and session it was archived in (a
		// scoped retrieve asks for them).
		batch = append(batch, events.Event{ID: e.newID(now), Kind: events.KindArchived, Time: now, Archived: &a,
			Project: evs[blk.Index].Project, Session: evs[blk.Index].Session})
		size += len(a.Data)
		total += int64(a.Bytes)
	}
	return len(kept), total, appendKept(ctx, batch)
}

// appendAtHead is append, except on a shared log (Options.Shared, a log
// implementing events.Conditional), where batch is appended only if the
// newest batch folded is still the log's newest; when another writer
// appended first, their batches are folded and it returns errStale
// (nothing stored). e.mu is held.
func (e *Engine) appendAtHead(ctx context.Context, batch []events.Event) error {
	c, ok := e.log.(events.Conditional)
	if e.dry || !e.opt.Shared || !ok {
		return e.append(ctx, batch)
	}
	e.stampOrigin(batch)
	seq, err := c.AppendAfter(ctx, batch, e.applied)
	if errors.Is(err, events.ErrConflict) {
		if err := e.catchUp(ctx, 0); err != nil {
			return fmt.Errorf("fold other writers' batches: %w", err)
		}
		return errStale
	}
	if err != nil {
		return err
	}
	e.stored(batch, seq)
	e.apply(batch)
	return nil
}

// loadBase prepares fresh projections for a log whose oldest batch is
// first: nothing to do when first is 0 or 1; otherwise the base snapshot
// saved by omni gc, which must have been cut exactly there. Errors wrap
// ErrNoBase.
func (e *Engine) loadBase(ctx context.Context, first events.Seq, load BaseLoader) error {
	if first <= 1 {
		return nil
	}
	if load == nil {
		return fmt.Errorf("%w (the log starts at %d)", ErrNoBase, first)
	}
	cp, err := load(first)
	if err != nil {
		return fmt.Errorf("%w (the log starts at %d): %v", ErrNoBase, first, err)
	}
	if cp == nil {
		return fmt.Errorf("%w (the log starts at %d)", ErrNoBase, first)
	}
	if cp.Seq+1 != first || cp.NextID == "" {
		return fmt.Errorf("%w: the base stands for batches up to %d, the log starts at %d", ErrNoBase, cp.Seq, first)
	}
	batch, err := e.log.Get(ctx, first)
	if err != nil {
		return fmt.Errorf("%w: read batch %d: %v", ErrNoBase, first, err)
	}
	if len(batch) == 0 || batch[0].ID != cp.NextID {
		return fmt.Errorf("%w: batch %d is not the one the base was cut before (another log?)", ErrNoBase, first)
	}
	if err := e.load(cp); err != nil {
		return fmt.Errorf("%w: %v", ErrNoBase, err)
	}
	return nil
}

// foldAll folds the whole retained log into e's projections (and ps),
// starting from the base when the log no longer starts at 1.
func (e *Engine) foldAll(ctx context.Context, to events.Seq, load BaseLoader, ps ...replay.Projection) error {
	first, err := e.log.First(ctx)
	if err != nil {
		return err
	}
	if err := e.loadBase(ctx, first, load); err != nil {
		return err
	}
	all := append([]replay.Projection{e.ledger, e.stats, e.session}, ps...)
	_, err = replay.Fold(ctx, e.log, first, to, all...)
	return err
}

// RecordLost appends a Lost event for the batches in seqs that the ledger
// does not already know as lost, so the blocks archived in them are
// forgotten (a later fold archives them anew instead of naming bytes the
// store cannot read). It returns the sequences recorded now. Errors: the
// log's.
func (e *Engine) RecordLost(ctx context.Context, seqs []events.Seq, reason string) ([]events.Seq, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	known := map[events.Seq]bool{}
	for _, q := range e.ledger.LostSeqs() {
		known[q] = true
	}
	var fresh []events.Seq
	for _, q := range seqs {
		if !known[q] {
			known[q] = true
			fresh = append(fresh, q)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	slices.Sort(fresh)
	now := e.opt.Now().UTC()
	ev := events.Event{ID: e.newID(now), Kind: events.KindLost, Time: now, Lost: &events.Lost{Seqs: fresh, Reason: reason}}
	if err := e.append(ctx, []events.Event{ev}); err != nil {
		return nil, fmt.Errorf("record lost batches: %w", err)
	}
	return fresh, nil
}

// LostSeqs returns, sorted, the sequences recorded as lost (Lost events).
func (e *Engine) LostSeqs() []events.Seq {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ledger.LostSeqs()
}

// EmptyBase returns a base snapshot of empty projections for a log whose
// oldest retained batch is first: the recovery when the base omni gc saved
// is lost or damaged. What the removed batches taught is gone, so replay of
// the retained range folds from nothing and may differ where they
// mattered; hooks, replay and gc work again. Errors: the log's, wrapped.
func EmptyBase(ctx context.Context, log events.Log, first events.Seq) (Checkpoint, error) {
	batch, err := log.Get(ctx, first)
	if err != nil || len(batch) == 0 {
		return Checkpoint{}, fmt.Errorf("empty base: read batch %d: %v", first, err)
	}
	e := newEngine(log, Options{})
	cp := Checkpoint{Seq: first - 1, NextID: batch[0].ID}
	if cp.Ledger, err = e.ledger.MarshalBinary(); err == nil {
		if cp.Stats, err = e.stats.MarshalBinary(); err == nil {
			cp.Session, err = e.session.MarshalBinary()
		}
	}
	return cp, err
}
