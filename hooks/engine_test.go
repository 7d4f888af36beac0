package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func bashPayload(session, agent, cmd, stdout string) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}}
	if agent != "" {
		p["agent_id"] = agent
	}
	b, _ := json.Marshal(p)
	return b
}

func TestIdenticalRerunOneMarker(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; i < 43; i++ {
		fmt.Fprintf(&sb, "  %4d  /alpha/item-%02d/shards/segment-%03d.idx\n", 1000+i, i, i*13)
	}
	out := sb.String()
	r1, err := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "python3 rank.py", out)})
	if err != nil || r1.Reply != nil {
		t.Fatalf("first call: reply %q err %v", r1.Reply, err)
	}
	r2, err := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "python3 rank.py", out)})
	if err != nil || r2.Reply == nil {
		t.Fatalf("second call: reply %q err %v reason %s", r2.Reply, err, r2.Reason)
	}
	if !strings.HasPrefix(r2.Delivered, "[OMNI: identical to the 43 lines already shown, omni retrieve ") {
		t.Fatalf("delivered %q", r2.Delivered)
	}
	h := r2.Folds[0].Handle
	b, err := e.Retrieve(ctx, h, r2.Reader)
	if err != nil || string(b) != out {
		t.Fatalf("retrieve: %v %q", err, b)
	}
	// subagent: nothing already shown
	r3, _ := e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "a1", "python3 rank.py", out)})
	if r3.Reply != nil {
		t.Fatalf("subagent first call folded: %q", r3.Delivered)
	}
	s, err := Verify(ctx, log, nil, nil)
	if err != nil || s.Identical != s.Compared || s.Compared != 3 {
		t.Fatalf("verify %+v %v", s, err)
	}
	t.Logf("reply: %s", r2.Reply)
}

// countingLog counts Get calls on the log it wraps.
type countingLog struct {
	events.Log
	gets int
}

func (l *countingLog) Get(ctx context.Context, seq events.Seq) ([]events.Event, error) {
	l.gets++
	return l.Log.Get(ctx, seq)
}

// TestOwnArchiveNotFetched: a block this Engine archived (and the log
// acknowledged) is folded again without reading the batch back from the
// store, while an Engine that did not write it reads it back once before
// printing its handle. Red without Engine.wrote.
func TestOwnArchiveNotFetched(t *testing.T) {
	cl := &countingLog{Log: memlog.New()}
	e := i11Engine(t, cl)
	out := i11Lines("own", 40)
	i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	r2 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	if len(r2.Folds) != 1 {
		t.Fatal("no fold")
	}
	cl.gets = 0
	r3 := i11Hook(t, e, bashPayload("s1", "", "ls -R", out))
	if len(r3.Folds) != 1 || r3.Folds[0].Handle != r2.Folds[0].Handle {
		t.Fatalf("third call: %d folds", len(r3.Folds))
	}
	if cl.gets != 0 {
		t.Fatalf("the Engine read its own archive back %d times", cl.gets)
	}
	// A restarted Engine did not write it: it reads it back, once.
	e2 := i11Engine(t, cl)
	cl.gets = 0
	for range 2 {
		if r := i11Hook(t, e2, bashPayload("s1", "", "ls -R", out)); len(r.Folds) != 1 {
			t.Fatalf("after a restart: %d folds", len(r.Folds))
		}
	}
	if cl.gets != 1 {
		t.Fatalf("a restarted Engine read the archive back %d times, want 1", cl.gets)
	}
}
