package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// update rewrites the golden files under testdata/ (go test ./cmd/omni -update).
var update = flag.Bool("update", false, "rewrite golden files")

// Every command of this issue documents its flags, exit codes and an
// example in --help.
func TestStatsFamilyHelp(t *testing.T) {
	for _, args := range [][]string{{"stats"}, {"diff"}, {"explain"}, {"dashboard"}, {"goal"}, {"remember"}, {"session"}, {"log"}, {"forget"}} {
		var out, errb bytes.Buffer
		code := run(append(args, "--help"), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		h := out.String()
		if code != 0 || errb.Len() != 0 {
			t.Errorf("%v --help: exit %d, stderr %q", args, code, errb.String())
		}
		for _, want := range []string{"Usage:", "Flags:", "Exit codes", "Examples:", "  omni " + args[0]} {
			if !strings.Contains(h, want) {
				t.Errorf("%v --help lacks %q:\n%s", args, want, h)
			}
		}
	}
}

func TestStatsBadFlags(t *testing.T) {
	t.Setenv("OMNI_HOME", t.TempDir())
	t.Setenv("OMNI_NO_DAEMON", "1")
	for _, args := range [][]string{{"stats", "--view", "pie"}, {"stats", "--since", "soon"}} {
		var out, errb bytes.Buffer
		if code := run(args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}
