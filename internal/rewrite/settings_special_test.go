//go:build unix

package rewrite

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A settings file on the hook's path may be anything a repository or a
// user put there: the cwd's .claude/settings.json (a directory the host
// itself does not read) can be a link to /dev/zero in a cloned
// repository, or a FIFO. Load must answer at once with ErrSettings (no
// rewrite), never read without end nor wait for a writer.
func TestLoadSpecialSettingsFileAnswersAtOnce(t *testing.T) {
	for _, kind := range []string{"devzero", "fifo", "oversized"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, ".claude", "settings.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "devzero":
				if _, err := os.Stat("/dev/zero"); err != nil {
					t.Skip("no /dev/zero")
				}
				if err := os.Symlink("/dev/zero", p); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			case "oversized":
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(maxSettingsBytes + 1); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			done := make(chan error, 1)
			go func() {
				_, err := Load(Sources{Project: []string{dir}})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrSettings) {
					t.Errorf("Load = %v, want ErrSettings", err)
				}
			case <-time.After(10 * time.Second):
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatal("Load did not return on a special settings file")
			}
		})
	}
}
