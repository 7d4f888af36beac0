//go:build windows

package thin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnedByOtherAccountWindows: a file this process made is its own,
// and CheckPrivate accepts it (it and its directory); a system file's
// owner (TrustedInstaller on
// Windows) is logged (Wine gives every file the user's SID).
func TestOwnedByOtherAccountWindows(t *testing.T) {
	dir, err := os.MkdirTemp("", "omni-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // Wine 8 cannot unlink through Go 1.26's call: not this test's concern
	path := filepath.Join(dir, "addr.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ownedByOtherAccount(path) {
		t.Fatalf("%s, made by this process, reads as another account's", path)
	}
	for _, p := range []string{dir, path} {
		if err := CheckPrivate(p); err != nil {
			t.Fatal(err)
		}
	}
	sys := filepath.Join(os.Getenv("SystemRoot"), "System32", "kernel32.dll")
	t.Logf("%s owned by another account: %v", sys, ownedByOtherAccount(sys))
}
