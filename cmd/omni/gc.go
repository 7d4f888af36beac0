package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
)

func newGCCmd(s streams) *cobra.Command {
	var before string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gc --before DURATION",
		Short: "Remove events older than DURATION from the log (physical retention)",
		Long: `Removes every batch of events older than DURATION (e.g. 90d, 2160h) from the
event log, with the archived blocks inside them. This is physical retention,
separate from the ledger's 30-day window (which never needs gc).

In order: a Pruned event is appended (the projections forget the handles
archived in the removed range, so no marker can ever name bytes that are
gone), a checkpoint of the projections is written (after the purge only it
holds what the removed events taught them), then the batches are purged.
Afterwards 'omni replay --at SEQ' for a removed SEQ says it is before the
retained range, and 'omni retrieve' of a removed handle says it is unknown.

Exit codes: 0 done (or nothing old enough); 2 bad duration or store error.`,
		Example: `  omni gc --before 90d`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			d, err := parseRetention(before)
			if err != nil {
				return &exitError{code: 2, msg: "omni gc: " + err.Error()}
			}
			req, _ := json.Marshal(map[string]any{"before": d})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b, err := callOrLocal(ctx, omniHome(), "gc", req)
			if err != nil {
				return &exitError{code: 2, msg: "omni gc: " + err.Error()}
			}
			if asJSON {
				fmt.Fprintf(s.Out, "%s\n", b)
				return nil
			}
			var p hooks.GCPlan
			if err := json.Unmarshal(b, &p); err != nil {
				return err
			}
			if p.Before == 0 {
				fmt.Fprintf(s.Out, "nothing before %s: the log (seq %d..%d) is kept whole\n", p.Cutoff.Format(time.RFC3339), p.First, p.Last)
				return nil
			}
			fmt.Fprintf(s.Out, "removed seq %d..%d (older than %s); the log now starts at seq %d\n",
				p.First, p.Before-1, p.Cutoff.Format(time.RFC3339), p.Before)
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "remove batches older than this (Go duration, or N followed by d for days)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}

// parseRetention reads a positive Go duration or "Nd" (days).
func parseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("--before DURATION is required (e.g. 90d)")
	}
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("--before %q: not a number of days", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("--before %q: %v", s, err)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("--before %q: must be positive", s)
	}
	return d, nil
}
