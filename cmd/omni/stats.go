package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// statsReq is the "stats" request. An empty request means the whole log.
type statsReq struct {
	// Since drops events before it (zero: none): the log is folded again
	// into a fresh stats projection with that filter.
	Since time.Time `json:"since,omitzero"`
}

// statsJSON is the machine form of a stats projection: what `omni stats
// --json` prints and the dashboard shows (one aggregation, stats.Report).
func statsJSON(s *stats.Stats) stats.Report { return s.Report() }

// statsSince folds the whole log into stats that ignore events before since.
func statsSince(ctx context.Context, log events.Log, since time.Time) (stats.Report, error) {
	st := stats.NewSince(since)
	if _, err := replay.Fold(ctx, log, 0, 0, st); err != nil {
		return stats.Report{}, fmt.Errorf("fold log: %w", err)
	}
	return statsJSON(st), nil
}

// fetchStats asks the daemon of home (or the store in-process) for the
// report.
func fetchStats(ctx context.Context, home string, since time.Time) (stats.Report, error) {
	req, _ := json.Marshal(statsReq{Since: since})
	b, err := callOrLocal(ctx, home, "stats", req)
	if err != nil {
		return stats.Report{}, err
	}
	var rep stats.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return stats.Report{}, fmt.Errorf("stats reply: %w", err)
	}
	return rep, nil
}
