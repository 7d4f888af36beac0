package main

import (
	"context"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/projections/stats"
)

// fetchStats asks the daemon of home (or the store in-process) for the
// report of the events since since (zero: all).
func fetchStats(ctx context.Context, home string, since time.Time) (stats.Report, error) {
	return daemon.NewClient(configOf(home)).Stats(ctx, daemon.StatsRequest{Since: since})
}
