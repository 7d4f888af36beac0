//go:build unix

package hooks

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/events/memlog"
)

func hookCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHookCPUCost prints the CPU time of one Engine hook call (payload
// parse, redaction, pipeline, events, append to an in-memory log) for Bash
// outputs of 2 and 16 KiB, each new (OMNI_HOOK_CPU=1; CPU time, so a
// loaded machine does not skew it). Run on two builds to compare them.
func TestHookCPUCost(t *testing.T) {
	if os.Getenv("OMNI_HOOK_CPU") == "" {
		t.Skip("OMNI_HOOK_CPU=1 measures")
	}
	for _, size := range []int{2 << 10, 16 << 10} {
		e, err := New(context.Background(), memlog.New(), Options{Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		const n = 400
		payloads := make([][]byte, n)
		for i := range payloads {
			var b strings.Builder
			for k := 0; b.Len() < size; k++ {
				fmt.Fprintf(&b, "run %d step %d: compiled src/pkg%d/file%d.go in %dms, key: primary_id, timeout: 30s\n", i, k, k%7, k, k*3%97)
			}
			payloads[i] = bashPayload("s1", "", fmt.Sprintf("make build-%d", i), b.String())
		}
		t0 := hookCPU()
		for _, p := range payloads {
			if _, err := e.HookResult(context.Background(), HookInput{Stdin: p}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("Bash output of %d KiB: %v CPU per hook", size>>10, (hookCPU()-t0)/n)
	}
}
