package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench/sample"
	"github.com/omnictx/omni/internal/tokens"
)

// BenchmarkHookDaemonSide is the daemon's side of one omni bench --latency
// call (redaction, decision, append to an in-memory log, fold) on the same
// payloads: Bash outputs of 1, 16, 64 and 256 KB built from the built-in
// sample's lines (corpusText), one session, two commands in turn, so after
// the first two calls every one is a repeat the ledger folds whole; tokens
// are counted, as a daemon counts them for its reports. Its
// CPU profile (-cpuprofile) shows where the daemon's part of a hook call
// goes; compare sizes side by side, never against a fixed time. It
// reports the stages omni bench --latency prints (redact, decide, append)
// per call beside the whole.
func BenchmarkHookDaemonSide(b *testing.B) {
	recs, err := LoadCorpus([]string{sample.Name})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		size  int
		fresh bool
	}{{1 << 10, false}, {16 << 10, false}, {16 << 10, true}, {64 << 10, false}, {256 << 10, false}} {
		size := c.size
		text := corpusText(recs, size)
		name := fmt.Sprintf("%dKB", size>>10)
		if c.fresh {
			name += "new"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			tc, err := tokens.New("")
			if err != nil {
				b.Fatal(err)
			}
			e, err := hooks.New(ctx, memlog.New(), hooks.Options{
				Now:       func() time.Time { clock = clock.Add(time.Second); return clock },
				ProjectOf: func(cwd string) string { return cwd },
				Tokens:    tc,
			})
			if err != nil {
				b.Fatal(err)
			}
			payloads := make([][]byte, 2)
			if c.fresh {
				payloads = make([][]byte, 256)
			}
			for i := range payloads {
				t := text
				if c.fresh {
					t = renumber(text, uint64(i))
				}
				payloads[i], _ = json.Marshal(map[string]any{"session_id": "latency", "cwd": "/tmp/p", "hook_event_name": "PostToolUse",
					"tool_name": "Bash", "tool_input": map[string]any{"command": fmt.Sprintf("bench-cmd-%d", i%2)},
					"tool_response": map[string]any{"stdout": t, "stderr": "", "interrupted": false, "isImage": false}})
			}
			b.SetBytes(int64(len(payloads[0])))
			b.ReportAllocs()
			i := 0
			var sum hooks.Timing
			for b.Loop() {
				var tm hooks.Timing
				if _, err := e.HookResult(hooks.WithTiming(ctx, &tm), hooks.HookInput{Stdin: payloads[i%len(payloads)]}); err != nil {
					b.Fatal(err)
				}
				sum.Redact, sum.Decide, sum.Append = sum.Redact+tm.Redact, sum.Decide+tm.Decide, sum.Append+tm.Append
				i++
			}
			// The stages omni bench --latency prints, per call.
			b.ReportMetric(float64(sum.Redact.Nanoseconds())/float64(i), "redact-ns/op")
			b.ReportMetric(float64(sum.Decide.Nanoseconds())/float64(i), "decide-ns/op")
			b.ReportMetric(float64(sum.Append.Nanoseconds())/float64(i), "append-ns/op")
		})
	}
}
