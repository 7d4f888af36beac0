package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/pipeline"
)

// i11Lines returns n distinct plain lines tagged tag.
func i11Lines(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s entry %03d: /srv/app/modules/%s/component_%03d/index.ts exported\n", tag, i, tag, i)
	}
	return b.String()
}

func i11Engine(t *testing.T, log events.Log) *Engine {
	t.Helper()
	e, err := New(context.Background(), log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func i11Hook(t *testing.T, e *Engine, stdin []byte) Result {
	t.Helper()
	r, err := e.HookResult(context.Background(), HookInput{Stdin: stdin})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHookNoReaderNoClaim: payloads without a session_id (or
// with an empty one) have no reader identity: nothing is ever claimed
// "already shown" to them, although two such callers used to share one
// reader. Red without the Session == "" guards (ledger Lookup, view Empty).
func TestHookNoReaderNoClaim(t *testing.T) {
	e := i11Engine(t, memlog.New())
	out := i11Lines("anon", 30)
	for i, sid := range []string{"", "", "-"} {
		p := map[string]any{"cwd": "/home/dev/proj", "hook_event_name": "PostToolUse", "tool_name": "Bash",
			"tool_input":    map[string]any{"command": "ls -R"},
			"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}}
		if sid == "" && i == 1 {
			p["session_id"] = ""
		}
		if sid == "-" {
			continue
		}
		b, _ := json.Marshal(p)
		r := i11Hook(t, e, b)
		if r.Reply != nil || len(r.Folds) != 0 {
			t.Fatalf("call %d without a reader: folded %d runs:\n%s", i, len(r.Folds), r.Delivered)
		}
	}
	// A named reader still folds its own repeats.
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	if r := i11Hook(t, e, bashPayload("s1", "", "ls -R", out)); len(r.Folds) != 1 {
		t.Fatalf("a named reader's repeat did not fold")
	}
}

// TestHookRetrieveThenWholeOutputOfOtherBytes: after `omni
// retrieve H`, the next delivery holding H's lines carries them whole,
// also when it is a whole output whose bytes differ from the block (no
// final newline), which folded as "identical to the N lines already shown"
// before; the repeat after that folds again. Red when the debt is matched
// on the exact handle only.
func TestHookRetrieveThenWholeOutputOfOtherBytes(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e := i11Engine(t, log)
	x, y, z := i11Lines("x", 40), i11Lines("y", 5), i11Lines("z", 5)
	i11Hook(t, e, bashPayload("s1", "", "find src", x+y))
	r2 := i11Hook(t, e, bashPayload("s1", "", "find src", x+z))
	if len(r2.Folds) != 1 || r2.Folds[0].Block != x {
		t.Fatalf("want x folded, got %d folds:\n%s", len(r2.Folds), r2.Delivered)
	}
	h := r2.Folds[0].Handle
	if b, err := e.Retrieve(ctx, h, events.Reader{}); err != nil || string(b) != x {
		t.Fatalf("retrieve: %v", err)
	}
	whole := strings.TrimSuffix(x, "\n")
	r3 := i11Hook(t, e, bashPayload("s1", "", "find src", whole))
	if r3.Delivered != whole || r3.Reply != nil {
		t.Fatalf("the retrieved lines were folded again:\n%s", r3.Delivered)
	}
	r4 := i11Hook(t, e, bashPayload("s1", "", "find src", whole))
	if len(r4.Folds) != 1 {
		t.Fatalf("paid once, the repeat should fold again:\n%s", r4.Delivered)
	}
	if s, err := Verify(ctx, log, nil, nil); err != nil || s.Identical != s.Compared {
		t.Fatalf("verify %+v %v", s, err)
	}
}

// TestHookHostCapOnStdoutAlone: Claude Code caps stdout at
// 30,000 characters; stderr does not count. A 29,001-character stdout with
// 3,350 characters of stderr is shown inline, so it is decided (and its
// repeat folds); a 30,000-character stdout, or a payload with
// persistedOutputPath, is left to the host. Red when the cap is measured
// on stdout+stderr.
func TestHookHostCapOnStdoutAlone(t *testing.T) {
	e := i11Engine(t, memlog.New())
	pay := func(sid, stdout, stderr string, persisted bool) []byte {
		resp := map[string]any{"stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false}
		if persisted {
			resp["persistedOutputPath"] = "/tmp/x/tool-results/b1.txt"
			resp["persistedOutputSize"] = 40000
		}
		b, _ := json.Marshal(map[string]any{"session_id": sid, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": "make all"}, "tool_response": resp})
		return b
	}
	stdout := strings.Repeat(i11Lines("out", 10), 100)[:29001]
	stderr := strings.Repeat(i11Lines("err", 10), 10)[:3350]
	r1 := i11Hook(t, e, pay("s1", stdout, stderr, false))
	if r1.Reason == "host-cap" {
		t.Fatal("a 29,001-character stdout with stderr beside it was declined")
	}
	if r2 := i11Hook(t, e, pay("s1", stdout, stderr, false)); len(r2.Folds) == 0 || r2.Reply == nil {
		t.Fatalf("its repeat did not fold (reason %q)", r2.Reason)
	}
	big := strings.Repeat("x", 30000)
	if r := i11Hook(t, e, pay("s2", big, "", false)); r.Reason != "host-cap" {
		t.Fatalf("a 30,000-character stdout: reason %q", r.Reason)
	}
	if r := i11Hook(t, e, pay("s2", stdout, "", true)); r.Reason != "host-cap" {
		t.Fatalf("persistedOutputPath: reason %q", r.Reason)
	}
	// A repeat whose folds still leave 30,000 characters or more is
	// delivered unchanged: the host would persist such a rewrite.
	// (Ledger only, so no first-seen stage shortens the new lines.)
	lo, err := New(context.Background(), memlog.New(), Options{Now: fixedClock(), LedgerOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	fresh := strings.Repeat(i11Lines("new", 10), 100)[:29001]
	i11Hook(t, lo, pay("s3", stdout[:2000], "", false))
	r := i11Hook(t, lo, pay("s3", stdout[:2000]+fresh[:27500], stderr, false))
	if r.Reply != nil || r.Reason != string(events.ReasonHostCapReply) {
		t.Fatalf("a rewrite over the cap: reason %q, reply %d B", r.Reason, len(r.Reply))
	}
}

// damagedLog is a Log whose Get fails for some sequences, like a store
// file damaged on disk before omni gc --repair records it.
type damagedLog struct {
	events.Log
	bad map[events.Seq]bool
}

func (l *damagedLog) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	if l.bad[seq] {
		return nil, events.ErrNotFound
	}
	return l.Log.Get(ctx, seq)
}

// TestHookHandleOnlyWhenReadable: after store damage and
// before omni gc --repair, a fold that reuses a known handle whose archived
// bytes cannot be read archives them again before the marker is printed,
// so every handle printed gives its bytes back. Red without the
// read-back check in decide's archive.
func TestHookHandleOnlyWhenReadable(t *testing.T) {
	ctx := context.Background()
	ml := memlog.New()
	e := i11Engine(t, ml)
	out := i11Lines("dmg", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	r2 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	if len(r2.Folds) != 1 {
		t.Fatal("no fold to damage")
	}
	h := r2.Folds[0].Handle
	blk, _ := e.ledger.Block(h)
	dl := &damagedLog{Log: ml, bad: map[events.Seq]bool{blk.Seq: true}}
	e2 := i11Engine(t, dl) // a restart over the damaged store
	if _, err := e2.Retrieve(ctx, h, events.Reader{}); err == nil {
		t.Fatal("the damaged block still reads")
	}
	r3 := i11Hook(t, e2, bashPayload("s2", "", "ls -R", out))
	r3 = i11Hook(t, e2, bashPayload("s2", "", "ls -R", out))
	if len(r3.Folds) != 1 || r3.Folds[0].Handle != h {
		t.Fatalf("want the same handle folded again, got %d folds", len(r3.Folds))
	}
	b, err := e2.Retrieve(ctx, h, events.Reader{})
	if err != nil || string(b) != out {
		t.Fatalf("a printed handle does not give its bytes back: %v", err)
	}
	// A fresh fold of the whole log agrees.
	e3 := i11Engine(t, dl)
	if b, err := e3.Retrieve(ctx, h, events.Reader{}); err != nil || string(b) != out {
		t.Fatalf("after a restart: %v", err)
	}
	_ = pipeline.HandleOf
}

// TestHookRetrieveOwesFirstSeenCut (every path): after the
// reader retrieves the handle of a distiller's cut, the next delivery of
// that output carries the retrieved lines whole (only redaction runs), once;
// the one after is distilled again. Red without ShortenRequest.Owed.
func TestHookRetrieveOwesFirstSeenCut(t *testing.T) {
	ctx := context.Background()
	e := i11Engine(t, memlog.New())
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "=== RUN   TestHandler%02d\n--- PASS: TestHandler%02d (0.00s)\n", i, i)
	}
	b.WriteString("PASS\nok  \texample.com/app/handlers\t0.412s\n")
	out := b.String()
	r1 := i11Hook(t, e, bashPayload("s1", "", "go test -v ./handlers", out))
	hs := regexpHandles(r1.Delivered)
	if r1.Reply == nil || len(hs) == 0 {
		t.Skipf("the distiller did not cut this output (reason %q): nothing to owe", r1.Reason)
	}
	blk, err := e.Retrieve(ctx, hs[0], events.Reader{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	r2 := i11Hook(t, e, bashPayload("s1", "", "go test -v ./handlers", out))
	for _, ln := range nonBlank(string(blk)) {
		if !containsLine(r2.Delivered, ln) {
			t.Fatalf("after the retrieve, %q was cut again:\n%s", ln, r2.Delivered)
		}
	}
	// (The text is whole but the ledger may fold what this reader was
	// already shown; the retrieved lines themselves are not folded.)
	r3 := i11Hook(t, e, bashPayload("s1", "", "go test -v ./handlers", out))
	if r3.Delivered == out {
		t.Fatal("the debt was not paid: the repeat is still whole")
	}
}

func regexpHandles(s string) []string {
	var out []string
	for _, m := range propHandleRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
