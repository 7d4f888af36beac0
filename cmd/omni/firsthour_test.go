package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
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
