package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// decodeObj decodes a reply as one JSON object, numbers kept as
// json.Number.
func decodeObj(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object: %s", b)
	}
	return m, nil
}

// onlyKeys reports an error unless m has exactly keys.
func onlyKeys(m map[string]any, keys ...string) error {
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("keys %v, want %v", got, want)
	}
	return nil
}

// withKey returns payload (a JSON object) with key set to v.
func withKey(t *testing.T, payload []byte, key string, v any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// preToolPayload is a Claude Code PreToolUse payload for Bash.
func preToolPayload(cmd, agent, mode string, extra map[string]any) []byte {
	in := map[string]any{"command": cmd, "description": "d", "timeout": 1000}
	for k, v := range extra {
		in[k] = v
	}
	p := map[string]any{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/p",
		"permission_mode": mode, "tool_input": in, "tool_use_id": "x"}
	if agent != "" {
		p["agent_id"] = agent
	}
	b, _ := json.Marshal(p)
	return b
}

// preToolWith returns a PreTool whose settings are one user file holding
// settings (JSON).
func preToolWith(t *testing.T, omni string, form Form, settings string) PreTool {
	t.Helper()
	f := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(f, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return PreTool{Omni: omni, Form: form, Sources: func(string) Sources { return Sources{User: f} }}
}

func TestReply(t *testing.T) {
	bypass := preToolWith(t, "/usr/local/bin/omni", Narrow, `{}`)
	r := Reply(preToolPayload("go test ./...", "a1", "bypassPermissions", nil), bypass)
	m, err := decodeObj(r)
	if err != nil {
		t.Fatalf("reply %s: %v", r, err)
	}
	h := m["hookSpecificOutput"].(map[string]any)
	if err := onlyKeys(h, "hookEventName", "updatedInput"); err != nil {
		t.Fatalf("bypass mode needs no permission decision: %v", err)
	}
	in := h["updatedInput"].(map[string]any)
	if err := onlyKeys(in, "command", "description", "timeout"); err != nil {
		t.Fatal(err)
	}
	if want := "/usr/local/bin/omni exec --session s1 --agent a1 --host claude-code --timeout-ms 1000 -- 'go test ./...'"; in["command"] != want {
		t.Fatalf("command %q, want %q", in["command"], want)
	}
	if in["description"] != "d" || in["timeout"] != json.Number("1000") {
		t.Fatalf("keys changed: %v", in)
	}
	all := preToolWith(t, "omni", All, `{}`)
	if got := Reply(preToolPayload("git log --format='%an it''s'", "", "bypassPermissions", nil), all); got == nil ||
		!strings.Contains(string(got), `-- 'git log --format='\\''%an it'\\'''\\''s'\\'''`) {
		t.Fatalf("quoting: %s", got)
	}
	if got := Reply(preToolPayload("ls *.{py,sh}", "", "bypassPermissions", map[string]any{"timeout": nil}), all); got != nil {
		t.Errorf("a timeout that is not a number: %s", got)
	}
	noTimeout := preToolPayload("make", "", "bypassPermissions", nil)
	noTimeout = []byte(strings.Replace(string(noTimeout), `"timeout":1000`, `"x":1`, 1))
	if got := Reply(noTimeout, bypass); !strings.Contains(string(got), "--timeout-ms 120000 ") {
		t.Errorf("default timeout: %s", got)
	}
	for _, cmd := range []string{"go test ./... > log.txt", "git log | head", "sleep 1 &", "echo $(date)",
		"omni exec ls", "rm -rf x", "ls -la", ""} {
		if got := Reply(preToolPayload(cmd, "", "bypassPermissions", nil), bypass); got != nil {
			t.Errorf("%q rewritten: %s", cmd, got)
		}
	}
	if got := Reply(preToolPayload("go test ./...", "", "bypassPermissions", map[string]any{"run_in_background": true}), bypass); got != nil {
		t.Errorf("a backgrounded call was rewritten: %s", got)
	}
	codex := withKey(t, preToolPayload("go test", "", "bypassPermissions", nil), "turn_id", "t1")
	if Reply(codex, bypass) != nil {
		t.Error("a Codex payload was rewritten")
	}
	post := withKey(t, preToolPayload("go test ./...", "", "bypassPermissions", nil), "hook_event_name", "PostToolUse")
	if Reply(post, bypass) != nil {
		t.Error("a PostToolUse payload was rewritten")
	}
	for _, k := range []struct {
		key string
		v   any
	}{{"host", "opencode"}, {"timestamp", "2026-12-01T00:00:00Z"}, {"transcript_path", "/h/.codex/sessions/rollout-1.jsonl"}} {
		if got := Reply(withKey(t, preToolPayload("go test ./...", "", "bypassPermissions", nil), k.key, k.v), bypass); got != nil {
			t.Errorf("a payload with %s=%v (not Claude Code's) was rewritten: %s", k.key, k.v, got)
		}
	}
	if Reply(preToolPayload("go test ./...", "", "bypassPermissions", nil), PreTool{Form: Narrow}) != nil {
		t.Error("rewritten with no omni binary to run")
	}
}

// The hazards of docs/HOSTS.md: permission rules are matched against the
// rewritten command only.
func TestPreToolRewritePermissions(t *testing.T) {
	rules := `{"permissions":{"allow":["Bash(go test:*)","Bash(cat:*)"],"deny":["Bash(cat secret.txt)","Bash(git push:*)","Read(./.env)"],"ask":["Bash(make deploy:*)"]}}`
	all := preToolWith(t, "omni", All, rules)
	for _, mode := range []string{"bypassPermissions", "default"} {
		for _, cmd := range []string{"cat secret.txt", "git push origin main", "cat .env", "make deploy"} {
			if got := Reply(preToolPayload(cmd, "", mode, nil), all); got != nil {
				t.Errorf("%s: %q is matched by a deny or ask rule and was rewritten: %s", mode, cmd, got)
			}
		}
	}
	// Outside bypass mode: an allowed command keeps its permission (the
	// reply allows it); one no rule allows is left to the host.
	r := Reply(preToolPayload("go test ./...", "", "default", nil), all)
	m, err := decodeObj(r)
	if err != nil {
		t.Fatalf("allowed go test: %s %v", r, err)
	}
	h := m["hookSpecificOutput"].(map[string]any)
	if h["permissionDecision"] != "allow" || !strings.Contains(h["permissionDecisionReason"].(string), "Bash(go test:*)") {
		t.Fatalf("allowed command: %v", h)
	}
	if got := Reply(preToolPayload("go build ./...", "", "default", nil), all); got != nil {
		t.Errorf("a command no rule allows was rewritten: %s", got)
	}
	broken := preToolWith(t, "omni", All, `{"permissions":`)
	if got := Reply(preToolPayload("go test ./...", "", "bypassPermissions", nil), broken); got != nil {
		t.Errorf("unreadable settings: rewritten: %s", got)
	}
}
