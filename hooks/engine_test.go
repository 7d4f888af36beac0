package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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
