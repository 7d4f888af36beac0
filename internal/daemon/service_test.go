package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/testfixture"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// The live projection (the Engine's, appended batch by batch) and a fresh
// fold of the same log give the same report.
func TestStatsLiveEqualsFold(t *testing.T) {
	svc := testfixture.Service(t)
	live, _ := testfixture.ServiceStats(t, svc, time.Time{})
	folded, err := statsSince(context.Background(), svc.Log(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(live)
	b, _ := json.Marshal(folded)
	if !bytes.Equal(a, b) {
		t.Fatalf("live and folded reports differ:\n%s\n%s", a, b)
	}
}

// statsSince folds the whole log into stats that ignore events before since.
func statsSince(ctx context.Context, log events.Log, since time.Time) (stats.Report, error) {
	st := stats.NewSince(since)
	if _, err := replay.Fold(ctx, log, 0, 0, st); err != nil {
		return stats.Report{}, err
	}
	return st.Report(), nil
}
