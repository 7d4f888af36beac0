package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks/hosts"
)

// fuzzClock is a fixed clock: every call returns the next second after base.
type fuzzClock struct{ t time.Time }

func (c *fuzzClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

var fuzzBase = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// fuzzPayload renders a Claude Code hook payload.
func fuzzPayload(fields map[string]any) []byte {
	p := map[string]any{"session_id": "3f1c9c8e-2b7a-4f0e-9d51-0c6c1f1f2a10", "cwd": "/home/dev/proj",
		"transcript_path": "/home/dev/.claude/projects/x.jsonl", "permission_mode": "default"}
	for k, v := range fields {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

func fuzzListing(n int, crlf bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %4d  /srv/data/shard-%02d/segment-%03d.idx  rebuilt from the journal", 1000+i, i%7, i*13)
		if crlf {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fuzzSeeds are real-shaped payloads: Bash, Read, the failure event,
// compaction, and malformed input.
func fuzzSeeds() [][2][]byte {
	bash := fuzzPayload(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input":    map[string]any{"command": "ls -l /srv/data", "description": "list"},
		"tool_response": map[string]any{"stdout": fuzzListing(40, false), "stderr": "", "interrupted": false, "isImage": false},
		"tool_use_id":   "toolu_01"})
	bashCRLF := fuzzPayload(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash",
		"tool_input":    map[string]any{"command": "type build.log"},
		"tool_response": map[string]any{"stdout": fuzzListing(30, true) + "done", "stderr": "warning: slow disk", "interrupted": false}})
	content := "package main\n\nimport \"fmt\"\n\n" + fuzzListing(60, false)
	read := fuzzPayload(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read",
		"tool_input": map[string]any{"file_path": "/home/dev/proj/main.go"},
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": "/home/dev/proj/main.go",
			"content": content, "numLines": 64, "startLine": 1, "totalLines": 64}}})
	subRead := bytes.Replace(read, []byte(`"cwd"`), []byte(`"agent_id":"a1","cwd"`), 1)
	failure := fuzzPayload(map[string]any{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "npm test"}, "error": "Exit code 1\n" + fuzzListing(20, false) + "FAIL src/a.test.ts"})
	compact := fuzzPayload(map[string]any{"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": nil})
	start := fuzzPayload(map[string]any{"hook_event_name": "SessionStart", "source": "compact"})
	return [][2][]byte{
		{bash, bash},
		{bash, compact},
		{bashCRLF, read},
		{read, subRead},
		{read, start},
		{failure, bash},
		{bash[:len(bash)/2], []byte("not json at all")},
		{[]byte(""), []byte("{}")},
		{[]byte(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":"\u0000\ufffd` + "\xff\xfe" + `"}}`), bash},
		{[]byte(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":"Exit code 2"}`), []byte(`[1,2,3]`)},
		{[]byte(`{"hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{"type":"image","file":{}}}`), []byte(`null`)},
		{[]byte(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_response":{"stdout":"","stderr":""}}`), compact},
	}
}

// scenarioSeeds returns consecutive hook payloads of the shared scenarios
// (../../shared/scenarios), when present.
func scenarioSeeds() [][2][]byte {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "scenarios", "*.json"))
	var out [][2][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var sc struct {
			Steps []struct {
				Hook json.RawMessage `json:"hook"`
			} `json:"steps"`
		}
		if json.Unmarshal(b, &sc) != nil {
			continue
		}
		var hooks [][]byte
		for _, s := range sc.Steps {
			if len(s.Hook) > 0 && len(s.Hook) < 64<<10 {
				hooks = append(hooks, s.Hook)
			}
		}
		for i := 0; i+1 < len(hooks) && i < 4; i++ {
			out = append(out, [2][]byte{hooks[i], hooks[i+1]})
		}
	}
	return out
}

// checkReply asserts the reply contract for one stdin: nothing, or exactly
// one JSON object; for Claude Code, hookSpecificOutput.updatedToolOutput
// keeps every key of the input's tool_response, and a Bash or Read reply
// changes only the text fields.
func checkReply(t *testing.T, stdin, reply []byte) {
	t.Helper()
	if reply == nil {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(reply))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		t.Fatalf("reply is not a JSON object (%v): %q", err, reply)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("reply holds more than one JSON value: %q", reply)
	}
	if hosts.DetectHost(stdin) != HostClaudeCode {
		return
	}
	var in struct {
		Event        string                     `json:"hook_event_name"`
		ToolName     string                     `json:"tool_name"`
		ToolResponse map[string]json.RawMessage `json:"tool_response"`
	}
	if err := json.Unmarshal(stdin, &in); err == nil && in.Event == "SessionStart" {
		// SessionStart may carry the project's context, and nothing else.
		var r struct {
			HSO map[string]json.RawMessage `json:"hookSpecificOutput"`
		}
		if json.Unmarshal(reply, &r) != nil || len(r.HSO) != 2 || string(r.HSO["hookEventName"]) != `"SessionStart"` || r.HSO["additionalContext"] == nil {
			t.Fatalf("SessionStart reply is not {hookEventName, additionalContext}: %q", reply)
		}
		return
	}
	if err := json.Unmarshal(stdin, &in); err != nil || in.ToolResponse == nil {
		t.Fatalf("a reply to a payload without a tool_response object: %q", reply)
	}
	var hso struct {
		HookEventName     string                     `json:"hookEventName"`
		UpdatedToolOutput map[string]json.RawMessage `json:"updatedToolOutput"`
	}
	if err := json.Unmarshal(obj["hookSpecificOutput"], &hso); err != nil || hso.UpdatedToolOutput == nil {
		t.Fatalf("reply without hookSpecificOutput.updatedToolOutput: %q", reply)
	}
	if hso.HookEventName != "PostToolUse" {
		t.Fatalf("hookEventName %q", hso.HookEventName)
	}
	out := hso.UpdatedToolOutput
	var missing []string
	for k := range in.ToolResponse {
		if _, ok := out[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Fatalf("updatedToolOutput drops tool_response keys %v", missing)
	}
	same := func(a, b json.RawMessage) bool {
		var x, y bytes.Buffer
		return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
	}
	switch in.ToolName {
	case "Bash":
		for k, v := range in.ToolResponse {
			if k != "stdout" && k != "stderr" && !same(v, out[k]) {
				t.Fatalf("Bash reply changed tool_response.%s", k)
			}
		}
		if string(out["stderr"]) != `""` {
			t.Fatalf("Bash reply stderr %s, want \"\"", out["stderr"])
		}
	case "Read":
		for k, v := range in.ToolResponse {
			if k != "file" && !same(v, out[k]) {
				t.Fatalf("Read reply changed tool_response.%s", k)
			}
		}
		var fin, fout map[string]json.RawMessage
		if json.Unmarshal(in.ToolResponse["file"], &fin) != nil || json.Unmarshal(out["file"], &fout) != nil {
			t.Fatal("Read reply without a file object")
		}
		for k, v := range fin {
			if _, ok := fout[k]; !ok {
				t.Fatalf("Read reply drops file.%s", k)
			}
			if k != "content" && k != "numLines" && !same(v, fout[k]) {
				t.Fatalf("Read reply changed file.%s", k)
			}
		}
	}
}

// runHooks feeds stdins to e in order, checking each reply, and returns the
// replies.
func runHooks(t *testing.T, e *Engine, stdins [][]byte) [][]byte {
	t.Helper()
	ctx := context.Background()
	var replies [][]byte
	for i, in := range stdins {
		res, err := e.HookResult(ctx, HookInput{Stdin: in})
		if err != nil && strings.HasPrefix(err.Error(), "panic:") {
			t.Fatalf("stdin %d: %v", i, err)
		}
		if err != nil && res.Reply != nil {
			t.Fatalf("stdin %d: a reply with an error: %v", i, err)
		}
		checkReply(t, in, res.Reply)
		replies = append(replies, res.Reply)
	}
	return replies
}

// FuzzHook: arbitrary stdin into an Engine over memlog never panics; every
// reply keeps the host's shape; a second engine gives identical replies for
// the same stdin sequence; an engine rebuilt by New from the log answers as
// the live one; and replay verifies every invocation.
func FuzzHook(f *testing.F) {
	for _, s := range append(fuzzSeeds(), scenarioSeeds()...) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ctx := context.Background()
		seq := [][]byte{a, b, a, b, a}
		log1, log2 := memlog.New(), memlog.New()
		c1, c2 := &fuzzClock{fuzzBase}, &fuzzClock{fuzzBase}
		e1, err := New(ctx, log1, Options{Now: c1.now})
		if err != nil {
			t.Fatal(err)
		}
		e2, err := New(ctx, log2, Options{Now: c2.now})
		if err != nil {
			t.Fatal(err)
		}
		r1 := runHooks(t, e1, seq)
		r2 := runHooks(t, e2, seq)
		for i := range r1 {
			if !bytes.Equal(r1[i], r2[i]) {
				t.Fatalf("stdin %d: two engines replied differently:\n%q\n%q", i, r1[i], r2[i])
			}
		}
		// Rebuilt from the log, an engine holds the live engine's state.
		c3 := &fuzzClock{c1.t}
		e3, err := New(ctx, log1, Options{Now: c3.now})
		if err != nil {
			t.Fatal(err)
		}
		probe := []byte(b)
		p1 := runHooks(t, e1, [][]byte{probe})
		p3 := runHooks(t, e3, [][]byte{probe})
		if !bytes.Equal(p1[0], p3[0]) {
			t.Fatalf("engine rebuilt by New replied differently:\n%q\n%q", p1[0], p3[0])
		}
		// Replay reruns every recorded invocation byte for byte (log2 has
		// only e2's appends).
		s, err := Verify(ctx, log2, nil, nil)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if s.Identical != s.Compared {
			t.Fatalf("replay: %d of %d invocations identical (mismatches %v)", s.Identical, s.Compared, s.Mismatches)
		}
	})
}
