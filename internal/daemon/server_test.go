package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestDaemonMemoryLimit: the daemon's soft limit is its live heap plus
// memorySlack (at least 96 MiB), and a GOMEMLIMIT the user set wins.
func TestDaemonMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	setMemoryLimit()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	got := debug.SetMemoryLimit(-1)
	if got < 96<<20 || got > int64(ms.HeapAlloc)+memorySlack+(96<<20) {
		t.Fatalf("limit %d with a heap of %d", got, ms.HeapAlloc)
	}
	debug.SetMemoryLimit(12345 << 20)
	t.Setenv("GOMEMLIMIT", "12345MiB")
	setMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != 12345<<20 {
		t.Fatalf("GOMEMLIMIT set, limit changed to %d", got)
	}
}
