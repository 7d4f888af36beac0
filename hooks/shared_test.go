package hooks

import (
	"context"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// TestSharedLogTwoMachines runs two Engines (two machines' daemons) on one
// shared log without a follower: a decision appended after the other
// machine's batch is refused, decided again with that batch folded, and
// records the position it was decided at; lines the other machine
// delivered fold in project scope only; every decision verifies; each
// machine retrieves the other's handles once caught up.
func TestSharedLogTwoMachines(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	clock := fixedClock()
	a, err := New(ctx, log, Options{Now: clock, Shared: true, Machine: "a/1", User: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, log, Options{Now: clock, Shared: true, Machine: "b/2", User: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	shared := explainText("shared", 20)
	// Each machine's reader holds something, so a project fold may reach it.
	hookSeq(t, a, log, bashPayload("sa", "", "cat a-own.txt", explainText("a-own", 20)))
	hookSeq(t, b, log, bashPayload("sb", "", "cat b-own.txt", explainText("b-own", 20)))
	_, sharedSeq := hookSeq(t, a, log, bashPayload("sa", "", "cat shared.txt", explainText("a-new", 20)+shared))

	// b has not folded a's batches 1 and 3: its append after 2 is refused,
	// it folds them and decides again.
	r, seq := hookSeq(t, b, log, bashPayload("sb", "", "cat mixed.txt", explainText("b-new", 20)+shared))
	if len(r.Folds) != 1 || r.Folds[0].Kind != "project" {
		t.Fatalf("b: want one project fold of the lines a delivered, got %+v (%s)", r.Folds, r.Reason)
	}
	batch, err := log.Get(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	if at := batch[0].Invoked.At; at != seq-1 || at < sharedSeq {
		t.Fatalf("b's decision at seq %d recorded At %d; want %d", seq, at, seq-1)
	}
	for _, ev := range batch {
		if ev.Machine != "b/2" || ev.User != "bob" {
			t.Fatalf("event %s: machine %q user %q", ev.Kind, ev.Machine, ev.User)
		}
	}

	// A line a delivered to its own reader folds there in session scope.
	r, _ = hookSeq(t, a, log, bashPayload("sa", "", "cat again.txt", explainText("a-fresh", 20)+shared))
	if len(r.Folds) != 1 || r.Folds[0].Kind == "project" {
		t.Fatalf("a: want a session fold of its own delivery, got %+v", r.Folds)
	}

	// a retrieves b's handle after folding b's batches.
	h := func() string {
		for _, ev := range batch {
			if ev.Folded != nil {
				return ev.Folded.Handle
			}
		}
		return ""
	}()
	if err := a.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := a.Retrieve(ctx, h, events.Reader{Session: "sa"})
	if err != nil || string(got) != shared {
		t.Fatalf("a retrieves b's handle %s: %v (%d bytes)", h, err, len(got))
	}

	// Follow skips what an Engine already folded and folds the rest in order.
	last, _ := log.Last(ctx)
	before := b.Applied()
	for q := events.Seq(1); q <= last; q++ {
		evs, err := log.Get(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b.Follow(evs)
	}
	if b.Applied() != last || before >= last {
		t.Fatalf("b applied %d after following to %d (was %d)", b.Applied(), last, before)
	}

	sum, err := Verify(ctx, log, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Compared == 0 || sum.Identical != sum.Compared {
		t.Fatalf("verify: %+v", sum)
	}
	rep, err := Replay(ctx, log, seq, nil)
	if err != nil || !rep.Match {
		t.Fatalf("replay %d: %+v %v", seq, rep, err)
	}
}

// TestSharedLogRedecideBound: when other writers append before every try,
// the invocation fails after maxRedecide rounds (fail open) and stores
// nothing of its own.
func TestSharedLogRedecideBound(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	a, err := New(ctx, log, Options{Now: fixedClock(), Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	other := events.Event{ID: "01J00000000000000000000000", Kind: events.KindCompacted, Session: "x",
		Compacted: &events.Compacted{Trigger: "PreCompact"}}
	tries := 0
	log.FailAppend = func(batch []events.Event) error {
		if batch[0].Kind == events.KindInvoked {
			tries++
			lf := log.FailAppend
			log.FailAppend = nil
			_, _ = log.Append(ctx, []events.Event{other}) // another machine, just before
			log.FailAppend = lf
		}
		return nil
	}
	_, err = a.HookResult(ctx, HookInput{Stdin: bashPayload("s", "", "cat x.txt", explainText("x", 20))})
	if err == nil {
		t.Fatal("an invocation always beaten by other writers was recorded")
	}
	if tries != maxRedecide+1 {
		t.Fatalf("%d tries, want %d", tries, maxRedecide+1)
	}
	last, _ := log.Last(ctx)
	if int(last) != tries || a.Applied() != last {
		t.Fatalf("log holds %d batches (want only the %d others'), engine applied %d", last, tries, a.Applied())
	}
}
