package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLogNeverThroughALink: omni.log (and any log AppendLog opens) that is
// a link to another file is not written through; a regular one is.
func TestLogNeverThroughALink(t *testing.T) {
	home := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(home, "omni.log")); err != nil {
		t.Fatal(err)
	}
	Logf(home)("refusing an unsafe home %s", home)
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the link's target was appended to: %q", b)
	}
	if _, err := AppendLog(filepath.Join(home, "omni.log")); err == nil {
		t.Error("AppendLog opened a link")
	}
	other := t.TempDir()
	Logf(other)("hello")
	if b, _ := os.ReadFile(filepath.Join(other, "omni.log")); len(b) == 0 {
		t.Error("a regular omni.log was not written")
	}
}
