//go:build unix

package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/internal/sharedtest"
)

// benchOutput is a tool output of about n bytes without credentials: a
// build and test log with paths, durations, a config dump whose names
// look like credential names (the redactor's triggers) but whose values
// are not secrets.
func benchOutput(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		switch i % 8 {
		case 0:
			fmt.Fprintf(&sb, "=== RUN   TestParseConfig/case_%03d\n", i)
		case 1:
			fmt.Fprintf(&sb, "--- PASS: TestParseConfig/case_%03d (0.%02ds)\n", i, i%100)
		case 2:
			fmt.Fprintf(&sb, "go build -o bin/svc ./cmd/svc/... # internal/pkg%03d/handler.go:%d\n", i, 10+i)
		case 3:
			fmt.Fprintf(&sb, "  token_ttl_seconds: %d\n", 3600+i)
		case 4:
			fmt.Fprintf(&sb, "GET https://api.example.com/v1/items?page=%d&limit=50 200 %dms\n", i, i%300)
		case 5:
			fmt.Fprintf(&sb, "config key=LOG_LEVEL value=debug source=env line=%d\n", i)
		case 6:
			fmt.Fprintf(&sb, "ok  \tgithub.com/acme/svc/internal/pkg%03d\t0.%03ds\n", i, i)
		default:
			fmt.Fprintf(&sb, "    handler_test.go:%d: request %d served from cache (hit ratio 0.%02d)\n", 40+i, i, i%100)
		}
	}
	return sb.String()
}

// BenchmarkHookRedaction is the hook path (parse, door redaction,
// pipeline, append to an in-memory log, fold) for a first delivery of a
// Bash output of 2 KiB and 64 KiB, with the door's redaction stage
// (redact) and without it (KeepSecrets): the ratio of the two is the
// redaction's share of a hook call. Each call is a new session, so every
// one takes the first-seen path.
func BenchmarkHookRedaction(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		out := benchOutput(size)
		for _, keep := range []bool{false, true} {
			name := fmt.Sprintf("%dKiB/redact", size>>10)
			if keep {
				name = fmt.Sprintf("%dKiB/keep", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				e, err := New(ctx, memlog.New(), Options{Now: fixedClock(), KeepSecrets: keep})
				if err != nil {
					b.Fatal(err)
				}
				payloads := make([][]byte, 64)
				for i := range payloads {
					payloads[i] = bashPayload(fmt.Sprintf("s%d", i), "", "go test -v ./...", out)
				}
				b.SetBytes(int64(len(out)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := e.HookResult(ctx, HookInput{Stdin: payloads[i%len(payloads)]}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkDoorRedaction is the door's redaction stage alone
// (redactPayload) on the payloads of BenchmarkHookRedaction.
func BenchmarkDoorRedaction(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		p := bashPayload("s", "", "go test -v ./...", benchOutput(size))
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := redactPayload(p, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// corpusPayloads returns up to 64 Bash hook payloads built from the
// outputs of the shared corpus (../shared/corpus, real agent sessions)
// whose size is within [lo, hi) bytes, each with its own command; nil when
// the corpus is absent.
func corpusPayloads(t testing.TB, lo, hi int) [][]byte {
	files, _ := filepath.Glob("../../shared/corpus/*.jsonl")
	var out [][]byte
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() && len(out) < 64 {
			var c struct{ Input, Output string }
			if json.Unmarshal(sc.Bytes(), &c) != nil || len(c.Output) < lo || len(c.Output) >= hi {
				continue
			}
			out = append(out, bashPayload(fmt.Sprintf("s%d", len(out)), "", c.Input, c.Output))
		}
		fh.Close()
	}
	return out
}

// TestHookRedactionCPU prints the CPU time per hook call (the process's
// user+system time, so a loaded machine does not skew it as it skews wall
// time) with and without the door's redaction, and their ratio
// (OMNI_REDACT_CPU=1): for real outputs of about 2 KiB and 64 KiB from the
// shared corpus, and for benchOutput, whose every other line holds a
// trigger of the redactor's rules (a worst case, not a typical output).
func TestHookRedactionCPU(t *testing.T) {
	if os.Getenv("OMNI_REDACT_CPU") == "" {
		t.Skip("OMNI_REDACT_CPU=1 measures")
	}
	ctx := context.Background()
	synthetic := func(size int) [][]byte {
		p := make([][]byte, 64)
		for i := range p {
			p[i] = bashPayload(fmt.Sprintf("s%d", i), "", "go test -v ./...", benchOutput(size))
		}
		return p
	}
	sets := []struct {
		name     string
		payloads [][]byte
		n        int
	}{
		{"corpus 2 KiB", corpusPayloads(t, 1536, 3072), 4000},
		{"corpus 64 KiB", corpusPayloads(t, 48<<10, 96<<10), 300},
		{"synthetic 2 KiB", synthetic(2 << 10), 4000},
		{"synthetic 64 KiB", synthetic(64 << 10), 300},
	}
	for _, set := range sets {
		if len(set.payloads) == 0 {
			t.Logf("%s: no corpus (../shared/corpus)", set.name)
			continue
		}
		var cost [2]time.Duration
		for round := 0; round < 6; round++ { // alternate, so drift hits both
			for k, keep := range []bool{false, true} {
				e, err := New(ctx, memlog.New(), Options{Now: fixedClock(), KeepSecrets: keep})
				if err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				t0 := cpuTime()
				for i := 0; i < set.n; i++ {
					if _, err := e.HookResult(ctx, HookInput{Stdin: set.payloads[i%len(set.payloads)]}); err != nil {
						t.Fatal(err)
					}
				}
				cost[k] += cpuTime() - t0
			}
		}
		with, without := cost[0]/time.Duration(6*set.n), cost[1]/time.Duration(6*set.n)
		t.Logf("%s (%d payloads): %v per hook call with the door's redaction, %v without: ratio %.3f (%+.1f%%)",
			set.name, len(set.payloads), with, without, float64(with)/float64(without), 100*(float64(with)/float64(without)-1))
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDoorRedactionCorpus is the door's redaction stage alone on the
// shared corpus's outputs of 1.5 to 3 KiB.
func BenchmarkDoorRedactionCorpus(b *testing.B) {
	ps := corpusPayloads(b, 1536, 3072)
	if len(ps) == 0 {
		sharedtest.Skip(b, "../shared/corpus")
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := redactPayload(ps[i%len(ps)], false); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
