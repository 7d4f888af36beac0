package hooks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// The tests here attack Engine.wrote, the shortcut that counts a block
// this Engine archived as read back: whatever removes or erases that
// batch afterwards (a lost batch, omni gc), a handle the Engine prints
// must still give its exact bytes back.

// lossyLog is a log that lost some batches: Get of a hidden sequence is
// events.ErrNotFound, as a damaged store answers.
type lossyLog struct {
	*memlog.Log
	hidden map[events.Seq]bool
}

func (l *lossyLog) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if l.hidden[seq] {
		return nil, events.ErrNotFound
	}
	return l.Log.Get(ctx, seq)
}

// retrievable fails t unless every handle r folded to retrieves as the
// block it stands for.
func retrievable(t *testing.T, e *Engine, r Result, what string) {
	t.Helper()
	if len(r.Folds) == 0 {
		t.Fatalf("%s: no fold", what)
	}
	for _, f := range r.Folds {
		got, err := e.Retrieve(context.Background(), f.Handle, events.Reader{Session: "s1"})
		if err != nil {
			t.Fatalf("%s: the printed handle %s does not come back: %v", what, f.Handle, err)
		}
		if string(got) != f.Block {
			t.Fatalf("%s: handle %s gives other bytes back", what, f.Handle)
		}
	}
}

// TestOwnArchiveLostThenFolded: a batch this Engine wrote (its block
// counted as read back by wrote) is lost and recorded so (RecordLost):
// the next fold archives the block anew, and its handle comes back.
func TestOwnArchiveLostThenFolded(t *testing.T) {
	log := &lossyLog{Log: memlog.New(), hidden: map[events.Seq]bool{}}
	e := i11Engine(t, log)
	out := i11Lines("lost", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	r2 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	retrievable(t, e, r2, "before the loss")
	b, ok := e.ledger.Block(r2.Folds[0].Handle)
	if !ok {
		t.Fatal("the folded block is not in the ledger")
	}
	log.hidden[b.Seq] = true
	if _, err := e.RecordLost(context.Background(), []events.Seq{b.Seq}, "test"); err != nil {
		t.Fatal(err)
	}
	r3 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	retrievable(t, e, r3, "after the loss")
}

// TestOwnArchiveUnrecordedLossReadBack: a batch this Engine wrote is lost
// without a Lost event (the store damaged under a running daemon). The
// shortcut never read it back, so the first fold after the loss prints a
// handle the store cannot give back unless the check reads the store: this
// spells out what wrote trusts (the store keeps what it acknowledged for
// the Engine's life), as readable did for a block it had read back once.
func TestOwnArchiveUnrecordedLossReadBack(t *testing.T) {
	log := &lossyLog{Log: memlog.New(), hidden: map[events.Seq]bool{}}
	e := i11Engine(t, log)
	out := i11Lines("dmg", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	r2 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	b, _ := e.ledger.Block(r2.Folds[0].Handle)
	log.hidden[b.Seq] = true
	// A restarted Engine (a new daemon) reads back before printing.
	e2 := i11Engine(t, log)
	r3 := i11Hook(t, e2, bashPayload("s1", "", "ls -R", out))
	retrievable(t, e2, r3, "a restarted Engine after an unrecorded loss")
}

// TestOwnArchiveAfterGC: omni gc removes the batches older than the
// cutoff, among them the one holding a block this Engine wrote (kept,
// since a later event names it: stored again above the cut); the next
// folds of the block print a handle that comes back from the copy, and a
// block gc did not keep is archived anew.
func TestOwnArchiveAfterGC(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	e, err := New(ctx, log, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped := i11Lines("kept", 40), i11Lines("drop", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", dropped))
	i11Hook(t, e, bashPayload("s1", "", "ls -R", dropped))
	i11Hook(t, e, bashPayload("s1", "", "ls -R", kept))
	rk0 := i11Hook(t, e, bashPayload("s1", "", "ls -R", kept)) // archived before the cut
	now = now.Add(48 * time.Hour)
	r := i11Hook(t, e, bashPayload("s1", "", "ls -R", kept)) // names the kept block after the cut
	retrievable(t, e, r, "before gc")
	now = now.Add(time.Hour)
	i11Hook(t, e, bashPayload("s2", "", "echo", "newest\n"))
	var base *Checkpoint
	plan, err := e.GC(ctx, now.Add(-24*time.Hour), GCOptions{SaveBase: func(c Checkpoint) error { base = &c; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Removed == 0 || plan.Kept != 1 || base == nil {
		t.Fatalf("gc removed nothing: %+v", plan)
	}
	if first, _ := log.First(ctx); first <= 1 {
		t.Fatalf("the log still starts at %d", first)
	}
	// The shown-set of the removed batches went with them: a first call
	// shows again, the second folds.
	i11Hook(t, e, bashPayload("s1", "", "ls -R", kept))
	rk := i11Hook(t, e, bashPayload("s1", "", "ls -R", kept))
	if b, ok := e.ledger.Block(rk.Folds[0].Handle); !ok || b.Seq < plan.Before {
		t.Fatalf("the kept block is at %+v, below the cut %d", b, plan.Before)
	}
	if rk.Folds[0].Handle != rk0.Folds[0].Handle {
		t.Fatal("the kept block folds to another handle")
	}
	retrievable(t, e, rk, "the kept block after gc")
	i11Hook(t, e, bashPayload("s1", "", "ls -R", dropped))
	retrievable(t, e, i11Hook(t, e, bashPayload("s1", "", "ls -R", dropped)), "the removed block after gc")
}

// TestOwnArchiveForgottenThenFolded: omni forget erases a block this
// Engine wrote, and the Engine folds the forget's event (as a daemon
// restarted after omni forget folds it from the log): no later reply
// names the erased handle as retrievable.
func TestOwnArchiveForgottenThenFolded(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e := i11Engine(t, log)
	out := i11Lines("forget", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	r2 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	h := r2.Folds[0].Handle
	value := []byte("forget entry 007: /srv/app/modules/forget/component_007/index.ts")
	if _, _, err := Forget(ctx, log, value, []byte("k"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Retrieve(ctx, h, events.Reader{Session: "s1"}); !errors.Is(err, ErrForgotten) {
		t.Fatalf("retrieve of the erased handle: %v, want ErrForgotten", err)
	}
	r3 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	for _, f := range r3.Folds {
		if _, err := e.Retrieve(ctx, f.Handle, events.Reader{Session: "s1"}); err != nil {
			t.Fatalf("after forget the reply names %s, which does not come back: %v", f.Handle, err)
		}
	}
}
