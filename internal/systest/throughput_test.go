package systest

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench"
)

// BenchmarkCorpusThroughput replays the whole shared corpus (18,307 real
// tool calls) through the Engine on an in-memory log, the daemon's work
// per hook minus the store's disk: once with the guard and the ledger
// only, once with the first-seen stages (redaction, distillers, collapse)
// before the ledger: the pipeline's throughput in-process. One op is
// the whole corpus; MB/s counts the raw tool output; µs/call and
// allocs/call are per hook call. Run with
//
//	go test ./cmd/omni -run '^$' -bench CorpusThroughput -benchtime 2x
func BenchmarkCorpusThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("replays the whole shared corpus")
	}
	files := corpusFilesB(b)
	recs, err := bench.LoadCorpus(files)
	if err != nil {
		b.Fatal(err)
	}
	type call struct {
		stdin      []byte
		compaction []byte // a PreCompact payload sent first, or nil
	}
	calls := make([]call, 0, len(recs))
	epoch := map[string]int{}
	var raw int64
	for _, r := range recs {
		project, _, _ := strings.Cut(r.Session, "/")
		var c call
		if r.CompactionEpoch > epoch[r.Session] {
			epoch[r.Session] = r.CompactionEpoch
			c.compaction, _ = json.Marshal(map[string]any{"session_id": r.Session, "cwd": project, "hook_event_name": "PreCompact", "trigger": "auto"})
		}
		p, _ := bench.Payload(r, project)
		c.stdin, _ = json.Marshal(p)
		raw += int64(len(bench.RawOf(p)))
		calls = append(calls, c)
	}
	for _, mode := range []struct {
		name       string
		ledgerOnly bool
	}{{"ledger", true}, {"distill+ledger", false}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(raw)
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				eng, err := hooks.New(ctx, memlog.New(), hooks.Options{LedgerOnly: mode.ledgerOnly,
					Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range calls {
					if c.compaction != nil {
						eng.HookResult(ctx, hooks.HookInput{Stdin: c.compaction})
					}
					if _, err := eng.HookResult(ctx, hooks.HookInput{Stdin: c.stdin}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			n := float64(b.N * len(calls))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n, "µs/call")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/call")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/n/1024, "KiB/call")
		})
	}
}

// corpusFilesB is corpusFiles for a benchmark.
func corpusFilesB(b *testing.B) []string {
	b.Helper()
	return corpusFiles(b)
}
