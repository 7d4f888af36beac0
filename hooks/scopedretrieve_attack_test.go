package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// scopedCall runs one Bash hook call of out in session and cwd (the
// project, with ProjectOf the identity).
func scopedCall(t *testing.T, e *Engine, session, cwd, command, out string) Result {
	t.Helper()
	p, _ := json.Marshal(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command},
		"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
	return i11Hook(t, e, p)
}

// TestRetrieveInMarkerTextNamesNothing: an output of project /c that holds
// omni's marker text naming a block project /a archived (the agent cats a
// saved transcript of /a's delivery, the has-marker path) does not open
// that block to a retrieve scoped to /c: only a block the output's own
// bytes hash to is named by it, and the marker line is not folded.
func TestRetrieveInMarkerTextNamesNothing(t *testing.T) {
	ctx := context.Background()
	e := projectEngine(t, memlog.New())
	out := memoTexts()[0]
	ra := scopedCall(t, e, "sa", "/a", "go test ./...", out)
	hs := regexpHandles(ra.Delivered)
	if len(hs) == 0 {
		t.Fatalf("no handle printed in /a (reason %q)", ra.Reason)
	}
	h := hs[0]
	// /c prints /a's delivery twice (a second time folds what it showed).
	for i := 0; i < 2; i++ {
		rc := scopedCall(t, e, "sc", "/c", "cat transcript.txt", ra.Delivered+ra.Delivered)
		for _, f := range rc.Folds {
			if f.Handle == h {
				t.Fatalf("a fold in /c names /a's block %s", h)
			}
		}
	}
	if b, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c of /a's block named only by marker text: %d bytes, %v", len(b), err)
	}
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sa"}, "/a"); err != nil {
		t.Fatalf("retrieve in /a: %v", err)
	}
}

// TestRetrieveInExecDoorNamesOwnBytes: the exec door in project /b that
// prints the bytes /a archived first names the stored block, and a
// retrieve scoped to /b gets it back; /c, which printed nothing of it,
// does not.
func TestRetrieveInExecDoorNamesOwnBytes(t *testing.T) {
	ctx := context.Background()
	e := projectEngine(t, memlog.New())
	out := memoTexts()[0]
	call := func(cwd, session string) Result {
		r, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: "go test ./...", Text: out, Session: session, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ra := call("/a", "ta")
	rb := call("/b", "tb")
	hs := regexpHandles(rb.Delivered)
	if len(hs) == 0 || len(regexpHandles(ra.Delivered)) == 0 {
		t.Skipf("the exec door printed no handle (reason %q)", rb.Reason)
	}
	if _, err := e.RetrieveIn(ctx, hs[0], events.Reader{Session: "tb"}, "/b"); err != nil {
		t.Fatalf("retrieve in /b: %v", err)
	}
	if _, err := e.RetrieveIn(ctx, hs[0], events.Reader{Session: "tc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c: %v", err)
	}
}

// failingGets is a memlog whose Get fails for every batch but keep, after
// fail is set, counting the failed reads.
type failingGets struct {
	*memlog.Log
	fail   atomic.Bool
	keep   atomic.Uint64
	failed atomic.Int64
}

func (l *failingGets) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if l.fail.Load() && uint64(seq) != l.keep.Load() {
		l.failed.Add(1)
		return nil, errors.New("store unavailable")
	}
	return l.Log.Get(ctx, seq)
}

// TestRetrieveInStopsOnReadError: a scoped retrieve of another project's
// block on a store whose reads fail (a shared stream whose cluster stalls,
// each read waiting for its timeout) refuses after the first failed read
// instead of reading every batch of the window while it holds the
// Engine's lock, which every hook waits for. Red without the early stop.
func TestRetrieveInStopsOnReadError(t *testing.T) {
	ctx := context.Background()
	log := &failingGets{Log: memlog.New()}
	e := projectEngine(t, log)
	out := memoTexts()[0]
	ra := scopedCall(t, e, "sa", "/a", "go test ./...", out)
	hs := regexpHandles(ra.Delivered)
	if len(hs) == 0 {
		t.Fatalf("no handle printed in /a (reason %q)", ra.Reason)
	}
	h := hs[0]
	// Unscoped retrieves name the block in later batches (its Ref rises).
	for i := 0; i < 20; i++ {
		if _, err := e.Retrieve(ctx, h, events.Reader{Session: "sa"}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := e.ledger.Block(h)
	if b.Ref < b.Seq+10 {
		t.Fatalf("fixture: Ref %d, archived at %d", b.Ref, b.Seq)
	}
	log.keep.Store(uint64(b.Seq))
	log.fail.Store(true)
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c: %v", err)
	}
	if n := log.failed.Load(); n > 1 {
		t.Fatalf("the scan read %d batches after the store failed", n)
	}
}

// BenchmarkRetrieveInScan sets a scoped retrieve refused after namedIn
// reads its whole window (maxNamedScan batches of other projects' hook
// calls, each holding its stored input and archives) beside one served in
// the block's own project, which reads one batch: the ratio is how much
// longer a refusal takes (the window is read without the Engine's lock).
func BenchmarkRetrieveInScan(b *testing.B) {
	ctx := context.Background()
	e := projectEngine(b, memlog.New())
	t := &testing.T{}
	out := memoTexts()[0]
	ra := scopedCall(t, e, "sa", "/a", "go test ./...", out)
	hs := regexpHandles(ra.Delivered)
	if len(hs) == 0 {
		b.Fatalf("no handle printed in /a (reason %q)", ra.Reason)
	}
	h := hs[0]
	for i := 0; i < maxNamedScan+10; i++ {
		other := strings.ReplaceAll(out, "ok", "ok"+strconv.Itoa(i))
		scopedCall(t, e, "sb", "/b", "go test ./...", other)
	}
	if _, err := e.Retrieve(ctx, h, events.Reader{Session: "sa"}); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, project string }{{"own", "/a"}, {"refused", "/c"}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, err := e.RetrieveIn(ctx, h, events.Reader{}, bc.project)
				if bc.project == "/c" && !errors.Is(err, ErrUnknownHandle) {
					b.Fatal(err)
				}
			}
		})
	}
}

// lockProbe is a memlog that, for every batch but keep once probe is
// set, tries the Engine's lock, counting the reads made while it was held.
type lockProbe struct {
	*memlog.Log
	e      *Engine
	probe  atomic.Bool
	keep   atomic.Uint64
	reads  atomic.Int64
	locked atomic.Int64
}

func (l *lockProbe) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if l.probe.Load() && uint64(seq) != l.keep.Load() {
		l.reads.Add(1)
		if l.e.mu.TryLock() {
			l.e.mu.Unlock()
		} else {
			l.locked.Add(1)
		}
	}
	return l.Log.Get(ctx, seq)
}

// TestRetrieveInScansWithoutLock: the batches a scoped retrieve of another
// project's block reads for a marker naming it (up to maxNamedScan, each a
// round trip on a shared stream) are read without the Engine's lock, so
// hooks do not wait behind them; the answer is unchanged (/c is refused,
// /b, which printed the bytes, is served). Red while namedIn runs under
// the lock.
func TestRetrieveInScansWithoutLock(t *testing.T) {
	ctx := context.Background()
	log := &lockProbe{Log: memlog.New()}
	e := projectEngine(t, log)
	log.e = e
	out := memoTexts()[0]
	ra := scopedCall(t, e, "sa", "/a", "go test ./...", out)
	scopedCall(t, e, "sb", "/b", "go test ./...", out)
	hs := regexpHandles(ra.Delivered)
	if len(hs) == 0 {
		t.Fatalf("no handle printed in /a (reason %q)", ra.Reason)
	}
	h := hs[0]
	for i := 0; i < 5; i++ {
		if _, err := e.Retrieve(ctx, h, events.Reader{Session: "sa"}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := e.ledger.Block(h)
	log.keep.Store(uint64(b.Seq))
	log.probe.Store(true)
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c: %v", err)
	}
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sb"}, "/b"); err != nil {
		t.Fatalf("retrieve in /b, which printed the bytes: %v", err)
	}
	if log.reads.Load() == 0 {
		t.Fatal("fixture: the scan read nothing")
	}
	if n := log.locked.Load(); n > 0 {
		t.Fatalf("%d of %d batches read for the scan while the Engine's lock was held", n, log.reads.Load())
	}
}

// TestRetrieveInAfterGCCopy: a block /a archived before a gc cutoff and
// printed again in /b after it is kept by gc as a copy that keeps /a's
// project, in a batch newer than /b's marker; a retrieve scoped to /b
// still gets it (the marker /b printed named it), one scoped to /c does
// not.
func TestRetrieveInAfterGCCopy(t *testing.T) {
	ctx := context.Background()
	clock := &jumpClock{t: time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)}
	e, err := New(ctx, memlog.New(), Options{Now: clock.now, ProjectOf: func(cwd string) string { return cwd }})
	if err != nil {
		t.Fatal(err)
	}
	out := memoTexts()[0]
	ra := scopedCall(t, e, "sa", "/a", "go test ./...", out)
	if len(regexpHandles(ra.Delivered)) == 0 {
		t.Fatalf("no handle printed in /a (reason %q)", ra.Reason)
	}
	clock.t = clock.t.Add(60 * 24 * time.Hour)
	rb := scopedCall(t, e, "sb", "/b", "go test ./...", out)
	hs := regexpHandles(rb.Delivered)
	if len(hs) == 0 {
		t.Fatalf("no handle printed in /b (reason %q)", rb.Reason)
	}
	h := hs[0]
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sb"}, "/b"); err != nil {
		t.Fatalf("retrieve in /b before gc: %v", err)
	}
	p, err := e.GC(ctx, clock.t.Add(-30*24*time.Hour), GCOptions{SaveBase: bases{}.save})
	if err != nil || p.Kept < 1 {
		t.Fatalf("gc: %+v %v", p, err)
	}
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sb"}, "/b"); err != nil {
		t.Fatalf("retrieve in /b after gc kept the block: %v", err)
	}
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c after gc: %v", err)
	}
}
