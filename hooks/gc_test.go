package hooks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// TestGCForgetsPurgedHandles: after PlanGC and Purge, a handle archived in
// the removed range is unknown (never named again without being archived
// again), and the next fold of the same bytes archives them anew.
func TestGCForgetsPurgedHandles(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := New(ctx, log, Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	text := explainText("gc", 40)
	e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
	r, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
	if len(r.Folds) != 1 {
		t.Fatalf("no fold before gc: %s", r.Reason)
	}
	h := r.Folds[0].Handle
	clock = clock.Add(60 * 24 * time.Hour)
	plan, err := e.PlanGC(ctx, clock.Add(-30*24*time.Hour))
	if err != nil || plan.Before != 3 {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	if err := log.Purge(ctx, plan.Before); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Retrieve(ctx, h, events.Reader{}); err != ErrUnknownHandle {
		t.Fatalf("retrieve of a purged handle: %v", err)
	}
	// The 30-day window has passed too, so a new delivery, then a repeat.
	e.HookResult(ctx, HookInput{Stdin: bashPayload("s2", "", "./gen", text)})
	r2, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s2", "", "./gen", text)})
	if len(r2.Folds) != 1 || r2.Folds[0].Handle != h {
		t.Fatalf("repeat after gc: %+v", r2.Folds)
	}
	b, err := e.Retrieve(ctx, h, events.Reader{})
	if err != nil || !strings.Contains(string(b), "gc row 039") {
		t.Fatalf("the handle was not archived again after gc: %v", err)
	}
}
