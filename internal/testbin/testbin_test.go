package testbin

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestWriteExecutableUnderForks writes and at once runs small scripts
// while other goroutines start processes without pause, as a package's
// parallel tests do; a write through the test process's own descriptor
// fails here with "text file busy" within a few dozen rounds.
func TestWriteExecutableUnderForks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no ETXTBSY on Windows")
	}
	dir := t.TempDir()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_ = exec.Command("/bin/true").Run()
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 100 {
		p := filepath.Join(dir, "s"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		WriteExecutable(t, p, []byte("#!/bin/sh\nexit 0\n"))
		if out, err := exec.Command(p).CombinedOutput(); err != nil {
			t.Fatalf("round %d: %v %s", i, err, out)
		}
	}
}
