package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/hooks/hosts"
)

// cursorFixture reads a payload of testdata/cursor (written from Cursor's
// documented shapes).
func cursorFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cursor", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cursorMCP is the MCP postToolUse fixture with toolOutput as its
// tool_output string.
func cursorMCP(t *testing.T, tool, toolOutput string) []byte {
	t.Helper()
	p := withValue(t, cursorFixture(t, "postToolUse.mcp.json"), "tool_output", toolOutput)
	return withValue(t, string(p), "tool_name", tool)
}

func mcpContent(text string) string {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	return string(b)
}

// cursorReply checks a reply is the one shape Cursor applies to an MCP
// tool (never a permission, a Claude Code hookSpecificOutput or
// additional_context) and returns its updated_mcp_tool_output.
func cursorReply(t *testing.T, reply []byte) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(reply, &m); err != nil || len(m) != 1 || m["updated_mcp_tool_output"] == nil {
		t.Fatalf("reply %s is not {updated_mcp_tool_output}: %v", reply, err)
	}
	return m["updated_mcp_tool_output"]
}

func TestCursorDetected(t *testing.T) {
	for _, f := range []string{"postToolUse.shell.json", "postToolUse.mcp.json", "preCompact.json", "preToolUse.shell.json", "sessionStart.json"} {
		if got := hosts.DetectHost([]byte(cursorFixture(t, f))); got != hosts.Cursor {
			t.Errorf("%s: DetectHost = %s", f, got)
		}
	}
	// A Claude Code payload that merely holds the words is Claude Code's.
	claude := withValue(t, hostsClaudeBash, "tool_response.stdout", `{"cursor_version":"1.7"}`)
	if got := hosts.DetectHost(claude); got != HostClaudeCode {
		t.Errorf("a Claude Code payload quoting cursor_version: %s", got)
	}
}

// An MCP tool's repeated text folds, answered with
// updated_mcp_tool_output in the shape that arrived: the MCP result with
// its text replaced, or a bare string.
func TestCursorMCPShortened(t *testing.T) {
	e, _ := newTestEngine(t)
	long := longText("doc", 60)
	r := twice(t, e, cursorMCP(t, "MCP:search_docs", mcpContent(long)))
	out, ok := cursorReply(t, r.Reply).(map[string]any)
	if !ok {
		t.Fatalf("updated_mcp_tool_output is not an MCP result: %s", r.Reply)
	}
	parts := out["content"].([]any)
	text := parts[0].(map[string]any)["text"].(string)
	if len(parts) != 1 || parts[0].(map[string]any)["type"] != "text" || !strings.Contains(text, "[OMNI: ") || len(text) >= len(long) {
		t.Fatalf("content %v", parts)
	}
	e2, _ := newTestEngine(t)
	r = twice(t, e2, cursorMCP(t, "MCP:search_docs", long))
	if s, ok := cursorReply(t, r.Reply).(string); !ok || !strings.Contains(s, "[OMNI: ") {
		t.Fatalf("a bare string result: %s", r.Reply)
	}
}

// What Cursor cannot replace, or what must reach the model whole, gets no
// reply: Shell and Read outputs (not recorded either: omni delivers
// nothing there), an MCP error, omni's own MCP tools, a result with
// structured content, and the events omni does not act on (preToolUse
// above all: a permission hook).
func TestCursorLeftAlone(t *testing.T) {
	long := longText("out", 60)
	shellOut, _ := json.Marshal(map[string]any{"output": long, "exitCode": 0})
	errResult, _ := json.Marshal(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": long}}})
	structured, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": long}}, "structuredContent": map[string]any{"n": 1}})
	cases := map[string][]byte{
		"shell":      withValue(t, cursorFixture(t, "postToolUse.shell.json"), "tool_output", string(shellOut)),
		"read":       withValue(t, cursorFixture(t, "postToolUse.read.json"), "tool_output", long),
		"mcp error":  cursorMCP(t, "MCP:search_docs", string(errResult)),
		"omni tool":  cursorMCP(t, "MCP:omni_retrieve", mcpContent(long)),
		"structured": cursorMCP(t, "MCP:search_docs", string(structured)),
		"preToolUse": []byte(cursorFixture(t, "preToolUse.shell.json")),
		"session":    []byte(cursorFixture(t, "sessionStart.json")),
		"failure":    []byte(cursorFixture(t, "postToolUseFailure.shell.json")),
	}
	for name, p := range cases {
		e, _ := newTestEngine(t)
		for i := 0; i < 2; i++ {
			r, err := e.HookResult(context.Background(), HookInput{Stdin: p})
			if err != nil || r.Reply != nil || r.Recorded {
				t.Fatalf("%s: reply %s, recorded %v, err %v", name, r.Reply, r.Recorded, err)
			}
		}
	}
}

// preCompact empties the session's shown-set: the MCP text folded before
// it is delivered whole after it, then folds again.
func TestCursorPreCompact(t *testing.T) {
	e, _ := newTestEngine(t)
	p := cursorMCP(t, "MCP:search_docs", mcpContent(longText("doc", 60)))
	twice(t, e, p)
	r, err := e.HookResult(context.Background(), HookInput{Stdin: []byte(cursorFixture(t, "preCompact.json"))})
	if err != nil || !r.Recorded || r.Reply != nil {
		t.Fatalf("preCompact: recorded %v, reply %s, err %v", r.Recorded, r.Reply, err)
	}
	twice(t, e, p)
}

// A Droid payload (Claude Code's keys, a transcript under
// ~/.factory/sessions) is never answered on a tool event and records
// nothing as shown: Droid would drop the reply while the ledger counted a
// fold the model never got.
func TestDroidLeftAlone(t *testing.T) {
	e, _ := newTestEngine(t)
	p := withValue(t, hostsClaudeRead, "tool_response.file.content", longText("src", 60))
	p = withValue(t, string(p), "transcript_path", "/home/u/.factory/sessions/-home-u-proj/4c1e.jsonl")
	if hosts.DetectHost(p) != hosts.Droid {
		t.Fatalf("DetectHost = %s", hosts.DetectHost(p))
	}
	for i := 0; i < 2; i++ {
		r, err := e.HookResult(context.Background(), HookInput{Stdin: p})
		if err != nil || r.Reply != nil || r.Recorded {
			t.Fatalf("call %d: reply %s, recorded %v, err %v", i, r.Reply, r.Recorded, err)
		}
	}
}
