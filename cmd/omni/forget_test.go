package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestForgetErasesEverywhere: a value a --keep-secrets run
// stored (an exec output that folds and archives, a hook's command and
// output) and an older omni.log line are gone, after omni forget --stdin,
// from every file under $OMNI_HOME, the decoded log and omni log --json;
// the touched invocations replay as withheld and the rest identically;
// the archived block's handle says it was forgotten.
func TestForgetErasesEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in-process commands against a real store")
	}
	home := t.TempDir()
	t.Setenv("OMNI_HOME", home)
	t.Setenv("OMNI_NO_DAEMON", "1")
	t.Chdir(t.TempDir())
	omni := func(stdin string, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(args, streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return code, out.String() + errb.String()
	}
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc-forget"
	other := "ghp_" + strings.Repeat("Zx9", 12) // in the same outputs, not forgotten
	var sb strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&sb, "compiling unit %02d of the project\n", i)
	}
	body := sb.String() + "STRIPE_KEY=" + secret + "\nGITHUB=" + other + "\n"
	if err := os.WriteFile("out.txt", []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	omni("", "exec", "--keep-secrets", "--session", "s1", "--", "cat", "out.txt")
	_, folded := omni("", "exec", "--keep-secrets", "--session", "s1", "--", "cat", "out.txt")
	m := regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`).FindStringSubmatch(folded)
	if m == nil {
		t.Fatalf("the second run did not fold: %s", folded)
	}
	t.Setenv("OMNI_KEEP_SECRETS", "1")
	omni(secretPayload("Bash", "PostToolUse", "curl -H 'Authorization: Bearer "+secret+"' https://x", "ok"), "hook")
	t.Setenv("OMNI_KEEP_SECRETS", "")
	omni("", "exec", "--session", "s1", "--", "cat", "out.txt") // redacted at the door: holds neither
	f, err := os.OpenFile(filepath.Join(home, "omni.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "2026-01-01T00:00:00Z an older build logged %s\n", secret)
	f.Close()
	if _, log := omni("", "log", "--json"); !strings.Contains(log, secret) || !strings.Contains(log, other) {
		t.Fatal("the log does not hold the values: the test proves nothing")
	}

	code, out := omni(secret+"\n", "forget", "--stdin")
	if code != 0 || !strings.Contains(out, "in 3 batch(es) (seq 1..3)") || !strings.Contains(out, "3 input(s) withheld, 1 archived block(s) erased") {
		t.Fatalf("forget: exit %d\n%s", code, out)
	}
	scanHome(t, home, []string{secret})
	if _, log := omni("", "log", "--json"); strings.Contains(log, secret) || !strings.Contains(log, `"kind":"forgotten"`) {
		t.Errorf("omni log --json after forget:\n%s", log)
	}
	if code, out := omni("", "retrieve", m[1]); code != 1 || !strings.Contains(out, "omni forget") {
		t.Errorf("retrieve of the erased block: exit %d: %s", code, out)
	}
	if code, out := omni("", "replay", "--verify"); code != 0 || !strings.Contains(out, "withheld 3") || !strings.Contains(out, "differing 0") {
		t.Errorf("replay --verify: exit %d: %s", code, out)
	}
	if code, out := omni("", "replay", "--at", "2"); code != 0 || !strings.Contains(out, "withheld") {
		t.Errorf("replay --at 2: exit %d: %s", code, out)
	}
	if code, out := omni("", "forget", "short"); code != 2 || !strings.Contains(out, "too short") {
		t.Errorf("a short value: exit %d: %s", code, out)
	}
	if code, out := omni(secret, "forget", "--stdin"); code != 0 || !strings.Contains(out, "does not hold") {
		t.Errorf("a second forget: exit %d: %s", code, out)
	}
}
