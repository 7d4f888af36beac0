package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
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
		if first, err := s.log.First(ctx); err == nil {
			removeOldBases(s.home, first)
		}
		logf("gc: removed batches %d..%d (older than %s), kept %d blocks", plan.First, plan.Before-1,
			plan.Cutoff.Format(time.RFC3339), plan.Kept)
	}
	return json.Marshal(plan)
}

func newGCCmd(s streams) *cobra.Command {
	var before string
	var asJSON, dryRun, repair bool
	cmd := &cobra.Command{
		Use:   "gc (--before DURATION | --repair)",
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
					return &exitError{code: 2, msg: "omni gc: --repair takes no --before or --dry-run"}
				}
				return runRepair(s, asJSON)
			}
			d, err := parseRetention(before)
			if err != nil {
				return &exitError{code: 2, msg: "omni gc: " + errMsg(err)}
			}
			req, _ := json.Marshal(gcReq{Before: d, DryRun: dryRun})
			b, err := callMaintenance(s, "gc", req, "omni gc", asJSON)
			if err != nil || b == nil {
				return err
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
				fmt.Fprintf(s.Out, "would remove seq %d..%d (%s older than %s); %d archived blocks still named later would be kept, %d forgotten\n",
					p.First, p.Before-1, batches(p.Removed), cut, p.Kept, p.Forgotten)
			default:
				fmt.Fprintf(s.Out, "removed seq %d..%d (%s older than %s); kept %d archived blocks (%d B) still named later, forgot %d; the log now starts at seq %d\n",
					p.First, p.Before-1, batches(p.Removed), cut, p.Kept, p.KeptBytes, p.Forgotten, p.Before)
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
		return 0, fmt.Errorf("--before DURATION is required (e.g. 90d)")
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

// storeHealth is the "health" answer: the stream's own state, and whether
// the base snapshot a trimmed log needs is there.
type storeHealth struct {
	jetstream.Health
	// BaseMissing is set when the log no longer starts at 1 (omni gc) and
	// store/base-FIRST.bin cannot be loaded: replay cannot be exact.
	BaseMissing string `json:"base_missing,omitempty"`
	// Check is a scan of every batch; Unrecorded the unreadable ones not
	// yet recorded as lost (omni gc --repair records them); RecordedLost
	// how many are.
	Check        jetstream.CheckResult `json:"check"`
	Unrecorded   []events.Seq          `json:"unrecorded,omitempty"`
	RecordedLost int                   `json:"recorded_lost,omitempty"`
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
	if out.Check, err = st.Check(ctx); err != nil {
		return nil, err
	}
	lost := s.engine.LostSeqs()
	out.RecordedLost = len(lost)
	known := make(map[events.Seq]bool, len(lost))
	for _, q := range lost {
		known[q] = true
	}
	for _, q := range out.Check.Missing {
		if !known[q] {
			out.Unrecorded = append(out.Unrecorded, q)
		}
	}
	if h.First > 1 {
		if cp, err := s.base()(h.First); err != nil {
			out.BaseMissing = err.Error()
		} else if cp == nil {
			out.BaseMissing = basePath(s.home, h.First) + " does not exist"
		}
	}
	return json.Marshal(out)
}

// repairResult is the "repair" answer (omni gc --repair).
type repairResult struct {
	// Check is the scan of the store.
	Check jetstream.CheckResult `json:"check"`
	// Recorded are the unreadable batches recorded lost now; Known how many
	// were recorded by an earlier repair or daemon start.
	Recorded []events.Seq `json:"recorded"`
	Known    int          `json:"known"`
	// BaseReplaced says why the gc base of the log's first batch was
	// replaced by an empty one (missing or damaged; a damaged file is kept
	// beside it as .damaged), "" when it was usable or not needed.
	BaseReplaced string `json:"base_replaced,omitempty"`
}

// repair serves "repair": scan the store, record the unreadable batches
// as Lost (the ledger forgets the blocks archived in them, so no marker
// names bytes the store cannot give back), drop them from the stream's
// count, and write a checkpoint. What is readable stays as it is.
func (s *service) repair(ctx context.Context) ([]byte, error) {
	st, ok := s.log.(*jetstream.Store)
	if !ok {
		return nil, fmt.Errorf("repair: not a JetStream store")
	}
	var out repairResult
	var err error
	if out.Check, err = st.Check(ctx); err != nil {
		return nil, fmt.Errorf("repair: check: %w", err)
	}
	if out.Recorded, err = s.engine.RecordLost(ctx, out.Check.Missing, "unreadable: found by omni gc --repair"); err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	out.Known = len(out.Check.Missing) - len(out.Recorded)
	if first := out.Check.First; first > 1 {
		cp, berr := s.base()(first)
		if berr != nil || cp == nil {
			path := basePath(s.home, first)
			out.BaseReplaced = path + " does not exist"
			if berr != nil {
				out.BaseReplaced = berr.Error()
				if err := os.Rename(path, path+".damaged"); err != nil {
					return nil, fmt.Errorf("repair: keep the damaged base: %w", err)
				}
			}
			empty, err := hooks.EmptyBase(ctx, s.log, first)
			if err != nil {
				return nil, fmt.Errorf("repair: %w", err)
			}
			if err := saveBase(s.home, empty); err != nil {
				return nil, fmt.Errorf("repair: %w", err)
			}
			homeLogf(s.home)("repair: base for seq %d replaced by an empty one (%s)", first, out.BaseReplaced)
		}
	}
	if _, err := st.DeleteBatches(ctx, out.Check.Missing); err != nil {
		homeLogf(s.home)("repair: %v (the batches stay counted, and stay recorded as lost)", err)
	}
	if len(out.Recorded) > 0 {
		cp := &checkpointer{home: s.home, eng: s.engine, logf: homeLogf(s.home)}
		if err := cp.write(); err != nil {
			homeLogf(s.home)("repair: checkpoint: %v", err)
		}
	}
	return json.Marshal(out)
}

// runRepair is omni gc --repair.
func runRepair(s streams, asJSON bool) error {
	b, err := callMaintenance(s, "repair", nil, "omni gc --repair", asJSON)
	if err != nil || b == nil {
		return err
	}
	var r repairResult
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	c := r.Check
	fmt.Fprintf(s.Out, "checked seq %d..%d: %s readable, %d unreadable\n", c.First, c.Last, batches(c.Readable), c.MissingCount)
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
			len(r.Recorded), seqList(r.Recorded, len(r.Recorded)))
	}
	return nil
}

// callMaintenance sends a long store method (up to 30 minutes) and, with
// --json, prints its answer and returns nil bytes; errors exit 2.
func callMaintenance(s streams, method string, req []byte, label string, asJSON bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	b, err := callOrLocal(ctx, omniHome(), method, req)
	if err != nil {
		return nil, &exitError{code: 2, msg: label + ": " + errMsg(err)}
	}
	if asJSON {
		fmt.Fprintf(s.Out, "%s\n", b)
		return nil, nil
	}
	return b, nil
}
