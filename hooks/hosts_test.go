package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// The payloads of HOSTS.md §1.6 (Claude Code), §2 (Codex) and §3 (Gemini),
// key for key; tests swap only the text value for one long enough to fold.
const (
	hostsClaudeBash = `{
  "session_id": "3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10",
  "transcript_path": "/home/u/.claude/projects/-home-u-proj/3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10.jsonl",
  "cwd": "/home/u/proj",
  "permission_mode": "default",
  "agent_id": "a7d2e4",
  "agent_type": "general-purpose",
  "hook_event_name": "PostToolUse",
  "tool_name": "Bash",
  "tool_input": {"command": "go test ./...", "description": "Run the test suite"},
  "tool_response": {"stdout": "ok  \tpkg/a\t0.12s\n...", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false},
  "tool_use_id": "toolu_01AbCdEf",
  "duration_ms": 8123
}`
	hostsClaudeRead = `{
  "session_id": "3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10",
  "transcript_path": "/home/u/.claude/projects/-home-u-proj/3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10.jsonl",
  "cwd": "/home/u/proj",
  "hook_event_name": "PostToolUse",
  "tool_name": "Read",
  "tool_input": {"file_path": "/home/u/proj/internal/ledger/ledger.go", "offset": 1, "limit": 400},
  "tool_response": {"type": "text", "file": {"filePath": "/home/u/proj/internal/ledger/ledger.go",
    "content": "package ledger\n...", "numLines": 400, "startLine": 1, "totalLines": 812}},
  "tool_use_id": "toolu_01XyZ"
}`
	hostsClaudeFailure = `{
  "session_id": "3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10",
  "transcript_path": "/home/u/.claude/projects/-home-u-proj/3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10.jsonl",
  "cwd": "/home/u/proj",
  "hook_event_name": "PostToolUseFailure",
  "tool_name": "Bash",
  "tool_input": {"command": "npm test"},
  "tool_use_id": "toolu_01Fail",
  "error": "Exit code 1\n> proj@1.0.0 test\n> vitest run\n ... FAIL src/a.test.ts ...",
  "is_interrupt": false,
  "duration_ms": 4210
}`
	// Grep, Glob and WebFetch carry the required keys of sdk-tools.d.ts (§1.5).
	hostsClaudeGrep = `{"session_id": "s-grep", "cwd": "/home/u/proj", "hook_event_name": "PostToolUse",
  "tool_name": "Grep", "tool_input": {"pattern": "func ", "path": "/home/u/proj", "output_mode": "content", "-n": true},
  "tool_response": {"mode": "content", "numFiles": 3, "filenames": ["a.go", "b.go", "c.go"], "content": "a.go:1:func A()", "numLines": 1, "appliedLimit": 250},
  "tool_use_id": "toolu_grep"}`
	hostsClaudeGlob = `{"session_id": "s-glob", "cwd": "/home/u/proj", "hook_event_name": "PostToolUse",
  "tool_name": "Glob", "tool_input": {"pattern": "**/*.go", "path": "/home/u/proj"},
  "tool_response": {"durationMs": 12, "numFiles": 1, "filenames": ["/home/u/proj/a.go"], "truncated": false},
  "tool_use_id": "toolu_glob"}`
	hostsClaudeWebFetch = `{"session_id": "s-web", "cwd": "/home/u/proj", "hook_event_name": "PostToolUse",
  "tool_name": "WebFetch", "tool_input": {"url": "https://example.com/doc", "prompt": "summarise"},
  "tool_response": {"bytes": 5120, "code": 200, "codeText": "OK", "result": "short", "durationMs": 900, "url": "https://example.com/doc"},
  "tool_use_id": "toolu_web"}`
	// Codex PostToolUse: every required key of post-tool-use.command.input.
	hostsCodexBash = `{"session_id": "019a-codex", "turn_id": "turn-7", "transcript_path": null, "cwd": "/home/u/proj",
  "hook_event_name": "PostToolUse", "model": "gpt-5-codex", "permission_mode": "default",
  "tool_name": "Bash", "tool_input": {"command": "go test ./..."}, "tool_response": "ok",
  "tool_use_id": "call_01"}`
	// Gemini AfterTool: base input plus tool_name, tool_input, tool_response, mcp_context.
	hostsGeminiShell = `{"session_id": "gem-1", "transcript_path": "/home/u/.gemini/tmp/chat.json", "cwd": "/home/u/proj",
  "hook_event_name": "AfterTool", "timestamp": "2026-11-01T12:00:00Z",
  "tool_name": "run_shell_command", "tool_input": {"command": "go test ./..."},
  "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}, "mcp_context": null}`
	// OpenCode: what omni's plugin shim sends (cmd/omni/plugin/omni.js).
	hostsOpenCodeBash = `{"host": "opencode", "hook_event_name": "PostToolUse", "session_id": "ses_1", "cwd": "/home/u/proj",
  "tool_name": "bash", "tool_input": {"command": "go test ./...", "description": "tests"}, "tool_use_id": "call_1",
  "tool_response": {"output": "ok", "exit": 0}}`
)

// longText returns n distinct lines, long enough to pass every floor.
func longText(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s line %03d: the quick brown fox jumps over the lazy dog\n", tag, i)
	}
	return b.String()
}

// withValue returns payload with the value at the dotted path replaced by v.
func withValue(t *testing.T, payload, path string, v any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(payload), &doc); err != nil {
		t.Fatalf("payload: %v", err)
	}
	keys := strings.Split(path, ".")
	m := doc
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	m[keys[len(keys)-1]] = v
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestEngine(t *testing.T) (*Engine, *memlog.Log) {
	t.Helper()
	log := memlog.New()
	e, err := New(context.Background(), log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	return e, log
}

// twice sends payload two times and returns the second result; the first
// must print nothing.
func twice(t *testing.T, e *Engine, payload []byte) Result {
	t.Helper()
	ctx := context.Background()
	r1, err := e.HookResult(ctx, HookInput{Stdin: payload})
	if err != nil || r1.Reply != nil {
		t.Fatalf("first delivery: reply %s, err %v", r1.Reply, err)
	}
	r2, err := e.HookResult(ctx, HookInput{Stdin: payload})
	if err != nil || r2.Reply == nil {
		t.Fatalf("second delivery: no reply (reason %q), err %v", r2.Reason, err)
	}
	return r2
}

// decodeObj parses one JSON object, numbers kept exact; it must be the only
// value and end with one newline.
func decodeObj(b []byte) (map[string]any, error) {
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
		return nil, fmt.Errorf("reply is not one line ending in a newline")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("reply is not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("reply holds more than one value")
	}
	return m, nil
}

func onlyKeys(m map[string]any, keys ...string) error {
	for k := range m {
		found := false
		for _, w := range keys {
			found = found || k == w
		}
		if !found {
			return fmt.Errorf("unexpected key %q", k)
		}
	}
	for _, w := range keys {
		if _, ok := m[w]; !ok {
			return fmt.Errorf("missing key %q", w)
		}
	}
	return nil
}

func isInt(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// claudeUpdated checks the PostToolUse envelope (no sibling additionalContext)
// and returns updatedToolOutput, which must keep every original key.
func claudeUpdated(reply []byte, original map[string]any) (map[string]any, error) {
	m, err := decodeObj(reply)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(m, "hookSpecificOutput"); err != nil {
		return nil, err
	}
	hso, ok := m["hookSpecificOutput"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("hookSpecificOutput is not an object")
	}
	if err := onlyKeys(hso, "hookEventName", "updatedToolOutput"); err != nil {
		return nil, fmt.Errorf("hookSpecificOutput: %v", err)
	}
	if hso["hookEventName"] != "PostToolUse" {
		return nil, fmt.Errorf("hookEventName %v", hso["hookEventName"])
	}
	up, ok := hso["updatedToolOutput"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("updatedToolOutput is %T, not an object", hso["updatedToolOutput"])
	}
	keys := make([]string, 0, len(original))
	for k := range original {
		keys = append(keys, k)
	}
	if err := onlyKeys(up, keys...); err != nil {
		return nil, fmt.Errorf("updatedToolOutput: %v", err)
	}
	return up, nil
}

// sameExcept checks every key of a and b but the named ones is equal.
func sameExcept(a, b map[string]any, except ...string) error {
	for k, va := range a {
		skip := false
		for _, x := range except {
			skip = skip || k == x
		}
		if !skip && !reflect.DeepEqual(va, b[k]) {
			return fmt.Errorf("key %s changed: %v -> %v", k, b[k], va)
		}
	}
	return nil
}

func original(t *testing.T, payload []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var p map[string]any
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p["tool_response"].(map[string]any)
}

// checkClaudeBash: Bash stdout/stderr strings, interrupted bool, every
// original key kept with its value.
func checkClaudeBash(reply []byte, orig map[string]any) error {
	up, err := claudeUpdated(reply, orig)
	if err != nil {
		return err
	}
	if _, ok := up["stdout"].(string); !ok {
		return fmt.Errorf("stdout is not a string")
	}
	if _, ok := up["stderr"].(string); !ok {
		return fmt.Errorf("stderr is not a string")
	}
	if _, ok := up["interrupted"].(bool); !ok {
		return fmt.Errorf("interrupted is not a bool")
	}
	return sameExcept(up, orig, "stdout", "stderr")
}

// checkClaudeRead: Read type + file{filePath, content, numLines, startLine,
// totalLines}, numLines matching the content.
func checkClaudeRead(reply []byte, orig map[string]any) error {
	up, err := claudeUpdated(reply, orig)
	if err != nil {
		return err
	}
	if up["type"] != orig["type"] {
		return fmt.Errorf("type changed")
	}
	f, ok := up["file"].(map[string]any)
	of := orig["file"].(map[string]any)
	if !ok {
		return fmt.Errorf("file is not an object")
	}
	keys := make([]string, 0, len(of))
	for k := range of {
		keys = append(keys, k)
	}
	if err := onlyKeys(f, keys...); err != nil {
		return fmt.Errorf("file: %v", err)
	}
	c, ok := f["content"].(string)
	if !ok {
		return fmt.Errorf("file.content is not a string")
	}
	for _, k := range []string{"numLines", "startLine", "totalLines"} {
		if !isInt(f[k]) {
			return fmt.Errorf("file.%s is not an integer", k)
		}
	}
	if n, _ := f["numLines"].(json.Number).Int64(); int(n) != countLines(c) {
		return fmt.Errorf("file.numLines %d, content has %d lines", n, countLines(c))
	}
	return sameExcept(f, of, "content", "numLines")
}

// checkClaudeKeep: a tool whose only text key is text (a string, or for Glob
// an array of strings); every other key kept with its value.
func checkClaudeKeep(text string) func([]byte, map[string]any) error {
	return func(reply []byte, orig map[string]any) error {
		up, err := claudeUpdated(reply, orig)
		if err != nil {
			return err
		}
		switch orig[text].(type) {
		case string:
			if _, ok := up[text].(string); !ok {
				return fmt.Errorf("%s is not a string", text)
			}
		case []any:
			arr, ok := up[text].([]any)
			if !ok {
				return fmt.Errorf("%s is not an array", text)
			}
			for _, x := range arr {
				if _, ok := x.(string); !ok {
					return fmt.Errorf("%s holds a %T", text, x)
				}
			}
		}
		return sameExcept(up, orig, text)
	}
}

// checkCodex: Codex accepts a replacement only as decision "block" + reason.
func checkCodex(reply []byte, _ map[string]any) error {
	m, err := decodeObj(reply)
	if err != nil {
		return err
	}
	if err := onlyKeys(m, "decision", "reason"); err != nil {
		return err
	}
	if m["decision"] != "block" {
		return fmt.Errorf("decision %v", m["decision"])
	}
	if _, ok := m["reason"].(string); !ok {
		return fmt.Errorf("reason is not a string")
	}
	return nil
}

// checkGemini: hookSpecificOutput{hookEventName: AfterTool, tool_output: string}.
func checkGemini(reply []byte, _ map[string]any) error {
	m, err := decodeObj(reply)
	if err != nil {
		return err
	}
	if err := onlyKeys(m, "hookSpecificOutput"); err != nil {
		return err
	}
	h, ok := m["hookSpecificOutput"].(map[string]any)
	if !ok {
		return fmt.Errorf("hookSpecificOutput is not an object")
	}
	if err := onlyKeys(h, "hookEventName", "tool_output"); err != nil {
		return err
	}
	if h["hookEventName"] != "AfterTool" {
		return fmt.Errorf("hookEventName %v", h["hookEventName"])
	}
	if _, ok := h["tool_output"].(string); !ok {
		return fmt.Errorf("tool_output is not a string")
	}
	return nil
}

// checkOpenCode: the shim reads {"output": string}.
func checkOpenCode(reply []byte, _ map[string]any) error {
	m, err := decodeObj(reply)
	if err != nil {
		return err
	}
	if err := onlyKeys(m, "output"); err != nil {
		return err
	}
	if _, ok := m["output"].(string); !ok {
		return fmt.Errorf("output is not a string")
	}
	return nil
}

func TestHostRepliesMatchSchemas(t *testing.T) {
	long := longText("row", 60)
	globNames := strings.Split(strings.TrimSuffix(longText("/home/u/proj/pkg/file", 60), "\n"), "\n")
	cases := []struct {
		name, payload, path string
		value               any
		host                string
		check               func([]byte, map[string]any) error
		visible             func(reply map[string]any) string
	}{
		{"claude-bash", hostsClaudeBash, "tool_response.stdout", long, HostClaudeCode, checkClaudeBash,
			func(r map[string]any) string {
				return r["hookSpecificOutput"].(map[string]any)["updatedToolOutput"].(map[string]any)["stdout"].(string)
			}},
		{"claude-read", hostsClaudeRead, "tool_response.file.content", long, HostClaudeCode, checkClaudeRead,
			func(r map[string]any) string {
				return r["hookSpecificOutput"].(map[string]any)["updatedToolOutput"].(map[string]any)["file"].(map[string]any)["content"].(string)
			}},
		{"claude-grep", hostsClaudeGrep, "tool_response.content", long, HostClaudeCode, checkClaudeKeep("content"),
			func(r map[string]any) string {
				return r["hookSpecificOutput"].(map[string]any)["updatedToolOutput"].(map[string]any)["content"].(string)
			}},
		{"claude-glob", hostsClaudeGlob, "tool_response.filenames", globNames, HostClaudeCode, checkClaudeKeep("filenames"),
			func(r map[string]any) string {
				var s []string
				for _, x := range r["hookSpecificOutput"].(map[string]any)["updatedToolOutput"].(map[string]any)["filenames"].([]any) {
					s = append(s, x.(string))
				}
				return strings.Join(s, "\n")
			}},
		{"claude-webfetch", hostsClaudeWebFetch, "tool_response.result", long, HostClaudeCode, checkClaudeKeep("result"),
			func(r map[string]any) string {
				return r["hookSpecificOutput"].(map[string]any)["updatedToolOutput"].(map[string]any)["result"].(string)
			}},
		{"codex-bash", hostsCodexBash, "tool_response", long, HostCodex, checkCodex,
			func(r map[string]any) string { return r["reason"].(string) }},
		{"gemini-shell", hostsGeminiShell, "tool_response.llmContent", long, HostGemini, checkGemini,
			func(r map[string]any) string { return r["hookSpecificOutput"].(map[string]any)["tool_output"].(string) }},
		{"opencode-bash", hostsOpenCodeBash, "tool_response.output", long, HostOpenCode, checkOpenCode,
			func(r map[string]any) string { return r["output"].(string) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DetectHost([]byte(c.payload)); got != c.host {
				t.Fatalf("DetectHost = %s, want %s", got, c.host)
			}
			e, log := newTestEngine(t)
			// The exact payload: too small to fold, nothing printed.
			r0, err := e.HookResult(context.Background(), HookInput{Stdin: []byte(c.payload)})
			if err != nil || r0.Reply != nil {
				t.Fatalf("exact payload: reply %s err %v", r0.Reply, err)
			}
			p := withValue(t, c.payload, c.path, c.value)
			r := twice(t, e, p)
			var orig map[string]any
			if c.host != HostCodex {
				orig = original(t, p)
			}
			if err := c.check(r.Reply, orig); err != nil {
				t.Fatalf("reply %s\nshape: %v", r.Reply, err)
			}
			var m map[string]any
			_ = json.Unmarshal(r.Reply, &m)
			vis := c.visible(m)
			if !strings.Contains(vis, "[OMNI: identical to the 60 lines already shown, omni retrieve ") {
				t.Fatalf("visible text %q", vis)
			}
			b, err := e.Retrieve(context.Background(), r.Folds[0].Handle, r.Reader)
			if err != nil {
				t.Fatal(err)
			}
			want := long
			if c.name == "claude-glob" {
				want = strings.Join(globNames, "\n") + "\n"
			}
			if string(b) != want {
				t.Fatalf("retrieve gave %d bytes, want the %d original", len(b), len(want))
			}
			// The recorded host is the detected one, and a replay agrees.
			last, _ := log.Last(context.Background())
			batch, _ := log.Get(context.Background(), last-1)
			if batch[0].Invoked == nil || batch[0].Invoked.Host != c.host {
				t.Fatalf("Invoked %+v", batch[0].Invoked)
			}
			s, err := Verify(context.Background(), log, nil, nil)
			if err != nil || s.Identical != s.Compared {
				t.Fatalf("verify %+v %v", s, err)
			}
		})
	}
}

// Replies in a shape the host rejects must fail the checks above.
func TestWrongShapesFailChecks(t *testing.T) {
	bash := map[string]any{"stdout": "x", "stderr": "", "interrupted": false, "isImage": false}
	read := map[string]any{"type": "text", "file": map[string]any{"filePath": "/a", "content": "x\n",
		"numLines": json.Number("1"), "startLine": json.Number("1"), "totalLines": json.Number("1")}}
	wrong := []struct {
		name  string
		reply string
		check func([]byte, map[string]any) error
		orig  map[string]any
	}{
		{"bash bare string", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"short"}}`, checkClaudeBash, bash},
		{"bash mcp shape", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"status":"success","result":"short"}}}`, checkClaudeBash, bash},
		{"bash wrong key", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedResponse":{"stdout":"s","stderr":"","interrupted":false,"isImage":false}}}`, checkClaudeBash, bash},
		{"bash key dropped", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"s","stderr":"","interrupted":false}}}`, checkClaudeBash, bash},
		{"bash interrupted string", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"s","stderr":"","interrupted":"false","isImage":false}}}`, checkClaudeBash, bash},
		{"bash sibling banner", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"omni saved 90%","updatedToolOutput":{"stdout":"s","stderr":"","interrupted":false,"isImage":false}}}`, checkClaudeBash, bash},
		{"bash wrong event", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedToolOutput":{"stdout":"s","stderr":"","interrupted":false,"isImage":false}}}`, checkClaudeBash, bash},
		{"read numLines stale", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"type":"text","file":{"filePath":"/a","content":"x\ny\n","numLines":1,"startLine":1,"totalLines":1}}}}`, checkClaudeRead, read},
		{"read flat", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"type":"text","content":"x\n"}}}`, checkClaudeRead, read},
		{"codex updatedToolOutput", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"short"}}`, checkCodex, nil},
		{"codex extra key", `{"decision":"block","reason":"short","additionalContext":"x"}`, checkCodex, nil},
		{"codex approve", `{"decision":"approve","reason":"short"}`, checkCodex, nil},
		{"gemini claude shape", `{"hookSpecificOutput":{"hookEventName":"AfterTool","updatedToolOutput":"short"}}`, checkGemini, nil},
		{"gemini deny", `{"decision":"deny","reason":"short"}`, checkGemini, nil},
		{"opencode object", `{"output":{"text":"short"}}`, checkOpenCode, nil},
		{"two values", `{"output":"a"}` + "\n" + `{"output":"b"}`, checkOpenCode, nil},
	}
	for _, w := range wrong {
		if err := w.check([]byte(w.reply+"\n"), w.orig); err == nil {
			t.Errorf("%s: a reply the host rejects passed the check", w.name)
		}
	}
}

// Every host's own failure signal takes the failure path: recorded, no reply.
func TestHostFailuresNeverAnswered(t *testing.T) {
	long := longText("fail", 60)
	cases := []struct {
		name    string
		payload []byte
	}{
		{"claude failure event", []byte(hostsClaudeFailure)},
		{"claude bare string", withValue(t, hostsClaudeBash, "tool_response", "Error: Exit code 1\n"+long)},
		{"codex exit code", withValue(t, hostsCodexBash, "tool_response", map[string]any{"stdout": long, "stderr": "", "exit_code": 2})},
		{"gemini error", withValue(t, hostsGeminiShell, "tool_response", map[string]any{"llmContent": long, "returnDisplay": "", "error": map[string]any{"message": "boom"}})},
		{"gemini exit code", withValue(t, hostsGeminiShell, "tool_response.llmContent", long+"Exit Code: 1\n")},
		{"opencode exit", withValue(t, hostsOpenCodeBash, "tool_response", map[string]any{"output": long, "exit": 1})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			for i := 0; i < 3; i++ {
				r, err := e.HookResult(context.Background(), HookInput{Stdin: c.payload})
				if err != nil || r.Reply != nil {
					t.Fatalf("call %d: reply %s err %v", i, r.Reply, err)
				}
				if !r.Recorded {
					t.Fatalf("call %d: failure not recorded", i)
				}
			}
		})
	}
}

// Outputs over the inline cap, or persisted by the host, are left alone on
// Claude Code for every text tool; Agent (formerly Task) is never touched.
func TestClaudeCapAndUntouchedTools(t *testing.T) {
	big := longText("big", 600) // > 30,000 characters
	cases := []struct {
		name    string
		payload []byte
	}{
		{"bash cap", withValue(t, hostsClaudeBash, "tool_response.stdout", big)},
		{"bash persisted", withValue(t, string(withValue(t, hostsClaudeBash, "tool_response.stdout", longText("p", 60))), "tool_response.persistedOutputPath", "/tmp/x.txt")},
		{"grep cap", withValue(t, hostsClaudeGrep, "tool_response.content", big)},
		{"webfetch cap", withValue(t, hostsClaudeWebFetch, "tool_response.result", big)},
		{"grep files mode", withValue(t, string(withValue(t, hostsClaudeGrep, "tool_response.content", nil)), "tool_response.filenames", []string{"a", "b"})},
		{"agent", withValue(t, withToolName(t, hostsClaudeWebFetch, "Agent"), "tool_response", map[string]any{"status": "completed", "content": []any{map[string]any{"type": "text", "text": big}}})},
		{"task", withValue(t, withToolName(t, hostsClaudeWebFetch, "Task"), "tool_response", map[string]any{"status": "completed", "content": []any{map[string]any{"type": "text", "text": big}}})},
		{"omni exec", withValue(t, hostsClaudeBash, "tool_input.command", "omni exec --session s -- 'go test ./...'")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			for i := 0; i < 3; i++ {
				r, err := e.HookResult(context.Background(), HookInput{Stdin: c.payload})
				if err != nil || r.Reply != nil {
					t.Fatalf("call %d: reply %s err %v", i, r.Reply, err)
				}
			}
		})
	}
}

func withToolName(t *testing.T, payload, name string) string {
	return string(withValue(t, payload, "tool_name", name))
}

// SessionStart sources, subagent and compaction events of every host land on
// the right events; none is answered.
func TestLifecycleEvents(t *testing.T) {
	cases := []struct {
		payload string
		kind    events.Kind
	}{
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`, events.KindReaderStarted},
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`, events.KindReaderStarted},
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"fork"}`, events.KindReaderStarted},
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"clear"}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"SubagentStart","agent_id":"a1","agent_type":"general-purpose"}`, events.KindReaderStarted},
		{`{"session_id":"s","hook_event_name":"SubagentStop","agent_id":"a1","stop_hook_active":false}`, ""},
		{`{"session_id":"s","hook_event_name":"SessionEnd","reason":"logout"}`, events.KindSessionEnded},
		{`{"session_id":"s","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"PostCompact","trigger":"manual","compact_summary":"x"}`, events.KindCompacted},
		{`{"session_id":"s","turn_id":"t","hook_event_name":"PostCompact","trigger":"auto"}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"PreCompress","trigger":"auto","timestamp":"2026-11-01T12:00:00Z"}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"clear","timestamp":"2026-11-01T12:00:00Z"}`, events.KindCompacted},
		{`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, ""},
	}
	for _, c := range cases {
		e, log := newTestEngine(t)
		r, err := e.HookResult(context.Background(), HookInput{Stdin: []byte(c.payload)})
		if err != nil || r.Reply != nil {
			t.Fatalf("%s: reply %s err %v", c.payload, r.Reply, err)
		}
		last, _ := log.Last(context.Background())
		if c.kind == "" {
			if last != 0 {
				t.Fatalf("%s: recorded something", c.payload)
			}
			continue
		}
		batch, _ := log.Get(context.Background(), last)
		if len(batch) != 2 || batch[1].Kind != c.kind {
			t.Fatalf("%s: batch %+v", c.payload, batch)
		}
	}
}

// A compaction on Gemini (PreCompress) or Codex (PreCompact) empties the
// reader: the next delivery is whole again.
func TestHostCompactionForgets(t *testing.T) {
	long := longText("c", 60)
	for _, c := range []struct{ payload, compact string }{
		{hostsGeminiShell, `{"session_id":"gem-1","hook_event_name":"PreCompress","trigger":"auto","timestamp":"t"}`},
		{hostsCodexBash, `{"session_id":"019a-codex","turn_id":"t","hook_event_name":"PreCompact","trigger":"auto"}`},
	} {
		e, _ := newTestEngine(t)
		path := "tool_response.llmContent"
		if strings.Contains(c.payload, "turn_id") {
			path = "tool_response"
		}
		p := withValue(t, c.payload, path, long)
		twice(t, e, p)
		if _, err := e.HookResult(context.Background(), HookInput{Stdin: []byte(c.compact)}); err != nil {
			t.Fatal(err)
		}
		r, err := e.HookResult(context.Background(), HookInput{Stdin: p})
		if err != nil || r.Reply != nil {
			t.Fatalf("after compaction: reply %s err %v", r.Reply, err)
		}
	}
}

func TestPreToolRewrite(t *testing.T) {
	pre := func(cmd, agent string) []byte {
		p := map[string]any{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": cmd, "description": "d", "timeout": 1000}, "tool_use_id": "x"}
		if agent != "" {
			p["agent_id"] = agent
		}
		b, _ := json.Marshal(p)
		return b
	}
	r := PreToolRewrite(pre("go test ./...", "a1"), "/usr/local/bin/omni")
	m, err := decodeObj(r)
	if err != nil {
		t.Fatalf("reply %s: %v", r, err)
	}
	h := m["hookSpecificOutput"].(map[string]any)
	if err := onlyKeys(h, "hookEventName", "updatedInput"); err != nil {
		t.Fatalf("never auto-allow: %v", err)
	}
	in := h["updatedInput"].(map[string]any)
	if err := onlyKeys(in, "command", "description", "timeout"); err != nil {
		t.Fatal(err)
	}
	if want := "/usr/local/bin/omni exec --session s1 --agent a1 -- 'go test ./...'"; in["command"] != want {
		t.Fatalf("command %q, want %q", in["command"], want)
	}
	if in["description"] != "d" || in["timeout"] != json.Number("1000") {
		t.Fatalf("keys changed: %v", in)
	}
	if got := PreToolRewrite(pre("git log --format='%an it''s'", ""), "omni"); got == nil ||
		!strings.Contains(string(got), `omni exec --session s1 -- 'git log --format='\\''%an it'\\'''\\''s'\\'''`) {
		t.Fatalf("quoting: %s", got)
	}
	for _, cmd := range []string{"go test ./... > log.txt", "git log | head", "make; ls", "sleep 1 &", "cat <in",
		"echo $(date)", "FOO=1 go test", "cd x && go test", "omni exec ls", "rm -rf x", "go test \\\n ./...", ""} {
		if got := PreToolRewrite(pre(cmd, ""), "omni"); got != nil {
			t.Errorf("%q rewritten: %s", cmd, got)
		}
	}
	codex := withValue(t, string(pre("go test", "")), "turn_id", "t1")
	if PreToolRewrite(codex, "omni") != nil {
		t.Error("a Codex payload was rewritten")
	}
	if PreToolRewrite([]byte(hostsClaudeBash), "omni") != nil {
		t.Error("a PostToolUse payload was rewritten")
	}
}

// A Bash output the host persisted (over its cap) is read back whole from
// persistedOutputPath and run through the pipeline; when the result is under
// the cap the reply is inline, without the persisted keys (HOSTS.md §1.13,
// issue 15 item 4). An output that stays over the cap is left alone and
// nothing of it counts as shown; a replay decides the same.
func TestClaudePersistedOutputInlined(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 900; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCase%03d\n--- PASS: TestCase%03d (0.00s)\n", i, i)
	}
	b.WriteString("PASS\nok  \texample.com/big\t0.412s\n")
	full := b.String()
	dir := t.TempDir()
	path := filepath.Join(dir, "persisted.txt")
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	payload := func(p string) []byte {
		x := withValue(t, hostsClaudeBash, "tool_input.command", "go test -v ./...")
		x = withValue(t, string(x), "tool_response.stdout", full[:30000])
		x = withValue(t, string(x), "tool_response.persistedOutputPath", p)
		return withValue(t, string(x), "tool_response.persistedOutputSize", len(full))
	}
	e, log := newTestEngine(t)
	r, err := e.HookResult(context.Background(), HookInput{Stdin: payload(path)})
	if err != nil || r.Reply == nil {
		t.Fatalf("no inline reply: %v", err)
	}
	for _, k := range []string{"persistedOutputPath", "persistedOutputSize", persistedFromKey} {
		if bytes.Contains(r.Reply, []byte(k)) {
			t.Fatalf("reply keeps %s: %s", k, r.Reply)
		}
	}
	if !strings.Contains(r.Delivered, "ok  \texample.com/big\t0.412s") || utf8.RuneCountInString(r.Delivered) >= HostOutputCap {
		t.Fatalf("delivered %d chars: %.300q", len(r.Delivered), r.Delivered)
	}
	// The file may be gone by now: the recorded payload holds the output.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(context.Background(), log, nil, nil); err != nil || len(rep.Mismatches) != 0 || rep.Identical != rep.Compared {
		t.Fatalf("replay: %+v %v", rep, err)
	}

	// Unique lines do not shorten under the cap: no reply.
	uniq := longText("u", 700)
	if err := os.WriteFile(path, []byte(uniq), 0o644); err != nil {
		t.Fatal(err)
	}
	x := withValue(t, hostsClaudeBash, "tool_input.command", "./gen")
	x = withValue(t, string(x), "tool_response.stdout", uniq[:30000])
	x = withValue(t, string(x), "tool_response.persistedOutputPath", path)
	r, err = e.HookResult(context.Background(), HookInput{Stdin: x})
	if err != nil || r.Reply != nil {
		t.Fatalf("over the cap after the pipeline, yet replied: %s %v", r.Reply, err)
	}
	// A missing file: left alone.
	r, err = e.HookResult(context.Background(), HookInput{Stdin: payload(filepath.Join(dir, "gone.txt"))})
	if err != nil || r.Reply != nil {
		t.Fatalf("missing file, yet replied: %s %v", r.Reply, err)
	}
}
