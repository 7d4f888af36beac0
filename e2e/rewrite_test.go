package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/testbin"
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

// fakeMake is a build runner: it prints 30 lines and leaves a file named
// made in its directory; "make helper" leaves a process behind that holds
// its output open; "make slow" prints, sleeps 8 s, prints again.
const fakeMake = `#!/bin/sh
case "$1" in
helper) echo "helper started"; sleep 300 & echo "make: done"; exit 0 ;;
slow) echo "slow-1"; sleep 8; echo "slow-2"; exit 0 ;;
esac
touch "$PWD/made"
i=0
while [ $i -lt 30 ]; do echo "cc -c -o obj/unit_$i.o src/unit_$i.c"; i=$((i+1)); done
echo "make: all done"
`

// fakePytest prints how many arguments reached it (after the host's shell
// expanded them) and each argument.
const fakePytest = `#!/bin/sh
echo "pytest got $# args"
for a in "$@"; do echo "arg: $a"; done
`

// TestClaudeCodeRewrite drives the PreToolUse rewrite `omni init --claude`
// installs through the real Claude Code in default permission mode (print
// mode: whatever would ask is refused), with the user's rules allowing the
// runners and denying curl and rm:
//   - a failing run is distilled, with its exit code and every failure line;
//   - the rewrite never widens what runs: every attack a held-out harness
//     ran against the earlier rewrite is refused by the host as without omni
//     (curl hidden in $'…', a descriptor-closing operator before rm, cd to
//     an expansion, $HOME or a link out of the project, redirections out of
//     the project, rm behind xargs, sh -c and env -S);
//   - the host's cwd carries over after `cd sub && make`;
//   - the host's shell set-up applies (globstar from ~/.bashrc);
//   - a process the runner leaves behind does not hold the call;
//   - past the tool's timeout the host's background file has the output so
//     far.
func TestClaudeCodeRewrite(t *testing.T) {
	t.Parallel()
	claude := cliPath(t, "claude-code", claudeSpec, claudeRel)
	bin := t.TempDir()
	for name, body := range map[string]string{"cargo": fakeCargo, "make": fakeMake, "pytest": fakePytest} {
		testbin.WriteExecutable(t, filepath.Join(bin, name), []byte(body))
	}
	s := newSandbox(t, bin)
	outside := filepath.Join(s.root, "outside")
	for _, d := range []string{filepath.Join(s.project, "sub"), filepath.Join(s.project, "victim"), outside,
		filepath.Join(s.project, "tests", "u", "v"), filepath.Join(s.home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"tests/test_a.py", "tests/u/test_b.py", "tests/u/v/test_c.py", "victim/keep"} {
		if err := os.WriteFile(filepath.Join(s.project, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(s.project, "out")); err != nil {
		t.Fatal(err)
	}
	// The user's shell set-up, which Claude Code snapshots.
	if err := os.WriteFile(filepath.Join(s.home, ".bashrc"), []byte("shopt -s globstar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userSettings := `{"permissions":{"allow":["Bash(cargo test:*)","Bash(make:*)","Bash(pytest:*)","Bash(pwd)","Bash(cat:*)"],"deny":["Bash(curl:*)","Bash(rm:*)"]}}`
	if err := os.WriteFile(filepath.Join(s.home, ".claude", "settings.json"), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	s.omniInit("--claude")
	reg, _ := os.ReadFile(filepath.Join(s.home, ".claude", "settings.json"))
	if !strings.Contains(string(reg), `omni-hook pretool"`) || !strings.Contains(string(reg), `"Bash(set -o pipefail)"`) ||
		strings.Contains(string(reg), `"permissionDecision"`) {
		t.Fatalf("omni init --claude did not register the rewrite and its allow rules:\n%s", reg)
	}

	type step struct {
		name, cmd string
		timeout   int
	}
	var mockURL string
	steps := []step{
		{"test", "cargo test", 0},
		{"dollarq", "pytest $'\\''; curl MOCK/evil #'", 0},
		{"fdclose", "<&- rm make -r victim", 0},
		{"cdvar", "cd ${PWD%/*} && make", 0},
		{"cdhome", "cd $HOME && make", 0},
		{"cdlink", "cd out && make", 0},
		{"redir", "pytest 2>../outside/redir", 0},
		{"redirrw", "pytest 1<>../outside/redirrw", 0},
		{"xargs", "echo victim | xargs rm -rf", 0},
		{"shc", "sh -c 'rm -rf victim'", 0},
		{"envs", "env -S 'rm -rf victim'", 0},
		{"glob", "pytest tests/**/test_*.py", 0},
		{"helper", "make helper", 30000},
		{"slow", "make slow", 4000},
		{"slowcat", "", 0},
		{"cdsub", "cd sub && make", 0},
		{"pwd", "pwd", 0},
	}
	notice := regexp.MustCompile(`Output is being written to: (\S+\.output)`)
	read := map[string]string{}
	m := newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens":100}`)
			return
		}
		if r.URL.Path == "/evil" {
			fmt.Fprint(w, "evil ran")
			return
		}
		_, results, err := ccConversation(body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for _, st := range steps {
			if _, ok := results[ccID(st.name)]; ok {
				continue
			}
			cmd := strings.ReplaceAll(st.cmd, "MOCK", mockURL)
			if st.name == "slowcat" {
				cmd = "cat /dev/null"
				if mm := notice.FindStringSubmatch(results[ccID("slow")]); mm != nil {
					cmd = "sleep 2; cat " + mm[1]
				}
			}
			in := map[string]any{"command": cmd, "description": "e2e " + st.name}
			if st.timeout > 0 {
				in["timeout"] = st.timeout
			}
			ccToolUse(w, ccID(st.name), "Bash", in)
			return
		}
		ccText(w, "E2E done.")
	})
	mockURL = m.URL
	env := []string{"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "IS_SANDBOX=1"}
	s.run(runTimeout, env, claude, "-p", "E2E-REWRITE: run the script.", "--permission-mode", "default",
		"--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5", "--tools", "Bash")
	for _, r := range m.requests() {
		if r.Path == "/evil" {
			t.Errorf("curl reached the mock: a command the deny rule names ran")
		}
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
	for _, st := range steps {
		t.Logf("%s (%s) read as:\n%s", st.name, st.cmd, tail(read[st.name], 700))
	}
	checkDistilled(t, read["test"])
	if !strings.HasSuffix(strings.TrimSpace(cut(read["pwd"])), "/proj/sub") {
		t.Errorf("the cwd did not carry over after `cd sub && make`: pwd read %q", read["pwd"])
	}
	if _, err := os.Stat(filepath.Join(s.project, "sub", "made")); err != nil {
		t.Errorf("`cd sub && make` did not run make in sub")
	}
	if _, err := os.Stat(filepath.Join(s.project, "victim", "keep")); err != nil {
		t.Errorf("the victim directory was removed despite the deny rule on rm")
	}
	for _, p := range []string{filepath.Join(s.root, "made"), filepath.Join(s.home, "made"), filepath.Join(outside, "made"),
		filepath.Join(outside, "redir"), filepath.Join(outside, "redirrw")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written: a command the host asks for ran", p)
		}
	}
	if !strings.Contains(read["glob"], "pytest got 3 args") {
		t.Errorf("the user's shell set-up (globstar) did not apply: %q", read["glob"])
	}
	if !strings.Contains(read["helper"], "make: done") || strings.Contains(read["helper"], "Output is being written to") {
		t.Errorf("a process left behind held the call: %q", read["helper"])
	}
	if notice.MatchString(read["slow"]) && !strings.Contains(read["slowcat"], "slow-1") {
		t.Errorf("past the tool's timeout the host's file lacks the output so far: %q", read["slowcat"])
	}
	if l := s.omniLog(); l != "" {
		t.Logf("omni.log:\n%s", tail(l, 2000))
	}
}

// cut drops Claude Code's trailing system reminder from a tool result.
func cut(s string) string {
	if i := strings.Index(s, "<system-reminder>"); i >= 0 {
		return s[:i]
	}
	return s
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
		t.Errorf("the failing run was not distilled through omni pipe, or a footer reached the model")
	}
}
