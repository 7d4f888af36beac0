package hooks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// TestTeamGCKeepsWhatAnotherMachineNamed: on a shared log, machine b
// folds a block machine a archived long ago (its marker names the old
// handle, after the cutoff), and a runs omni gc before it folded b's
// batch: the block must be kept (stored again above the cut), or b's
// printed handle no longer comes back.
func TestTeamGCKeepsWhatAnotherMachineNamed(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, err := New(ctx, log, Options{Now: clock, Shared: true, Machine: "a/1", User: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, log, Options{Now: clock, Shared: true, Machine: "b/2", User: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	out := i11Lines("team", 40)
	i11Hook(t, a, bashPayload("s1", "", "ls -R", out))
	r0 := i11Hook(t, a, bashPayload("s1", "", "ls -R", out)) // archived at the old time
	if len(r0.Folds) != 1 {
		t.Fatal("no fold on a")
	}
	now = now.Add(48 * time.Hour)
	if err := b.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	rb := i11Hook(t, b, bashPayload("s1", "", "ls -R", out)) // b names the old block
	if len(rb.Folds) != 1 || rb.Folds[0].Handle != r0.Folds[0].Handle {
		t.Fatalf("b: %d folds", len(rb.Folds))
	}
	now = now.Add(time.Hour)
	// a has not folded b's batch yet (its follower lags) when gc runs.
	plan, err := a.GC(ctx, now.Add(-24*time.Hour), GCOptions{SaveBase: func(Checkpoint) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Removed == 0 {
		t.Fatalf("gc removed nothing: %+v", plan)
	}
	if err := b.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	h := rb.Folds[0].Handle
	got, err := b.Retrieve(ctx, h, events.Reader{Session: "s1"})
	if err != nil || string(got) != out {
		t.Fatalf("b printed %s, which does not come back after a's gc: %v (unknown: %v)", h, err, errors.Is(err, ErrUnknownHandle))
	}
}
