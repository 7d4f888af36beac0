//go:build unix

package hosts

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A session file the payload names may be anything on disk: a FIFO
// nobody writes blocks open(2) forever, and a hook call must not wait on
// it (each call would sit out the whole hook deadline, and a daemon would
// keep one thread blocked per call).
func TestOutsideFileFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "rollout-2026-01-01.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	persistedDir := filepath.Join(dir, "sess", "tool-results")
	if err := os.MkdirAll(persistedDir, 0o700); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, ok := codexExitCode(fifo, "call_1"); ok {
			t.Errorf("codexExitCode on a FIFO found an exit code")
		}
		if b, err := readRegular(fifo, MaxPayload); err == nil {
			t.Errorf("readRegular on a FIFO = %q, want an error", b)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// unblock the goroutine so the test binary can exit
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("reading a FIFO session file blocked (fail open means no wait)")
	}
}
