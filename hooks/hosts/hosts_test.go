package hosts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf16"
)

// The frame splitters take only what the host writes.
func TestFrameSplitters(t *testing.T) {
	for _, c := range []struct {
		in               string
		head, body, tail string
		ok               bool
	}{
		{"Output: a\nb\nExit Code: 1\nProcess Group PGID: 12\n", "Output: ", "a\nb\n", "Exit Code: 1\nProcess Group PGID: 12\n", true},
		{"Output: a\nSignal: SIGTERM\nBackground PIDs: 4, 5\nProcess Group PGID: 12", "Output: ", "a\n", "Signal: SIGTERM\nBackground PIDs: 4, 5\nProcess Group PGID: 12", true},
		{"Output: a\nProcess Group PGID: x\n", "", "", "", false},
		{"a\nProcess Group PGID: 12\n", "", "", "", false},
		{"Output: (empty)\nProcess Group PGID: 9\n", "Output: ", "(empty)\n", "Process Group PGID: 9\n", true},
	} {
		f, ok := geminiShellFrame(c.in)
		if ok != c.ok || (ok && (f.head != c.head || f.body != c.body || f.tail != c.tail)) {
			t.Errorf("geminiShellFrame(%q) = %+v %v", c.in, f, ok)
		}
		if ok && f.head+f.body+f.tail != c.in {
			t.Errorf("geminiShellFrame(%q) does not put the text back together", c.in)
		}
	}
	if _, ok := codexFrame("Total output lines: 3\n\na\n"); ok {
		t.Error("codexFrame split a text without Codex's warning line")
	}
	if f, ok := codexFrame("Warning: truncated output (original token count: 27224)\nTotal output lines: 20000\n\n1\n2\n"); !ok || f.body != "1\n2\n" {
		t.Errorf("codexFrame: %+v %v", f, ok)
	}
}

// The exit code is read from the last matching record of Codex's session
// file; none, or a file that is not there, is unknown.
func TestCodexExitCode(t *testing.T) {
	path := codexSession(t, "call_01", 3)
	if code, ok := codexExitCode(path, "call_01"); !ok || code != 3 {
		t.Errorf("codexExitCode = %d %v, want 3 true", code, ok)
	}
	for _, c := range [][2]string{{path, "call_02"}, {path, ""}, {"", "call_01"}, {path + ".gone", "call_01"}} {
		if code, ok := codexExitCode(c[0], c[1]); ok {
			t.Errorf("codexExitCode(%q, %q) = %d, want unknown", c[0], c[1], code)
		}
	}
}

// codexSession writes a Codex session file in which the call id exited
// with code (the item_completed record Codex 0.169.0 writes, then another
// record of the call) and returns its path.
func codexSession(t *testing.T, id string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2026-12-01T14-08-30-019a.jsonl")
	item := map[string]any{"timestamp": "2026-12-01T14:08:31Z", "type": "event_msg", "payload": map[string]any{
		"type": "item_completed", "item": map[string]any{"type": "CommandExecution", "id": id,
			"status": "completed", "aggregated_output": "…", "exit_code": code}}}
	other := map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": id, "output": "x"}}
	var b []byte
	for _, v := range []any{item, other} {
		line, _ := json.Marshal(v)
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Prepare reads a Codex shell call's exit code before the Engine's lock,
// from the session file the payload names: the code when it is there,
// unknown when it is not; any other payload reads nothing.
func TestPrepareReadsCodexExit(t *testing.T) {
	path := codexSession(t, "call_01", 3)
	payload := func(path, id string) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": "s", "turn_id": "t1", "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]string{"command": "make"}, "tool_response": "x\n",
			"tool_use_id": id, "transcript_path": path})
		return b
	}
	claude := []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"call_01","transcript_path":` + strconv.Quote(filepath.Join(filepath.Dir(path), "s.jsonl")) +
		`,"tool_response":{"stdout":"\"turn_id\": \"t1\" ` + path + `\n","stderr":""}}`)
	if mayBeCodex(claude) {
		t.Error("a Claude Code payload whose output spells turn_id and rollout- is decoded to tell it from Codex's")
	}
	for _, c := range []struct {
		stdin []byte
		want  string
	}{
		{payload(path, "call_01"), "3"},
		{payload(path, "call_02"), ExitUnknown},
		{payload(path+".gone", "call_01"), ExitUnknown},
		// Claude Code's payload, its transcript beside the session file.
		{[]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"call_01","transcript_path":` + strconv.Quote(filepath.Join(filepath.Dir(path), "s.jsonl")) + `}`), ""},
		// Claude Code's payload whose output spells Codex's key and its
		// session file's name: not Codex's.
		{claude, ""},
		// Codex's key in another case is still Codex's.
		{bytes.Replace(payload(path, "call_01"), []byte(`"turn_id"`), []byte(`"Turn_ID"`), 1), "3"},
	} {
		out, o := Prepare(c.stdin)
		if o.HostExitCode != c.want || string(out) != string(c.stdin) {
			t.Errorf("Prepare(%s) = %q, exit %q; want it unchanged, exit %q", c.stdin, out, o.HostExitCode, c.want)
		}
	}
}

// A partly new read keeps each kept line's own number and counts the
// folded ones, so the numbers after a marker stay right.
func TestOpenCodeReadRender(t *testing.T) {
	text := "<path>/p/f</path>\n<type>file</type>\n<content>\n1: a\n2: b\n3: c\n4: d\n\n(End of file - total 4 lines)\n</content>"
	r, ok := parseOpenCodeRead(text)
	if !ok || r.body() != "a\nb\nc\nd\n" {
		t.Fatalf("parse: %v %q", ok, r.body())
	}
	got, err := r.render("a\n[OMNI: 2 lines already shown, omni retrieve 0123456789abcdef]\nd\n")
	want := "<path>/p/f</path>\n<type>file</type>\n<content>\n1: a\n[OMNI: 2 lines already shown, omni retrieve 0123456789abcdef]\n4: d\n\n(End of file - total 4 lines)\n</content>"
	if err != nil || got != want {
		t.Fatalf("render = %q, %v\nwant %q", got, err, want)
	}
	if _, err := r.render("a\nx\n"); err == nil {
		t.Fatal("a decision that does not line up rendered")
	}
	if _, ok := parseOpenCodeRead("plain text\n"); ok {
		t.Fatal("parsed a text without OpenCode's frame")
	}
}

// Every host's detection rule is reachable: a payload of each host's
// signature is told apart, whatever the registration order.
func TestDetectEveryHost(t *testing.T) {
	for want, s := range map[string]Signature{
		OpenCode:   {Host: OpenCode, HookEventName: "PostToolUse", TurnID: json.RawMessage(`"t"`)},
		Copilot:    {Host: Copilot, HookEventName: "PostToolUse"},
		Cline:      {Host: Cline, HookEventName: "PostToolUse"},
		Cursor:     {Host: Cursor, HookEventName: "PostToolUse"},
		Droid:      {HookEventName: "PostToolUse", TranscriptPath: "/home/u/.factory/sessions/s.jsonl", TurnID: json.RawMessage(`"t"`)},
		Gemini:     {HookEventName: "AfterTool", TurnID: json.RawMessage(`"t"`)},
		Codex:      {HookEventName: "PostToolUse", TurnID: json.RawMessage(`"t"`), Timestamp: json.RawMessage(`"x"`)},
		ClaudeCode: {HookEventName: "PostToolUse", Timestamp: json.RawMessage(`"x"`)},
	} {
		if got := Detect(s); got != want {
			t.Errorf("Detect(%+v) = %s, want %s", s, got, want)
		}
	}
	if got := Detect(Signature{HookEventName: "Notification", Timestamp: json.RawMessage(`"x"`)}); got != Gemini {
		t.Errorf("a timestamp on a non-tool event: %s, want %s", got, Gemini)
	}
	if got := Detect(Signature{HookEventName: "SessionStart", TranscriptPath: "/h/.codex/sessions/rollout-1.jsonl"}); got != Codex {
		t.Errorf("a Codex session file: %s, want %s", got, Codex)
	}
	for _, n := range Names() {
		if p, ok := Lookup(n); !ok || p.Deliver == nil {
			t.Errorf("host %s has no Deliver", n)
		}
	}
}

// utf16Len counts as JavaScript does; Cline's cap is in those units.
func TestUTF16Len(t *testing.T) {
	for _, s := range []string{"", "abc", "é", "😀x", "日本"} {
		if got, want := utf16Len(s), len(utf16.Encode([]rune(s))); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
	}
}
