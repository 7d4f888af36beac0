package hostsetup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexHooksJSON is what omni init --codex wrote for /tmp/cxt/omni on
// 2026-12-01, plus a user handler that is not omni's.
const codexHooksJSON = `{
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/tmp/cxt/omni hook", "timeout": 30}]}
    ],
    "PreCompact": [
      {"hooks": [{"type": "command", "command": "notify-send compacting"}]},
      {"hooks": [{"type": "command", "command": "/tmp/cxt/omni hook", "timeout": 10}]}
    ],
    "PostCompact": [{"hooks": [{"type": "command", "command": "/tmp/cxt/omni hook", "timeout": 10}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "/tmp/cxt/omni hook", "timeout": 10}]}],
    "SubagentStart": [{"hooks": [{"type": "command", "command": "/tmp/cxt/omni hook", "timeout": 10}]}]
  }
}`

// The currentHash Codex CLI 0.169.0's app-server (hooks/list) reported for
// these handlers of /tmp/cxt/omni (docs/HOSTS.md, "Codex hook trust").
const (
	hashPostToolUse  = "sha256:9c76624f2cc8362e2e064afb3b7ce201ce5803549b05c7809d9685546585fe5e"
	hashPreCompact   = "sha256:b95aac4b4eebc72df520e48e093e0d2a5b97cf22ea30622a1dc406e30bf832e7"
	hashPostCompact  = "sha256:cc70df3508b995a2f7bbf5bd7ac9ca274ff712ff8d665593a3811a72d75e349c"
	hashSessionStart = "sha256:2f7c5efe1c5125184a5877755f70486615b3163226e1dfdcfcd5ecba79ab26a6"
	hashSubagent     = "sha256:dfc1f4312ecbcc29edfc4dbd690ee74ec8b6fdb02e5cd67b958a8d90b6091d2b"
)

func TestCodexHandlerHashMatchesCodex(t *testing.T) {
	hs, err := codexOmniHooks("/tmp/cxt/home/hooks.json", []byte(codexHooksJSON), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/tmp/cxt/home/hooks.json:post_tool_use:0:0":  hashPostToolUse,
		"/tmp/cxt/home/hooks.json:pre_compact:1:0":    hashPreCompact, // the user's group comes first
		"/tmp/cxt/home/hooks.json:post_compact:0:0":   hashPostCompact,
		"/tmp/cxt/home/hooks.json:session_start:0:0":  hashSessionStart,
		"/tmp/cxt/home/hooks.json:subagent_start:0:0": hashSubagent,
	}
	if len(hs) != len(want) {
		t.Fatalf("hooks %+v", hs)
	}
	for _, h := range hs {
		if want[h.Key] != h.Hash {
			t.Errorf("%s: hash %s, Codex says %s", h.Key, h.Hash, want[h.Key])
		}
	}
	if snakeCase("UserPromptSubmit") != "user_prompt_submit" {
		t.Error(snakeCase("UserPromptSubmit"))
	}
}

func writeCodex(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCodexHookTrust(t *testing.T) {
	home := t.TempDir()
	o := Options{Home: home, CodexHome: filepath.Join(home, ".codex")}
	// No hooks.json: nothing to say.
	if hs, err := CodexHookTrust(o); err != nil || hs != nil {
		t.Fatalf("no file: %v %v", hs, err)
	}
	hooksPath := filepath.Join(o.CodexHome, "hooks.json")
	writeCodex(t, hooksPath, codexHooksJSON)
	key := func(ev string, g int) string { return hooksPath + ":" + ev + ":" + string(rune('0'+g)) + ":0" }
	cfg := `model = "x"

[hooks.state."` + key("post_tool_use", 0) + `"]
trusted_hash = "` + hashPostToolUse + `"

[hooks.state."` + key("pre_compact", 1) + `"]
trusted_hash = "sha256:0000"

[hooks.state."` + key("session_start", 0) + `"]
trusted_hash = "` + hashSessionStart + `"
enabled = false
`
	writeCodex(t, filepath.Join(o.CodexHome, "config.toml"), cfg)
	hs, err := CodexHookTrust(o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range hs {
		got[h.Event] = h.Status
	}
	want := map[string]string{"PostToolUse": CodexTrusted, "PreCompact": CodexModified, "SessionStart": CodexDisabled,
		"PostCompact": CodexUntrusted, "SubagentStart": CodexUntrusted}
	for ev, st := range want {
		if got[ev] != st {
			t.Errorf("%s: %q, want %q", ev, got[ev], st)
		}
	}
	var problems []string
	codexTrustProblems(o, func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
	joined := strings.Join(problems, "\n")
	for _, w := range []string{"~/.codex/hooks.json are not approved (PostCompact, SubagentStart)", "changed since you approved them (PreCompact)",
		"turned off (SessionStart)", "Hooks need review"} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems lack %q:\n%s", w, joined)
		}
	}
	if len(problems) != 3 {
		t.Errorf("want one line per state:\n%s", joined)
	}

	// A project's hooks.json: not loaded while the project is untrusted.
	proj := filepath.Join(home, "proj")
	writeCodex(t, filepath.Join(proj, ".codex", "hooks.json"), codexHooksJSON)
	po := o
	po.Project = proj
	problems = nil
	codexTrustProblems(po, func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
	if len(problems) != 1 || !strings.Contains(problems[0], "a project Codex does not trust") || !strings.Contains(problems[0], `[projects."`+proj+`"]`) {
		t.Fatalf("untrusted project: %q", problems)
	}
	// Trusted, and every handler approved: nothing to say.
	cfg = "[projects.\"" + proj + "\"]\ntrust_level = \"trusted\"\n"
	phs, _ := CodexHookTrust(po)
	for _, h := range phs {
		cfg += "[hooks.state.\"" + h.Key + "\"]\ntrusted_hash = \"" + h.Hash + "\"\n"
	}
	writeCodex(t, filepath.Join(o.CodexHome, "config.toml"), cfg)
	problems = nil
	codexTrustProblems(po, func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
	if len(problems) != 0 {
		t.Fatalf("trusted project, approved hooks: %q", problems)
	}
	// A config.toml that is not TOML: doctor says it cannot tell.
	writeCodex(t, filepath.Join(o.CodexHome, "config.toml"), "[hooks.state\n")
	problems = nil
	codexTrustProblems(o, func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
	if len(problems) != 1 || !strings.Contains(problems[0], "cannot tell") {
		t.Fatalf("bad toml: %q", problems)
	}
}
