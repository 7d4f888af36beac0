package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/projections/stats"
)

// statsOptions are the parsed flags of `omni stats`.
type statsOptions struct {
	since    string
	view     string
	asJSON   bool
	terminal bool
	top      int
	by       string
}

func newStatsCmd(s streams) *cobra.Command {
	var o statsOptions
	cmd := &cobra.Command{
		Use:   "stats [--since WHEN] [--view summary|detail|folds|projects] [--json]",
		Short: "Show what omni kept from the model, folded from the event log",
		Long: `Prints the bytes that never reached the model, then one row per mechanism:
folded (the ledger's markers), distilled, collapsed, redacted, cut (the final
50 KB safety cut), and the calls left alone (0 bytes, by design). Each percentage is over that mechanism's own
base (the text of the calls it changed); they are never added together.
Below them: sessions and how many calls they made before a compaction.

Every figure is a fold over the event log ($OMNI_HOME/store): bytes, never
tokens. Terminal rows — calls with no session, and 'omni exec' or pipes
(no host) run on a terminal or in a session no host hook has named — were
read by no model: they are kept out of the figures and counted on a line of
their own; --terminal reports them instead.

--since WHEN keeps events from WHEN on: a duration (90m, 1h, 3d, 2w), today
(since local midnight), week (7 days), month (30 days), a date (2026-01-31,
local midnight) or an RFC 3339 time.

--view detail: per tool, command family, host, agent (main or subagent) and
session; --view folds: per marker kind, folds and how many of their handles
a reader fetched back (the ledger's calibration; no verdict is printed);
--view projects: per project. --by machine (or user, project, tool, host,
session) prints that one breakdown: on a team sharing one cluster
(OMNI_NATS_URL), the calls each machine or user recorded. --json prints the whole report (all views) with
unit-named fields (bytes_saved, raw_bytes, calls, saved_pct).

Exit codes: 0 printed; 2 a bad flag, or the store could not be read.`,
		Example: `  omni stats --since week --view detail`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return statsRun(cmd.Context(), s, o, func(ctx context.Context, since time.Time) (stats.Report, error) {
				return fetchStats(ctx, omniHome(), since)
			})
		},
	}
	cmd.Flags().StringVar(&o.since, "since", "", "keep events from WHEN on: 1h, 3d, today, week, month, 2026-01-31 or an RFC 3339 time")
	cmd.Flags().StringVar(&o.view, "view", "summary", "summary, detail, folds or projects")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the whole report as JSON")
	cmd.Flags().BoolVar(&o.terminal, "terminal", false, "report the terminal rows (read by no model) instead of the agent rows")
	cmd.Flags().IntVar(&o.top, "top", 15, "rows per breakdown in --view detail (0: all)")
	cmd.Flags().StringVar(&o.by, "by", "", "print one breakdown: machine, user, project, tool, host or session")
	return cmd
}

// statsRun prints the report of the events since o.since, fetched with
// fetch (the daemon of $OMNI_HOME, or its store in-process).
func statsRun(ctx context.Context, s streams, o statsOptions, fetch func(context.Context, time.Time) (stats.Report, error)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !slices.Contains(statsreport.Views, o.view) {
		return usageErr("omni stats: --view %q: want one of %s", o.view, strings.Join(statsreport.Views, ", "))
	}
	if o.by != "" && !slices.Contains(statsreport.By, o.by) {
		return usageErr("omni stats: --by %q: want one of %s", o.by, strings.Join(statsreport.By, ", "))
	}
	var since time.Time
	if o.since != "" {
		var err error
		if since, err = statsreport.ParseSince(o.since, time.Now()); err != nil {
			return usageErr("omni stats: %s", errMsg(err))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := requireHome("stats", omniHome()); err != nil {
		return err
	}
	rep, err := fetch(ctx, since)
	if err != nil {
		return failErr(err, "omni stats: "+errMsg(err))
	}
	if o.asJSON {
		return statsreport.WriteJSON(s.Out, rep)
	}
	statsreport.Render(s.Out, rep, statsreport.Options{View: o.view, Terminal: o.terminal, Top: o.top, By: o.by})
	if si, err := daemon.NewClient(configOf(omniHome())).Store(ctx); err == nil {
		fmt.Fprintf(s.Out, "\n%s\n", storeLine(si))
	}
	return nil
}

// storeLine describes the store for people: its size, the retained range
// and the retention that keeps it (omni stats, omni doctor).
func storeLine(si daemon.StoreInfo) string {
	line := fmt.Sprintf("store: %s under %s; retained %s; retention %s", statsreport.Size(si.Bytes), si.Dir, si.RangeText(), si.Retention)
	if si.Remote {
		line += " (the cluster's shared stream is never pruned by omni)"
	}
	if p := si.LastPass; p != nil && p.Removed > 0 {
		line += fmt.Sprintf("; last pruned %s (seq %d..%d)", p.At.Format("2006-01-02"), p.First, p.Before-1)
	}
	return line
}

// fetchStats asks the daemon of home (or the store in-process) for the
// report of the events since since (zero: all).
func fetchStats(ctx context.Context, home string, since time.Time) (stats.Report, error) {
	return daemon.NewClient(configOf(home)).Stats(ctx, daemon.StatsRequest{Since: since})
}
