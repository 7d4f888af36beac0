package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/doctor"
	"github.com/omnictx/omni/internal/hostsetup"
	"github.com/omnictx/omni/internal/hostsetup/hostsetuptest"
)

// doctorEnv is initEnv plus a real omni of this version first on PATH;
// it returns HOME and that binary.
func doctorEnv(t *testing.T) (string, string) {
	t.Helper()
	bin := hostOmniBinary(t)
	home := initEnv(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(home)
	// doctor runs in this test binary, a build other than the omni on PATH:
	// it takes that omni's version as its own, so only what a test sets up
	// is reported.
	v, own := doctor.BinaryVersion(bin), fullVersion
	fullVersion = func() string { return v }
	t.Cleanup(func() { fullVersion = own })
	return home, bin
}

// approveCodexHooks records Codex's approval of omni's hooks in
// ~/.codex/config.toml, as trusting them in codex does.
func approveCodexHooks(t *testing.T, home string) {
	t.Helper()
	o := hostsetup.Options{Home: home, CodexHome: filepath.Join(home, ".codex")}
	hs, err := hostsetup.CodexHookTrust(o)
	if err != nil || len(hs) == 0 {
		t.Fatalf("codex hooks %v %v", hs, err)
	}
	cfg := filepath.Join(o.CodexHome, "config.toml")
	s := hostsetuptest.ReadFile(t, cfg)
	for _, h := range hs {
		s += fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.Hash)
	}
	hostsetuptest.WriteFile(t, cfg, s)
}

func doctorJSON(t *testing.T, args ...string) (int, doctor.Report) {
	t.Helper()
	code, out, errs := initRun(t, append([]string{"doctor", "--json"}, args...)...)
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errs)
	}
	return code, rep
}

func hasProblem(rep doctor.Report, parts ...string) bool {
	for _, p := range rep.Problems {
		ok := true
		for _, s := range parts {
			ok = ok && strings.Contains(p, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestDoctorNothingRegistered(t *testing.T) {
	doctorEnv(t)
	code, rep := doctorJSON(t)
	if code != 1 || !hasProblem(rep, "not registered with any host", "omni init --claude") {
		t.Fatalf("exit %d, problems %q", code, rep.Problems)
	}
	if rep.Store != "ok" || !strings.HasPrefix(rep.Daemon, "off") || rep.OnPath == "" {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Hosts) != len(hostsetup.AllHosts) {
		t.Fatalf("hosts %+v", rep.Hosts)
	}
	t.Setenv("PATH", t.TempDir())
	if _, rep = doctorJSON(t); !hasProblem(rep, "not on $PATH", "add ") {
		t.Fatalf("problems %q", rep.Problems)
	}
}

func TestDoctorTiersAndFix(t *testing.T) {
	home, bin := doctorEnv(t)
	if code, out, errs := initRun(t, "init", "--claude", "--hook-only", "--bin", bin); code != 0 {
		t.Fatal(out, errs)
	}
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	if code, out, errs := initRun(t, "init", "--gemini", "--mcp-only", "--bin", bin); code != 0 {
		t.Fatal(out, errs)
	}
	if code, out, errs := initRun(t, "init", "--codex", "--bin", bin); code != 0 {
		t.Fatal(out, errs)
	}
	// Codex skips hooks nobody approved: a problem until they are.
	if code, rep := doctorJSON(t); code != 1 || !hasProblem(rep, "Codex CLI", "not approved", "Hooks need review") {
		t.Fatalf("unapproved Codex hooks: exit %d, problems %q", code, rep.Problems)
	}
	approveCodexHooks(t, home)
	code, out, _ := initRun(t, "doctor")
	if code != 0 {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
	for _, row := range []string{
		"Claude Code  Full               ~/.claude/settings.json  -",
		"Codex CLI    Full-text-only     ~/.codex/hooks.json      ~/.codex/config.toml",
		"Gemini CLI   MCP-only           -                        ~/.gemini/settings.json",
		"OpenCode     - (not installed)  -                        -",
		"no problems found",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("doctor output lacks %q:\n%s", row, out)
		}
	}

	// A duplicate from another path and a missing event: one problem line
	// naming the fix; --fix repairs it.
	settings := filepath.Join(home, ".claude", "settings.json")
	s := hostsetuptest.ReadFile(t, settings)
	s = strings.Replace(s, `"SubagentStart"`, `"SubagentStarted"`, 1)
	s = strings.Replace(s, `"hooks": {`, `"hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "/old/bin/omni hook"}]}],`, 1)
	hostsetuptest.WriteFile(t, settings, s)
	code, rep := doctorJSON(t)
	if code != 1 || !hasProblem(rep, "Claude Code", "incomplete, duplicated or out of date", "omni init --claude") || len(rep.Problems) != 1 {
		t.Fatalf("exit %d, problems %q", code, rep.Problems)
	}
	code, rep = doctorJSON(t, "--fix")
	if code != 0 || len(rep.Fixed) != 1 || len(rep.Problems) != 0 {
		t.Fatalf("--fix: exit %d, fixed %q, problems %q", code, rep.Fixed, rep.Problems)
	}
	hs := omniHandlersOf(jsoncValue(t, hostsetuptest.ReadFile(t, settings)))
	if len(hs) != 8 || len(hs["PreToolUse"]) != 1 || hs["Notification"] != nil || hs["SubagentStarted"] != nil || len(hs["SubagentStart"]) != 1 {
		t.Fatalf("after --fix: %v", hs)
	}
	if !strings.Contains(hostsetuptest.ReadFile(t, settings), `"notify-send done"`) {
		t.Fatal("--fix dropped the user's Stop entry")
	}

	// A registration that runs a binary that is gone.
	if code, out, errs := initRun(t, "init", "--claude", "--hook-only", "--bin", filepath.Join(home, "gone", "omni")); code != 0 {
		t.Fatal(out, errs)
	}
	code, rep = doctorJSON(t)
	if code != 1 || !hasProblem(rep, "runs a binary that does not exist", "omni init --claude") {
		t.Fatalf("exit %d, problems %q", code, rep.Problems)
	}
}

func TestDoctorHookErrors(t *testing.T) {
	home, bin := doctorEnv(t)
	if code, out, errs := initRun(t, "init", "--opencode", "--bin", bin); code != 0 {
		t.Fatal(out, errs)
	}
	log := filepath.Join(home, ".omni", "omni.log")
	os.MkdirAll(filepath.Dir(log), 0o700)
	var b strings.Builder
	for i := 0; i < 8; i++ {
		b.WriteString("2026-11-01T12:00:0" + string(rune('0'+i)) + "Z pid=1 hook: payload has no hook_event_name\n")
		b.WriteString("2026-11-01T12:00:0" + string(rune('0'+i)) + "Z pid=1 daemon unreachable, running call in-process\n")
	}
	hostsetuptest.WriteFile(t, log, b.String())
	code, out, _ := initRun(t, "doctor")
	if code != 0 || !strings.Contains(out, "OpenCode     Plugin") || !strings.Contains(out, "last hook errors") ||
		strings.Count(out, "hook: payload has no hook_event_name") != doctor.LogLines || strings.Contains(out, "daemon unreachable") {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
}
