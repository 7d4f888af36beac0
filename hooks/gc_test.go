package hooks

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// jumpClock is a clock the test can move forward by days.
type jumpClock struct{ t time.Time }

func (c *jumpClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// bases is an in-memory place for base snapshots, keyed by the first
// retained batch, encoded and decoded like the files cmd/omni writes.
type bases map[events.Seq][]byte

func (b bases) save(cp Checkpoint) error {
	enc, err := cp.MarshalBinary()
	if err != nil {
		return err
	}
	b[cp.Seq+1] = enc
	return nil
}

func (b bases) load(first events.Seq) (*Checkpoint, error) {
	enc, ok := b[first]
	if !ok {
		return nil, nil
	}
	var cp Checkpoint
	if err := cp.UnmarshalBinary(enc); err != nil {
		return nil, err
	}
	return &cp, nil
}

// gcWorld is a log with an old session (60 days ago) and a recent one, a
// handle archived in the old one and folded again in the recent one (kept
// by gc), and a handle only the old session named (forgotten).
type gcWorld struct {
	log            *memlog.Log
	clock          *jumpClock
	e              *Engine
	kept, gone     string
	keptText, cut  string
	firstRecentSeq events.Seq
}

func newGCWorld(t *testing.T) *gcWorld {
	t.Helper()
	ctx := context.Background()
	w := &gcWorld{log: memlog.New(), clock: &jumpClock{t: time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)}}
	var err error
	if w.e, err = New(ctx, w.log, Options{Now: w.clock.now}); err != nil {
		t.Fatal(err)
	}
	shared, only := explainText("shared", 40), explainText("old", 40)
	hook := func(session, cmd, out string) Result {
		r, err := w.e.HookResult(ctx, HookInput{Stdin: bashPayload(session, "", cmd, out)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	hook("old", "./gen", shared)
	r := hook("old", "./gen", shared)
	hook("old", "./other", only)
	r2 := hook("old", "./other", only)
	drive(t, w.e, 0, 12)
	if len(r.Folds) != 1 || len(r2.Folds) != 1 {
		t.Fatalf("no folds in the old session: %d %d", len(r.Folds), len(r2.Folds))
	}
	w.kept, w.gone, w.keptText = r.Folds[0].Handle, r2.Folds[0].Handle, shared
	w.clock.t = w.clock.t.Add(60 * 24 * time.Hour)
	w.firstRecentSeq, _ = w.log.Last(ctx)
	w.firstRecentSeq++
	hook("new", "./gen", shared)
	r3 := hook("new", "./gen", shared)
	if len(r3.Folds) != 1 || r3.Folds[0].Handle != w.kept {
		t.Fatalf("the recent session did not fold the old block again: %+v", r3.Folds)
	}
	drive(t, w.e, 12, 12)
	return w
}

// TestGCKeepsWhatRetainedEventsName: after gc, a handle archived before the
// cutoff but named by a marker after it still retrieves exactly; a handle
// only named before the cutoff is unknown; nothing below the cutoff is
// left in the log.
func TestGCKeepsWhatRetainedEventsName(t *testing.T) {
	ctx := context.Background()
	w := newGCWorld(t)
	bs := bases{}
	p, err := w.e.GC(ctx, w.clock.t.Add(-30*24*time.Hour), GCOptions{SaveBase: bs.save})
	if err != nil {
		t.Fatal(err)
	}
	if p.Before != w.firstRecentSeq || p.Kept < 1 || p.Forgotten < 1 || p.Removed != int(w.firstRecentSeq-1) {
		t.Fatalf("plan %+v, want Before %d", p, w.firstRecentSeq)
	}
	if first, _ := w.log.First(ctx); first != p.Before {
		t.Fatalf("log starts at %d after gc, want %d", first, p.Before)
	}
	if _, err := w.log.Get(ctx, 1); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("batch 1 still readable: %v", err)
	}
	b, err := w.e.Retrieve(ctx, w.kept, events.Reader{})
	if err != nil || string(b) != w.keptText {
		t.Fatalf("kept handle after gc: %v", err)
	}
	if _, err := w.e.Retrieve(ctx, w.gone, events.Reader{}); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("a handle named only before the cutoff: %v, want ErrUnknownHandle", err)
	}
	// A fresh Engine (a daemon start) from the base and the retained batches
	// has the live Engine's state, and retrieves the kept handle too.
	again := restartMatches(t, w, bs)
	if b, err := again.Retrieve(ctx, w.kept, events.Reader{}); err != nil || string(b) != w.keptText {
		t.Fatalf("kept handle from a restarted engine: %v", err)
	}
}

// TestGCReplayFromBase: after gc (twice, so bases chain), replay --verify
// over the retained range is byte-identical, --at below it says so, and
// without the base replay refuses instead of guessing.
func TestGCReplayFromBase(t *testing.T) {
	ctx := context.Background()
	w := newGCWorld(t)
	before, err := Verify(ctx, w.log, nil, nil)
	if err != nil || before.Identical != before.Compared {
		t.Fatalf("verify before gc: %+v %v", before, err)
	}
	bs := bases{}
	if _, err := w.e.GC(ctx, w.clock.t.Add(-30*24*time.Hour), GCOptions{SaveBase: bs.save}); err != nil {
		t.Fatal(err)
	}
	drive(t, w.e, 24, 10)
	w.clock.t = w.clock.t.Add(2 * time.Hour)
	drive(t, w.e, 34, 10)
	p2, err := w.e.GC(ctx, w.clock.t.Add(-time.Hour), GCOptions{Base: bs.load, SaveBase: bs.save})
	if err != nil || p2.Before == 0 {
		t.Fatalf("second gc: %+v %v", p2, err)
	}
	s, err := Verify(ctx, w.log, bs.load, nil)
	if err != nil || s.Compared == 0 || s.Identical != s.Compared {
		t.Fatalf("verify after gc: %+v %v", s, err)
	}
	last, _ := w.log.Last(ctx)
	for seq := p2.Before; seq <= last; seq++ {
		batch, _ := w.log.Get(ctx, seq)
		if !hasInvoked(batch) {
			continue
		}
		r, err := Replay(ctx, w.log, seq, bs.load)
		if err != nil || (r.Compared && !r.Match) {
			t.Fatalf("replay --at %d: %+v %v", seq, r, err)
		}
		if d, err := Diff(ctx, w.log, seq, bs.load); err == nil && !d.Match {
			t.Fatalf("diff %d after gc does not rerun to what was delivered", seq)
		}
	}
	if _, err := Replay(ctx, w.log, 1, bs.load); !errors.Is(err, ErrBeforeRetained) {
		t.Fatalf("replay below the retained range: %v", err)
	}
	if _, err := Verify(ctx, w.log, nil, nil); !errors.Is(err, ErrNoBase) {
		t.Fatalf("verify without a base: %v", err)
	}
	if _, err := Replay(ctx, w.log, last, func(events.Seq) (*Checkpoint, error) { return nil, nil }); !errors.Is(err, ErrNoBase) {
		t.Fatalf("replay without a base: %v", err)
	}
	restartMatches(t, w, bs)
}

// restartMatches builds a fresh Engine (a daemon start) from the base and
// the retained batches, and fails unless it has the live Engine's state.
func restartMatches(t *testing.T, w *gcWorld, bs bases) *Engine {
	t.Helper()
	again, err := New(context.Background(), w.log, Options{Base: bs.load})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := engineState(t, again), engineState(t, w.e); !reflect.DeepEqual(got, want) {
		t.Fatal("base + retained batches differ from the live engine")
	}
	return again
}

// TestGCFailureRemovesNothing: when the base cannot be saved, or the
// Pruned batch cannot be appended, the log keeps every batch; a dry run
// changes nothing either.
func TestGCFailureRemovesNothing(t *testing.T) {
	ctx := context.Background()
	w := newGCWorld(t)
	cut := w.clock.t.Add(-30 * 24 * time.Hour)
	last0, _ := w.log.Last(ctx)
	p, err := w.e.GC(ctx, cut, GCOptions{DryRun: true})
	if err != nil || !p.DryRun || p.Before != w.firstRecentSeq {
		t.Fatalf("dry run: %+v %v", p, err)
	}
	if _, err := w.e.GC(ctx, cut, GCOptions{SaveBase: func(Checkpoint) error { return errors.New("disk full") }}); err == nil ||
		!strings.Contains(err.Error(), "disk full") {
		t.Fatalf("gc with a failing base write: %v", err)
	}
	w.log.FailAppend = func([]events.Event) error { return errors.New("store down") }
	if _, err := w.e.GC(ctx, cut, GCOptions{SaveBase: bases{}.save}); err == nil {
		t.Fatal("gc with a failing append succeeded")
	}
	w.log.FailAppend = nil
	first, _ := w.log.First(ctx)
	last, _ := w.log.Last(ctx)
	if first != 1 || last != last0 {
		t.Fatalf("log is %d..%d after failed gc runs, want 1..%d", first, last, last0)
	}
	if b, err := w.e.Retrieve(ctx, w.gone, events.Reader{}); err != nil || len(b) == 0 {
		t.Fatalf("a failed gc lost a handle: %v", err)
	}
}

// TestRecordLostForgetsBlocks: once the batch that archived a block is
// recorded as lost, the handle is unknown (never named again without its
// bytes), the next repeat archives the same bytes anew and folds with a
// handle that retrieves; recording the same batch again appends nothing;
// a later Lost event does not forget blocks stored since under reused
// numbers.
func TestRecordLostForgetsBlocks(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	text := explainText("lost", 40)
	e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
	r, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
	if len(r.Folds) != 1 {
		t.Fatal("no fold")
	}
	h := r.Folds[0].Handle
	blk, _ := e.ledger.Block(h)
	got, err := e.RecordLost(ctx, []events.Seq{blk.Seq}, "unreadable")
	if err != nil || len(got) != 1 {
		t.Fatalf("RecordLost: %v %v", got, err)
	}
	if again, _ := e.RecordLost(ctx, []events.Seq{blk.Seq}, "unreadable"); len(again) != 0 {
		t.Fatalf("recorded twice: %v", again)
	}
	if _, err := e.Retrieve(ctx, h, events.Reader{}); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve of a block in a lost batch: %v", err)
	}
	r2, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
	if len(r2.Folds) != 1 || r2.Folds[0].Handle != h {
		t.Fatalf("repeat after the loss: %+v", r2.Folds)
	}
	if b, err := e.Retrieve(ctx, h, events.Reader{}); err != nil || string(b) != text {
		t.Fatalf("the block was not archived again: %v", err)
	}
	// A truncated log: the numbers after its end are recorded lost, then
	// reused by new batches; a later Lost event must not forget the blocks
	// those new batches archived.
	last, _ := log.Last(ctx)
	var ahead []events.Seq
	for q := last + 1; q <= last+10; q++ {
		ahead = append(ahead, q)
	}
	if _, err := e.RecordLost(ctx, ahead, "truncated"); err != nil {
		t.Fatal(err)
	}
	other := explainText("reused", 40)
	e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./other", other)})
	r3, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./other", other)})
	if len(r3.Folds) != 1 {
		t.Fatal("no fold of the new output")
	}
	if b, _ := e.ledger.Block(r3.Folds[0].Handle); !slices.Contains(ahead, b.Seq) {
		t.Fatalf("the new block is at %d, not at a reused number", b.Seq)
	}
	if _, err := e.RecordLost(ctx, []events.Seq{1000}, "unreadable"); err != nil {
		t.Fatal(err)
	}
	if b, err := e.Retrieve(ctx, r3.Folds[0].Handle, events.Reader{}); err != nil || string(b) != other {
		t.Fatalf("a later Lost event forgot a good block stored under a reused number: %v", err)
	}
	if got := e.LostSeqs(); len(got) != 12 {
		t.Fatalf("LostSeqs = %v", got)
	}
}

// TestGCKeepsOwedBlocks: a retrieve owes its reader one whole delivery of
// the block. Whether the retrieve is newer than the cutoff (it names the
// block) or older (only its debt remains), gc keeps the block and the debt:
// the handle still retrieves and the owed deliveries are whole.
func TestGCKeepsOwedBlocks(t *testing.T) {
	for _, tc := range []struct {
		name          string
		retrieveAfter bool // the retrieve happens after the cutoff
	}{{"retrieve after the cutoff", true}, {"retrieve before the cutoff", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &jumpClock{t: time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)}
			e, err := New(ctx, memlog.New(), Options{Now: clock.now})
			if err != nil {
				t.Fatal(err)
			}
			text := explainText("owed", 40)
			e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
			r, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
			if len(r.Folds) != 1 {
				t.Fatal("no fold")
			}
			h := r.Folds[0].Handle
			retrieve := func() {
				if _, err := e.Retrieve(ctx, h, events.Reader{Session: "s1"}); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.retrieveAfter {
				retrieve()
			}
			clock.t = clock.t.Add(2 * time.Hour)
			if tc.retrieveAfter {
				retrieve()
			} else {
				e.HookResult(ctx, HookInput{Stdin: bashPayload("s2", "", "./other", explainText("other", 40))})
			}
			p, err := e.GC(ctx, clock.t.Add(-time.Hour), GCOptions{SaveBase: bases{}.save})
			if err != nil || p.Kept != 1 {
				t.Fatalf("gc %+v %v: the owed block was not kept", p, err)
			}
			r2, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "./gen", text)})
			if len(r2.Folds) != 0 {
				t.Fatal("the delivery owed before gc folded after it")
			}
			if b, err := e.Retrieve(ctx, h, events.Reader{}); err != nil || string(b) != text {
				t.Fatalf("retrieve after gc: %v", err)
			}
		})
	}
}
