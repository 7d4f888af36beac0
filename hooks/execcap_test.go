package hooks

import (
	"context"
	"strings"
	"testing"
)

// An exec output under the PreToolUse rewrite that Claude Code would not
// show whole (over 30,000 characters on success, over its ~10,000-character
// failure cut on failure) is never recorded as shown, so a later call does
// not fold it as "already shown" (docs/HOSTS.md: a 47 KB output the model
// saw as a 2 KB preview was later folded).
func TestExecHostCapNotRecorded(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines int
		code  int
		host  string
		folds bool
	}{
		{"success over the cap", 700, 0, HostClaudeCode, false},
		{"success over the cap, no host", 700, 0, "", true},
		{"failure over the failure cut", 200, 1, HostClaudeCode, false},
		{"success under the cap", 200, 0, HostClaudeCode, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, log := newTestEngine(t)
			ctx := context.Background()
			text := longText("cap", c.lines)
			res, err := e.Call(ctx, CallInput{Door: "exec", Command: "./run.sh", Text: text, ExitCode: c.code, Session: "s1", Host: c.host})
			if err != nil {
				t.Fatal(err)
			}
			if want := c.host != "" && !HostShows(text, c.code); res.Unshown != want {
				t.Fatalf("unshown %v, want %v (%d chars)", res.Unshown, want, len(text))
			}
			// The same lines again, as an ordinary successful hook call.
			again, err := e.Call(ctx, CallInput{Door: "exec", Command: "./run.sh", Text: longText("cap", 100), Session: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if folded := len(again.Folds) > 0; folded != c.folds {
				t.Fatalf("second call folded %v, want %v: %.200s", folded, c.folds, again.Delivered)
			}
			// The host is recorded: a replay decides the same way.
			if s, err := Verify(ctx, log, nil, nil); err != nil || s.Compared != 2 || s.Identical != 2 {
				t.Fatalf("verify %+v %v", s, err)
			}
		})
	}
}

func TestHostShows(t *testing.T) {
	if !HostShows(strings.Repeat("x", HostOutputCap-1), 0) || HostShows(strings.Repeat("é", HostOutputCap), 0) {
		t.Error("success cap")
	}
	if !HostShows(strings.Repeat("x", HostFailureCap-len("Exit code 1\n")), 1) || HostShows(strings.Repeat("x", HostFailureCap-len("Exit code 1\n")+1), 1) {
		t.Error("failure cut")
	}
}
