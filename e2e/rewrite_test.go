package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCargo prints a failing `cargo test` run (41 tests, one failure) and
// exits 101; with --release it leaves a file behind, so a run the user's
// deny rule should have stopped is visible.
const fakeCargo = `#!/bin/sh
case "$*" in *--release*) touch "$PWD/ran-release" ;; esac
echo "   Compiling m v0.1.0 (/p)"
echo "    Finished test profile [unoptimized] target(s) in 1.00s"
echo "     Running unittests src/lib.rs (target/debug/deps/m-1)"
echo
echo "running 41 tests"
i=0
while [ $i -lt 40 ]; do echo "test tests::case_$i ... ok"; i=$((i+1)); done
echo "test tests::widest ... FAILED"
echo
echo "failures:"
echo
echo "---- tests::widest stdout ----"
echo "thread 'tests::widest' panicked at src/lib.rs:43:9:" >&2
echo "assertion failed: left == right" >&2
echo
echo "failures:"
echo "    tests::widest"
echo
echo "test result: FAILED. 40 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.15s"
echo
echo "error: test failed, to rerun pass --lib"
exit 101
`

// TestClaudeCodeRewrite runs the PreToolUse rewrite that omni init --claude
// installs on the real Claude Code (bypass mode, as the suite runs it): a
// failing test run is distilled through omni exec with its exit code and
// every failure line, no footer; a command the project's deny rule names is
// still denied (docs/HOSTS.md: the rule stopped matching the rewritten
// command before).
func TestClaudeCodeRewrite(t *testing.T) {
	t.Parallel()
	claude := cliPath(t, "claude-code", claudeSpec, claudeRel)
	t.Run("bypass", func(t *testing.T) {
		read, project := rewriteRun(t, claude, `{"permissions":{"deny":["Bash(cargo test --release:*)"]}}`, "--dangerously-skip-permissions")
		checkDistilled(t, read["test"])
		if _, err := os.Stat(filepath.Join(project, "ran-release")); err == nil {
			t.Errorf("the command the deny rule names ran; the model read: %s", read["denied"])
		}
		t.Logf("the denied call as the model read it: %s", read["denied"])
	})
	// Default mode: an allowed command stays allowed once rewritten (the
	// reply allows it; print mode denies whatever would ask).
	t.Run("default-allowed", func(t *testing.T) {
		read, _ := rewriteRun(t, claude, `{"permissions":{"allow":["Bash(cargo test:*)"],"deny":["Bash(cargo test --release:*)"]}}`, "--permission-mode", "default")
		checkDistilled(t, read["test"])
	})
}

// checkDistilled checks the failing cargo run as the model read it.
func checkDistilled(t *testing.T, got string) {
	t.Helper()
	t.Logf("the failing run as the model read it (%d chars):\n%s", len(got), got)
	for _, must := range []string{"Exit code 101", "test tests::widest ... FAILED", "assertion failed: left == right",
		"test result: FAILED. 40 passed; 1 failed"} {
		if !strings.Contains(got, must) {
			t.Errorf("the failing run lost %q", must)
		}
	}
	if strings.Contains(got, "test tests::case_7 ... ok") || strings.Contains(got, "[omni]") {
		t.Errorf("the failing run was not distilled through omni exec, or its footer reached the model")
	}
}

// rewriteRun plays `cargo test` then `cargo test --release` on Claude Code
// with omni init --claude and the project settings given, and returns what
// the model read per step and the project directory.
func rewriteRun(t *testing.T, claude, settings string, mode ...string) (map[string]string, string) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "cargo"), []byte(fakeCargo), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, bin)
	if err := os.MkdirAll(filepath.Join(s.project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	s.omniInit("--claude")
	// The rewrite is answered by the thin client beside omni, so no Bash
	// call waits for the full binary to start.
	if reg, err := os.ReadFile(filepath.Join(s.home, ".claude", "settings.json")); err != nil ||
		!strings.Contains(string(reg), `omni-hook pretool"`) {
		t.Fatalf("omni init --claude did not register omni-hook pretool (%v):\n%s", err, reg)
	}
	steps := []struct{ name, cmd string }{{"test", "cargo test"}, {"denied", "cargo test --release"}}
	m := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens":100}`)
			return
		}
		_, results, err := ccConversation(body)
		if err != nil {
			t.Errorf("claude mock: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		for _, st := range steps {
			if _, ok := results[ccID(st.name)]; !ok {
				ccToolUse(w, ccID(st.name), "Bash", map[string]any{"command": st.cmd, "description": "e2e " + st.name})
				return
			}
		}
		ccText(w, "E2E done.")
	})
	env := []string{"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "IS_SANDBOX=1"}
	args := append([]string{"-p", "E2E-REWRITE: run the script."}, mode...)
	s.run(runTimeout, env, claude, append(args, "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5", "--tools", "Bash")...)
	read := map[string]string{}
	for _, r := range m.requests() {
		if r.Path != "/v1/messages" {
			continue
		}
		_, res, _ := ccConversation(r.Body)
		for _, st := range steps {
			if v, ok := res[ccID(st.name)]; ok {
				read[st.name] = v
			}
		}
	}
	if l := s.omniLog(); l != "" {
		t.Logf("omni.log:\n%s", tail(l, 2000))
	}
	return read, s.project
}
