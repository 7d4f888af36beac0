package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
)

// gcReq is the "gc" request.
type gcReq struct {
	// Before is the retention: batches older than now-Before go.
	Before time.Duration `json:"before"`
	DryRun bool          `json:"dry_run,omitempty"`
}

// gc serves the "gc" method: hooks.Engine.GC with the base saved in the
// store directory, then a checkpoint (so the next daemon start needs
// neither the base nor a full fold) and the removal of older bases.
func (s *service) gc(ctx context.Context, req []byte) ([]byte, error) {
	var in gcReq
	if err := json.Unmarshal(req, &in); err != nil || in.Before <= 0 {
		return nil, fmt.Errorf("gc request: a positive retention duration is required")
	}
	plan, err := s.engine.GC(ctx, time.Now().Add(-in.Before), hooks.GCOptions{
		Base:     s.base(),
		SaveBase: func(cp hooks.Checkpoint) error { return saveBase(s.home, cp) },
		DryRun:   in.DryRun,
	})
	if err != nil {
		return nil, err
	}
	if !plan.DryRun && plan.Before != 0 {
		logf := homeLogf(s.home)
		cp := &checkpointer{home: s.home, eng: s.engine, logf: logf}
		if err := cp.write(); err != nil {
			logf("gc: checkpoint: %v (the next start folds from the base)", err)
		}
		removeOtherBases(s.home, plan.Before)
		logf("gc: removed batches %d..%d (older than %s), kept %d blocks", plan.First, plan.Before-1,
			plan.Cutoff.Format(time.RFC3339), plan.Kept)
	}
	return json.Marshal(plan)
}

func newGCCmd(s streams) *cobra.Command {
	var before string
	var asJSON, dryRun bool
	cmd := &cobra.Command{
		Use:   "gc --before DURATION",
		Short: "Remove events older than DURATION from the log (physical retention)",
		Long: `Removes every batch of events older than DURATION (e.g. 90d, 2160h) from the
event log, with the blocks archived in them. This is physical retention,
separate from the ledger's 30-day window, which never needs gc. The newest
batch is always kept.

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

Exit codes: 0 done (or nothing old enough); 2 bad duration or store error.`,
		Example: `  omni gc --before 90d --dry-run
  omni gc --before 90d
  omni gc --before 2160h --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			d, err := parseRetention(before)
			if err != nil {
				return &exitError{code: 2, msg: "omni gc: " + err.Error()}
			}
			req, _ := json.Marshal(gcReq{Before: d, DryRun: dryRun})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
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
			cut := p.Cutoff.Format(time.RFC3339)
			switch {
			case p.First == 0:
				fmt.Fprintln(s.Out, "the log is empty: nothing to remove")
			case p.Before == 0:
				fmt.Fprintf(s.Out, "nothing older than %s: the log (seq %d..%d) is kept whole\n", cut, p.First, p.Last)
			case p.DryRun:
				fmt.Fprintf(s.Out, "would remove seq %d..%d (%d batches older than %s); %d archived blocks still named later would be kept, %d forgotten\n",
					p.First, p.Before-1, p.Removed, cut, p.Kept, p.Forgotten)
			default:
				fmt.Fprintf(s.Out, "removed seq %d..%d (%d batches older than %s); kept %d archived blocks (%d B) still named later, forgot %d; the log now starts at seq %d\n",
					p.First, p.Before-1, p.Removed, cut, p.Kept, p.KeptBytes, p.Forgotten, p.Before)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "remove batches older than this (a Go duration such as 2160h, or days such as 90d)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, change nothing")
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

// storeHealth is the "health" answer: the stream's own state, and whether
// the base snapshot a trimmed log needs is there.
type storeHealth struct {
	jetstream.Health
	// BaseMissing is set when the log no longer starts at 1 (omni gc) and
	// store/base-FIRST.bin cannot be loaded: replay cannot be exact.
	BaseMissing string `json:"base_missing,omitempty"`
}

// health serves the "health" method (omni doctor).
func (s *service) health(ctx context.Context) ([]byte, error) {
	st, ok := s.log.(*jetstream.Store)
	if !ok {
		return nil, fmt.Errorf("health: not a JetStream store")
	}
	h, err := st.Health(ctx)
	if err != nil {
		return nil, err
	}
	out := storeHealth{Health: h}
	if h.First > 1 {
		if cp, err := s.base()(h.First); err != nil {
			out.BaseMissing = err.Error()
		} else if cp == nil {
			out.BaseMissing = basePath(s.home, h.First) + " does not exist"
		}
	}
	return json.Marshal(out)
}
