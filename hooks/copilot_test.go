package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/hooks/hosts"
)

// copilotBash is a Copilot CLI 1.0.102 postToolUse payload for bash as it
// arrived (docs/HOSTS.md), with the output and exit code filled in.
func copilotBash(session, agent, text string, code int, resultType string) []byte {
	p := map[string]any{"sessionId": session, "timestamp": 1796149121991, "cwd": "/home/u/proj", "toolName": "bash",
		"toolArgs":   map[string]any{"command": "cat big.txt", "description": "x"},
		"toolResult": map[string]any{"resultType": resultType, "textResultForLlm": fmt.Sprintf("%s<shellId: 0 completed with exit code %d>", text, code)}}
	if agent != "" {
		p["agentId"], p["agentType"], p["parentAgentId"] = agent, "general-purpose", ""
	}
	b, _ := json.Marshal(p)
	return b
}

func copilotText(t *testing.T, reply []byte) string {
	t.Helper()
	var r struct {
		ModifiedResult map[string]string `json:"modifiedResult"`
	}
	if err := json.Unmarshal(reply, &r); err != nil || len(r.ModifiedResult) != 2 || r.ModifiedResult["resultType"] != "success" {
		t.Fatalf("reply %s is not {modifiedResult:{textResultForLlm,resultType:success}}: %v", reply, err)
	}
	return r.ModifiedResult["textResultForLlm"]
}

func TestCopilotBash(t *testing.T) {
	long := longText("cp", 60)
	raw := copilotBash("s-cp", "", long, 0, "success")
	if got := hosts.DetectHost(raw); got != hosts.Copilot {
		t.Fatalf("DetectHost = %s", got)
	}
	e, log := newTestEngine(t)
	r := twice(t, e, raw)
	vis := copilotText(t, r.Reply)
	if !strings.Contains(vis, "60 lines already shown, omni retrieve ") ||
		!strings.HasSuffix(vis, "\n<shellId: 0 completed with exit code 0>") {
		t.Fatalf("the model would read %q", vis)
	}
	b, err := e.Retrieve(context.Background(), r.Folds[0].Handle, r.Reader)
	if err != nil || string(b) != long {
		t.Fatalf("retrieve: %d bytes, %v; want the output without Copilot's exit line", len(b), err)
	}
	last, _ := log.Last(context.Background())
	batch, _ := log.Get(context.Background(), last-1)
	if batch[0].Invoked == nil || batch[0].Invoked.Host != hosts.Copilot {
		t.Fatalf("Invoked %+v", batch[0].Invoked)
	}
	if s, err := Verify(context.Background(), log, nil, nil); err != nil || s.Identical != s.Compared {
		t.Fatalf("verify %+v %v", s, err)
	}
	// A subagent's calls carry its own sessionId and agentId: its reader
	// starts empty, so the output reaches it whole.
	sub, err := e.HookResult(context.Background(), HookInput{Stdin: copilotBash("s-cp-sub", "agent-1", long, 0, "success")})
	if err != nil || sub.Reply != nil || sub.Reader.Agent != "agent-1" {
		t.Fatalf("subagent: reply %s, reader %+v, err %v", sub.Reply, sub.Reader, err)
	}
}

func TestCopilotFailuresPassWhole(t *testing.T) {
	long := longText("cpf", 60)
	nocode, _ := json.Marshal(map[string]any{"sessionId": "s-f", "timestamp": 1, "cwd": "/home/u/proj", "toolName": "bash",
		"toolArgs": map[string]any{"command": "cat big.txt"}, "toolResult": map[string]any{"resultType": "success", "textResultForLlm": long}})
	for name, p := range map[string][]byte{
		// Copilot says "success" for a failing command; the exit line tells.
		"exit 3":          copilotBash("s-f", "", long, 3, "success"),
		"resultType":      copilotBash("s-f", "", long, 0, "failure"),
		"no exit line":    nocode,
		"unknown tool":    []byte(`{"sessionId":"s-f","timestamp":1,"cwd":"/p","toolName":"edit","toolArgs":{},"toolResult":{"resultType":"success","textResultForLlm":` + fmt.Sprintf("%q", long) + `}}`),
		"result not text": []byte(`{"sessionId":"s-f","timestamp":1,"cwd":"/p","toolName":"bash","toolArgs":{},"toolResult":{"resultType":"success"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			// The same output shown once before, successfully.
			if _, err := e.HookResult(context.Background(), HookInput{Stdin: copilotBash("s-f", "", long, 0, "success")}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				r, err := e.HookResult(context.Background(), HookInput{Stdin: p})
				if err != nil || r.Reply != nil {
					t.Fatalf("call %d: reply %s, err %v; want the output left whole", i, r.Reply, err)
				}
			}
		})
	}
}

func TestCopilotPayloadLeavesOthers(t *testing.T) {
	for _, p := range []string{hostsOpenCodeBash, `{"hook_event_name":"PostToolUse","sessionId":"s","toolName":"bash","toolResult":{}}`, `null`, `[]`, `{"sessionId":"s"}`} {
		if got := hosts.CopilotPayload([]byte(p)); string(got) != p {
			t.Errorf("hosts.CopilotPayload(%s) = %s", p, got)
		}
	}
}

// A Copilot preCompact empties the session's shown-set: the output shown
// before it is delivered whole after it.
func TestCopilotPreCompact(t *testing.T) {
	long := longText("cpc", 60)
	e, _ := newTestEngine(t)
	ctx := context.Background()
	if r := twice(t, e, copilotBash("s-c", "", long, 0, "success")); r.Reply == nil {
		t.Fatal("no fold before the compaction")
	}
	pre := []byte(`{"sessionId":"s-c","timestamp":1796149841227,"cwd":"/home/u/proj","transcriptPath":"/home/u/.copilot/session-state/s-c/events.jsonl","trigger":"auto","customInstructions":""}`)
	if got := string(hosts.CopilotPayload(pre)); got != `{"host":"copilot-cli","hook_event_name":"PreCompact","session_id":"s-c","cwd":"/home/u/proj","trigger":"auto"}` {
		t.Fatalf("preCompact read as %s", got)
	}
	if r, err := e.HookResult(ctx, HookInput{Stdin: pre}); err != nil || !r.Recorded || r.Reply != nil {
		t.Fatalf("preCompact: %+v %v", r, err)
	}
	r, err := e.HookResult(ctx, HookInput{Stdin: copilotBash("s-c", "", long, 0, "success")})
	if err != nil || r.Reply != nil {
		t.Fatalf("after the compaction: reply %s, err %v; want the output whole", r.Reply, err)
	}
	// sessionStart is not registered and not read: it stays a payload
	// without an event (the engine logs and answers nothing).
	start := `{"sessionId":"s-c","timestamp":1,"cwd":"/p","source":"new","initialPrompt":"hi"}`
	if got := string(hosts.CopilotPayload([]byte(start))); got != start {
		t.Fatalf("sessionStart read as %s", got)
	}
}
