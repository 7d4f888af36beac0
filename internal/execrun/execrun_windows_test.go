//go:build windows

package execrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCmdLineVerbatim: a one-string command run by cmd.exe reaches it as
// written, so a double-quoted program path works (an escaped argument
// list would hand cmd \"…\"), and the exit status is the command's.
func TestCmdLineVerbatim(t *testing.T) {
	cmd := os.Getenv("ComSpec")
	if cmd == "" {
		cmd = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Args: []string{`"` + exe + `" -test.run NoSuchTest & echo after`}, Shell: cmd})
	if err != nil || res.Code != 0 || !strings.Contains(string(res.Output), "after") || !strings.Contains(string(res.Output), "PASS") {
		t.Fatalf("%q %d %v", res.Output, res.Code, err)
	}
	res, err = Run(Options{Args: []string{"exit 3"}, Shell: cmd})
	if err != nil || res.Code != 3 {
		t.Fatalf("exit 3: %q %d %v", res.Output, res.Code, err)
	}
}
