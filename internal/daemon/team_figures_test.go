package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/events/jetstream/jstest"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/sharedtest"
)

// TestTeamCorpusFigures measures, on the shared corpus spread over two
// machines (each session on one of them, alternately by first
// appearance), the bytes saved when both fold one stream on a three-node
// cluster (project scope shared) against two machines with a log each;
// then how many events per second a fresh daemon's follower folds from
// that stream. It prints figures and asserts only that sharing never
// saves less. Set OMNI_TEAM_FIGURES=1 to run it (it replays the whole
// corpus twice, minutes on a small machine).
func TestTeamCorpusFigures(t *testing.T) {
	if os.Getenv("OMNI_TEAM_FIGURES") == "" {
		t.Skip("set OMNI_TEAM_FIGURES=1 to measure the team figures on ../shared/corpus")
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "*.jsonl"))
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	recs, err := bench.LoadCorpus(files)
	if err != nil {
		t.Fatal(err)
	}
	if n := os.Getenv("OMNI_TEAM_FIGURES_LIMIT"); n != "" {
		var k int
		if _, err := fmt.Sscan(n, &k); err == nil && k > 0 && k < len(recs) {
			recs = recs[:k]
		}
	}
	ctx := context.Background()
	c := jstest.Start(t, 3)
	st, err := jetstream.Open(ctx, jetstream.Options{URL: c.URL(), Remote: jetstream.Remote{Stream: "FIGURES"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	run := func(logs [2]events.Log, shared bool) (raw, delivered int64, took time.Duration) {
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now := func() time.Time { clock = clock.Add(time.Second); return clock }
		var engs [2]*hooks.Engine
		for i := range engs {
			e, err := hooks.New(ctx, logs[i], hooks.Options{Now: now, ProjectOf: func(cwd string) string { return cwd },
				Shared: shared, Machine: []string{"a/1", "b/2"}[i]})
			if err != nil {
				t.Fatal(err)
			}
			engs[i] = e
		}
		machine := map[string]int{}
		epoch := map[string]int{}
		start := time.Now()
		for _, r := range recs {
			m, ok := machine[r.Session]
			if !ok {
				m = len(machine) % 2
				machine[r.Session] = m
			}
			project := r.Session
			if i := strings.IndexByte(project, '/'); i >= 0 {
				project = project[:i]
			}
			if r.CompactionEpoch > epoch[r.Session] {
				epoch[r.Session] = r.CompactionEpoch
				pc, _ := json.Marshal(map[string]any{"session_id": r.Session, "cwd": project, "hook_event_name": "PreCompact", "trigger": "auto"})
				_, _ = engs[m].HookResult(ctx, hooks.HookInput{Stdin: pc})
			}
			payload, _ := bench.Payload(r, project)
			stdin, _ := json.Marshal(payload)
			res, err := engs[m].HookResult(ctx, hooks.HookInput{Stdin: stdin})
			rawText := bench.RawOf(payload)
			raw += int64(len(rawText))
			if err != nil || !res.Recorded {
				delivered += int64(len(rawText))
				continue
			}
			delivered += int64(len(res.Delivered))
		}
		return raw, delivered, time.Since(start)
	}
	uRaw, uDel, uTook := run([2]events.Log{memlog.New(), memlog.New()}, false)
	sRaw, sDel, sTook := run([2]events.Log{st, st}, true)
	pct := func(raw, del int64) float64 { return 100 * float64(raw-del) / float64(max(raw, 1)) }
	t.Logf("%d calls over two machines: unshared logs save %d of %d B (%.2f%%) in %s; one shared stream (R3) saves %d of %d B (%.2f%%) in %s; sharing adds %d B (%.2f points)",
		len(recs), uRaw-uDel, uRaw, pct(uRaw, uDel), uTook.Round(time.Millisecond), sRaw-sDel, sRaw, pct(sRaw, sDel), sTook.Round(time.Millisecond),
		(sRaw-sDel)-(uRaw-uDel), pct(sRaw, sDel)-pct(uRaw, uDel))
	if sRaw-sDel < uRaw-uDel {
		t.Errorf("sharing saved less: %d B against %d B", sRaw-sDel, uRaw-uDel)
	}

	// A fresh daemon's follower folds the whole stream.
	last, err := st.Last(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nEvents int
	if err := st.Read(ctx, 0, func(events.Event) error { nEvents++; return nil }); err != nil {
		t.Fatal(err)
	}
	fresh, err := hooks.New(ctx, memlog.New(), hooks.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop, err := st.Follow(ctx, 1, fresh.Follow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for fresh.Applied() < last {
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	stop()
	t.Logf("a follower folded %d batches (%d events) from the R3 stream in %s: %.0f events/s, %.0f batches/s",
		last, nEvents, took.Round(time.Millisecond), float64(nEvents)/took.Seconds(), float64(last)/took.Seconds())
}
