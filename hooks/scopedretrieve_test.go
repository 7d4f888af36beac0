package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// TestRetrieveInProjectThatPrintedIt: one block, archived by a call in
// project /a, is named again by a marker printed in project /b (the
// archive is skipped: the block is stored). A retrieve scoped to /b gives
// its bytes back; one scoped to /c, where no marker named it, learns
// nothing. Red without namedIn.
func TestRetrieveInProjectThatPrintedIt(t *testing.T) {
	ctx := context.Background()
	e := projectEngine(t, memlog.New())
	out := memoTexts()[0]
	call := func(session, cwd string) Result {
		p, _ := json.Marshal(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": "go test ./..."},
			"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
		return i11Hook(t, e, p)
	}
	ra := call("sa", "/a")
	rb := call("sb", "/b")
	hs := regexpHandles(rb.Delivered)
	if len(hs) == 0 || len(regexpHandles(ra.Delivered)) == 0 {
		t.Fatalf("no handle printed (reason %q): the test needs an output the first-seen stages cut", rb.Reason)
	}
	h := hs[0]
	if blk, _ := e.ledger.Block(h); blk.Seq == 0 {
		t.Fatalf("handle %s not archived", h)
	}
	got, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sb"}, "/b")
	if err != nil {
		t.Fatalf("retrieve in /b of a handle printed in /b: %v", err)
	}
	if !strings.Contains(out, string(got)) {
		t.Fatalf("retrieve in /b: %d bytes not from the output", len(got))
	}
	if _, err := e.RetrieveIn(ctx, h, events.Reader{Session: "sc"}, "/c"); !errors.Is(err, ErrUnknownHandle) {
		t.Fatalf("retrieve in /c, where nothing named it: %v", err)
	}
}

// projectEngine is an Engine on log whose project is the call's cwd.
func projectEngine(tb testing.TB, log events.Log) *Engine {
	tb.Helper()
	e, err := New(context.Background(), log, Options{Now: fixedClock(), ProjectOf: func(cwd string) string { return cwd }})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}
