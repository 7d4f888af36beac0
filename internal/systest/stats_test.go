package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/internal/testbin"
	"github.com/omnictx/omni/internal/testfixture"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// After `omni bench --corpus ../shared/corpus/*.jsonl --home H`, the stats
// of H — through the service and through `omni stats` itself — equal the
// bench's own totals exactly: calls, raw, delivered and saved bytes, folds
// per marker kind, and the per-project rows.
func TestStatsEqualBench(t *testing.T) {
	t.Parallel()
	bin := testbin.Omni(t)
	b := ledgerPass(t)
	sharedStoreMu.Lock()
	defer sharedStoreMu.Unlock()
	if b.rep.HookFailures != 0 {
		t.Fatalf("bench had %d hook failures", b.rep.HookFailures)
	}
	check := func(where string, rep stats.Report) {
		t.Helper()
		a, all := rep.Agent, b.rep.All
		if a.Calls != all.Calls || a.RawBytes != all.RawBytes || a.DeliveredBytes != all.DeliveredBytes ||
			a.BytesSaved != all.BytesSaved || a.Mechanisms.Folded.Folds != all.Folds {
			t.Errorf("%s: stats calls %d raw %d delivered %d saved %d folds %d; bench %+v", where, a.Calls, a.RawBytes,
				a.DeliveredBytes, a.BytesSaved, a.Mechanisms.Folded.Folds, all)
		}
		if rep.Terminal.Calls != 0 {
			t.Errorf("%s: %d terminal rows from a bench", where, rep.Terminal.Calls)
		}
		kinds := map[string]int{}
		for _, f := range a.Folds {
			kinds[f.Marker] = f.Folds
		}
		if fmt.Sprint(kinds) != fmt.Sprint(b.rep.FoldsByKind) {
			t.Errorf("%s: folds by marker %v, bench %v", where, kinds, b.rep.FoldsByKind)
		}
		if len(a.ByProject) != len(b.rep.BySource) {
			t.Errorf("%s: %d projects, bench %d sources", where, len(a.ByProject), len(b.rep.BySource))
		}
		for _, r := range a.ByProject {
			s := b.rep.BySource[r.Name]
			if s == nil || r.Calls != s.Calls || r.RawBytes != s.RawBytes || r.DeliveredBytes != s.DeliveredBytes || r.Folds != s.Folds {
				t.Errorf("%s: project %s: %+v, bench %+v", where, r.Name, r, s)
			}
		}
	}
	svc, closeFn, err := daemon.OpenLocal(context.Background(), daemon.Config{Home: b.home}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := testfixture.ServiceStats(t, svc, time.Time{})
	check("service", rep)
	// The same numbers from a fresh fold (the --since path).
	folded, err := statsSince(context.Background(), svc.Log(), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	check("fold", folded)

	// And through the command, as a person would run it.
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}
	omni := func(args ...string) []byte {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "OMNI_HOME="+b.home, "OMNI_NO_DAEMON=1")
		var errb bytes.Buffer
		c.Stderr = &errb
		out, err := c.Output()
		if err != nil {
			t.Fatalf("omni %v: %v: %s", args, err, errb.String())
		}
		return out
	}
	var cli stats.Report
	if err := json.Unmarshal(omni("stats", "--json"), &cli); err != nil {
		t.Fatal(err)
	}
	check("omni stats --json", cli)
	// The text view of the same report, rendered as `omni stats` renders
	// it (one in-process open of the store per command run is a whole
	// fold of the corpus log, so the text comes from the --json run).
	var tb bytes.Buffer
	statsreport.Render(&tb, cli, statsreport.Options{View: "summary"})
	text := tb.String()
	for _, want := range []string{
		statsreport.Num(b.rep.All.BytesSaved) + " B never reached the model",
		statsreport.Num(b.rep.All.Calls) + " calls in ",
		statsreport.Num(b.rep.All.Folds) + " folds",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("omni stats lacks %q:\n%s", want, text)
		}
	}
	t.Logf("omni stats after the corpus bench:\n%s", text)
}

// statsSince folds the whole log into stats that ignore events before since.
func statsSince(ctx context.Context, log events.Log, since time.Time) (stats.Report, error) {
	st := stats.NewSince(since)
	if _, err := replay.Fold(ctx, log, 0, 0, st); err != nil {
		return stats.Report{}, err
	}
	return st.Report(), nil
}
