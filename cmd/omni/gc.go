package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/doctor"
	"github.com/spf13/cobra"
)

func newGCCmd(s streams) *cobra.Command {
	var before string
	var asJSON, dryRun, repair bool
	cmd := &cobra.Command{
		Use:   "gc (--before DURATION | --repair)",
		Short: "Remove events older than DURATION from the log (physical retention)",
		Long: `Removes every batch of events older than DURATION (e.g. 90d, 2160h) from the
event log, with the blocks archived in them. This is physical retention by
hand; the daemon runs the same path by itself at most once a day for the
batches older than OMNI_RETENTION (default 30d, the ledger's window; 0
keeps everything). The newest batch is always kept.

In order, each step safe to interrupt:
  1. the projections' state just below the cutoff is folded and saved as
     the base snapshot store/base-SEQ.bin (a failure stops here, nothing
     changed);
  2. blocks archived before the cutoff that a kept event still names are
     archived again after it, with a Pruned event recording the cut, so no
     kept marker ever names removed bytes;
  3. the old batches are removed, and a checkpoint is written.

Afterwards 'omni replay' and 'omni replay --verify' start from the base and
cover the retained range; 'omni replay --at SEQ' below it says it is before
the retained range; 'omni retrieve' of a handle only named in removed
events says it is unknown. Keep store/base-*.bin: without it, replay of the
retained range cannot be exact.

--repair reads every batch of the store and records the ones it can no
longer give back (a damaged or truncated store file; 'omni doctor' reports
them) as lost: the blocks archived in them are forgotten, so no marker ever
names bytes the store cannot return (a later fold archives them again). The
server drops them from its count where it can (one whose stored bytes fail
their checksum stays counted). Everything readable is kept as it is.
Decisions recorded after a lost batch may no longer replay exactly; 'omni
replay --verify' says which batches are lost. When the base snapshot of the
log's first batch is missing or damaged (a damaged one is kept as
.damaged), --repair replaces it by an empty state so replay and gc work
again.

Exit codes: 0 done (or nothing old enough, or nothing unreadable); 2 bad
duration or store error.`,
		Example: `  omni gc --before 90d --dry-run
  omni gc --before 90d
  omni gc --before 2160h --json
  omni gc --repair`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if repair {
				if before != "" || dryRun {
					return usageErr("omni gc: --repair takes no --before or --dry-run")
				}
				return runRepair(s, asJSON)
			}
			d, err := parseRetention(before)
			if err != nil {
				return usageErr("omni gc: %s", errMsg(err))
			}
			ctx, cancel := context.WithTimeout(context.Background(), maintenanceTimeout)
			defer cancel()
			p, err := newClient().GC(ctx, daemon.GCRequest{Before: d, DryRun: dryRun})
			if err != nil {
				return failErr(err, "omni gc: "+errMsg(err))
			}
			if asJSON {
				return writeJSON(s.Out, p)
			}
			cut := p.Cutoff.Format(time.RFC3339)
			switch {
			case p.First == 0:
				fmt.Fprintln(s.Out, "the log is empty: nothing to remove")
			case p.Before == 0:
				fmt.Fprintf(s.Out, "nothing older than %s: the log (seq %d..%d) is kept whole\n", cut, p.First, p.Last)
			case p.DryRun:
				fmt.Fprintf(s.Out, "would remove seq %d..%d (%s older than %s); %d archived blocks still named later would be kept, %d forgotten\n",
					p.First, p.Before-1, doctor.Batches(p.Removed), cut, p.Kept, p.Forgotten)
			default:
				fmt.Fprintf(s.Out, "removed seq %d..%d (%s older than %s); kept %d archived blocks (%d B) still named later, forgot %d; the log now starts at seq %d\n",
					p.First, p.Before-1, doctor.Batches(p.Removed), cut, p.Kept, p.KeptBytes, p.Forgotten, p.Before)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "remove batches older than this (a Go duration such as 2160h, or days such as 90d)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, change nothing")
	cmd.Flags().BoolVar(&repair, "repair", false, "record the batches a damaged store can no longer give back as lost, keep the rest")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}

// maxRetentionDays is the largest "Nd" that fits a time.Duration.
const maxRetentionDays = int64(math.MaxInt64 / int64(24*time.Hour))

// parseRetention reads a positive Go duration or "Nd" (days).
func parseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("give --before DURATION (e.g. 90d) or --repair")
	}
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("--before %q: not a number of days", s)
		}
		if days > maxRetentionDays {
			return 0, fmt.Errorf("--before %q: at most %dd (about 290 years, the range of a duration)", s, maxRetentionDays)
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

// runRepair is omni gc --repair.
func runRepair(s streams, asJSON bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), maintenanceTimeout)
	defer cancel()
	r, err := newClient().Repair(ctx)
	if err != nil {
		return failErr(err, "omni gc --repair: "+errMsg(err))
	}
	if asJSON {
		return writeJSON(s.Out, r)
	}
	if b := r.Blocks; b != nil && len(b.MovedAside) > 0 {
		fmt.Fprintf(s.Out, "recovered the damaged store: moved %s aside; kept %d readable records (%d with their sequence field restored, checksums verified), dropped %d (seq %v); recorded in %s\n",
			strings.Join(b.MovedAside, ", "), b.Kept, b.Restored, len(b.Dropped), b.Dropped, b.Report)
	}
	c := r.Check
	fmt.Fprintf(s.Out, "checked seq %d..%d: %s readable, %d unreadable\n", c.First, c.Last, doctor.Batches(c.Readable), c.MissingCount)
	if r.BaseReplaced != "" {
		fmt.Fprintf(s.Out, "the gc base for seq %d was unusable (%s): replaced by an empty state; replay of the retained range now folds from nothing and may differ where the removed batches mattered\n",
			c.First, r.BaseReplaced)
	}
	switch {
	case c.MissingCount == 0 && r.BaseReplaced == "":
		fmt.Fprintln(s.Out, "nothing to repair")
	case c.MissingCount == 0:
	case len(r.Recorded) == 0:
		fmt.Fprintf(s.Out, "all %d were already recorded as lost\n", r.Known)
	default:
		fmt.Fprintf(s.Out, "recorded %d as lost (seq %s); the blocks archived in them no longer retrieve and will be archived again when they come back\n",
			len(r.Recorded), doctor.SeqList(r.Recorded, len(r.Recorded)))
	}
	return nil
}

// maintenanceTimeout bounds gc and gc --repair: they read and may rewrite
// the whole store.
const maintenanceTimeout = 30 * time.Minute
