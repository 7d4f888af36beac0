package rewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTicketHoldsNoSecret: a ticket lies in the omni home from the hook
// until the filter redeems it, and for a day when the host never runs
// the rewritten command (the user stops it, another hook blocks it). A
// credential on the command line must not be written there (rule 2);
// the rewritten command itself still runs the line exactly as written
// (rule 8), and OMNI_KEEP_SECRETS=1 keeps the ticket's line whole.
func TestTicketHoldsNoSecret(t *testing.T) {
	tok := genToken(t)
	cmd := "go test ./... -args --token=" + tok
	for _, keep := range []bool{false, true} {
		env := map[string]string{}
		if keep {
			env["OMNI_KEEP_SECRETS"] = "1"
		}
		o := settings(t, map[string][]string{"allow": append([]string{"Bash(go test:*)"}, omniRules...)}, env)
		got, _ := rewritten(t, Reply(payload(cmd, "default", nil), o))
		if !strings.Contains(got, cmd+" 2>&1 |") {
			t.Fatalf("rewritten command %q does not run %q as written", got, cmd)
		}
		m, _ := filepath.Glob(filepath.Join(TicketDir(o.Home), "*.json"))
		if len(m) != 1 {
			t.Fatalf("tickets: %v", m)
		}
		b, _ := os.ReadFile(m[0])
		if has := strings.Contains(string(b), tok); has != keep {
			t.Errorf("keep %v: ticket holds the credential: %v\n%s", keep, has, b)
		}
	}
}
