package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/dashboard"
	"github.com/omnictx/omni/projections/stats"
)

func newDashboardCmd(s streams) *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:   "dashboard [--port 7717]",
		Short: "Serve a local, read-only page of the stats with plots",
		Long: `Serves one read-only web page on 127.0.0.1 (never another interface) with
the numbers of 'omni stats --json' — the same report, from the same
aggregation — and plots: bytes saved over time by mechanism, savings by tool
and by command family, and the fold calibration (handles folded against
handles retrieved). /stats.json serves the report itself; ?since=WHEN takes
what --since takes. The page has no scripts and loads nothing from the
network. The decision-time histogram comes from Emitted.DecideMicros (the
engine's own time per invocation, inside the daemon); the
page says so.

It runs until interrupted (Ctrl-C).

Exit codes: 0 stopped; 2 the port is taken, or the store could not be read.`,
		Example: `  omni dashboard --port 7717`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home := omniHome()
			src := func(ctx context.Context, since time.Time) (stats.Report, error) {
				ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				return fetchStats(ctx, home, since)
			}
			if _, err := src(context.Background(), time.Time{}); err != nil {
				return failErr(err, "omni dashboard: "+err.Error())
			}
			d, err := dashboard.New(src, time.Now, version)
			if err != nil {
				return failErr(err, "omni dashboard: "+err.Error())
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = dashboard.Serve(ctx, d, port, func(url string) {
				fmt.Fprintf(s.Err, "omni dashboard: %s (Ctrl-C stops it)\n", url)
			})
			if err != nil {
				return failErr(err, "omni dashboard: "+err.Error())
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&port, "port", dashboard.DefaultPort, "the port on 127.0.0.1 (0: any free port)")
	return cmd
}
