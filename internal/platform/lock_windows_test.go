//go:build windows

package platform

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// lockFile locks the first byte of path, as gofrs/flock does for
// events/jetstream, and returns the function that releases it.
func lockFile(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		t.Fatal(err)
	}
	return func() { _ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol); f.Close() }
}

// zombie: Windows keeps no zombies.
func zombie(int) bool { return false }
