//go:build unix

package redact_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/redact"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPUCost prints the CPU time per call of the redactor (OMNI_REDACT_CPU=1; CPU time, not wall time, so a loaded
// machine does not skew the ratio).
func TestCPUCost(t *testing.T) {
	if os.Getenv("OMNI_REDACT_CPU") == "" {
		t.Skip("OMNI_REDACT_CPU=1 measures")
	}
	for _, c := range []struct {
		name string
		s    string
	}{{"plain16K", benchPlain()}, {"secrets16K", benchSecrets()}, {"base64_1M", b64Text(1 << 20)}} {
		n := 2000
		if len(c.s) > 100000 {
			n = 20
		}
		t0 := cpuTime()
		for i := 0; i < n; i++ {
			redact.Text(c.s)
		}
		nw := (cpuTime() - t0) / time.Duration(n)
		t.Logf("%s (%d B): %v per call, %.0f MB/s", c.name, len(c.s), nw, float64(len(c.s))/nw.Seconds()/1e6)
	}
}
