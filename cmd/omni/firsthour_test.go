package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// firstHour runs omni in-process against a fresh home of its own (no
// daemon) from a fresh working directory, and returns the exit code and
// what it printed on both streams.
func firstHour(t *testing.T) func(stdin string, args ...string) (int, string) {
	t.Helper()
	t.Setenv("OMNI_HOME", t.TempDir())
	t.Setenv("OMNI_NO_DAEMON", "1")
	t.Chdir(t.TempDir())
	return func(stdin string, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(args, streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return code, out.String() + errb.String()
	}
}

// TestDiffAfterForget: omni diff of an invocation whose input omni forget
// erased exits 1 (no invocation to show, as for a sequence without one)
// and says forget erased it, not that it held credentials.
func TestDiffAfterForget(t *testing.T) {
	omni := firstHour(t)
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc-diffgone"
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "linking object %02d of the build\n", i)
	}
	if err := os.WriteFile("out.txt", []byte(sb.String()+"KEY="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	omni("", "exec", "--keep-secrets", "--session", "s1", "--", "cat", "out.txt")
	if code, out := omni("", "diff", "1"); code != 0 {
		t.Fatalf("diff before forget: exit %d: %s", code, out)
	}
	if code, out := omni(secret+"\n", "forget", "--stdin"); code != 0 {
		t.Fatalf("forget: exit %d: %s", code, out)
	}
	code, out := omni("", "diff")
	if code != 1 || !strings.Contains(out, "'omni forget' erased it") || strings.Contains(out, "credentials") {
		t.Errorf("diff after forget: exit %d: %s", code, out)
	}

}

// TestStatsSaysWhereTerminalCallsWent: after only omni exec and a pipe (the
// README's first examples), omni stats says plainly that no model read
// anything yet and that the savings are in the terminal rows.
func TestStatsSaysWhereTerminalCallsWent(t *testing.T) {
	omni := firstHour(t)
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "module line %02d of go.mod-like text\n", i)
	}
	if err := os.WriteFile("go.mod.txt", []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	omni("", "exec", "--session", "demo", "--", "cat", "go.mod.txt")
	omni("", "exec", "--session", "demo", "--", "cat", "go.mod.txt")
	omni(sb.String(), "--session", "demo")
	code, out := omni("", "stats")
	if code != 0 || !strings.Contains(out, "No model read anything through omni yet. The 3 calls recorded ran on a terminal") ||
		!strings.Contains(out, "'omni stats --terminal' reports them in full") {
		t.Errorf("stats after terminal calls only: exit %d:\n%s", code, out)
	}
	if _, out := omni("", "stats", "--terminal"); strings.Contains(out, "No model read anything") {
		t.Errorf("stats --terminal repeats the note:\n%s", out)
	}
}

// TestDistillIsNoFailureOfTheProject: omni distill runs (what the model
// would read, made while debugging) never become the project's "Last
// failure" at the next SessionStart; a failing tool call through a hook
// does.
func TestDistillIsNoFailureOfTheProject(t *testing.T) {
	omni := firstHour(t)
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out := "--- FAIL: TestLedger (0.00s)\n    ledger_test.go:12: want 3, got 4\nFAIL\nFAIL\texample.com/ledger\t0.01s\n"
	if err := os.WriteFile("out.txt", []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, o := omni("", "distill", "--command", "go test ./ledger/", "--exit-code", "1", "out.txt"); code != 0 {
		t.Fatalf("distill: exit %d: %s", code, o)
	}
	start := fmt.Sprintf(`{"session_id":"s2","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, dir)
	omni(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\n","stderr":"","interrupted":false,"isImage":false}}`, dir), "hook")
	if _, ctx := omni(start, "hook"); strings.Contains(ctx, "Last failure") {
		t.Errorf("SessionStart after omni distill names it as the last failure: %s", ctx)
	}
	omni(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"go test ./ledger/"},"error":"Exit code 1\n%s"}`, dir, strings.ReplaceAll(strings.ReplaceAll(out, "\n", `\n`), "\t", `\t`)), "hook")
	if _, ctx := omni(start, "hook"); !strings.Contains(ctx, "Last failure") {
		t.Errorf("SessionStart after a failing hook call does not name it: %s", ctx)
	}
}

// TestReadmeNamesEveryHost: the README's "Register the hooks with omni
// init" sentence names every host flag omni init has (the flags whose
// usage is "set up <host>"), so no host is found only in --help.
func TestReadmeNamesEveryHost(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "Register the hooks with `omni init")
	if i < 0 {
		t.Fatal("README.md has no \"Register the hooks with `omni init\" sentence")
	}
	sentence := readme[i:]
	if j := strings.Index(sentence, ")"); j > 0 {
		sentence = sentence[:j]
	}
	var out bytes.Buffer
	cmd := newInitCmd(streams{Out: &out, Err: &out})
	n := 0
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !strings.HasPrefix(f.Usage, "set up ") {
			return
		}
		n++
		if !strings.Contains(sentence, "`--"+f.Name+"`") && !strings.Contains(sentence, "`omni init --"+f.Name+"`") {
			t.Errorf("README's omni init sentence lacks `--%s` (%s): %q", f.Name, f.Usage, sentence)
		}
	})
	if n < 7 {
		t.Errorf("found %d host flags on omni init; the test reads their usage \"set up ...\"", n)
	}
}
