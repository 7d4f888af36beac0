package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
)

// GC removes the batches older than now-in.Before (hooks.Engine.GC) with
// the base saved in the store directory, then writes a checkpoint (so the
// next daemon start needs neither the base nor a full fold) and removes
// older bases. Errors: a retention that is not positive, hooks.ErrNoPurge,
// ErrNoBase, a base that cannot be saved, the log's.
func (s *Service) GC(ctx context.Context, in GCRequest) (hooks.GCPlan, error) {
	if in.Before <= 0 {
		return hooks.GCPlan{}, fmt.Errorf("gc request: a positive retention duration is required")
	}
	if st, ok := s.log.(*jetstream.Store); ok && st.Remote() {
		// Every machine folds the shared stream and keeps its own base: a
		// purge by one would leave the others without theirs.
		return hooks.GCPlan{}, fmt.Errorf("gc: the log is the shared stream %s on a cluster: omni gc does not remove other machines' history (set limits on the stream itself)", st.Stream())
	}
	return s.gcBefore(ctx, time.Now().Add(-in.Before), in.DryRun, "gc")
}

// gcBefore is the one path of physical retention, for omni gc and the
// daemon's own retention alike (by names which in omni.log): it removes
// the batches older than cutoff (hooks.Engine.GC, the base saved first),
// then writes a checkpoint and removes older bases.
func (s *Service) gcBefore(ctx context.Context, cutoff time.Time, dryRun bool, by string) (hooks.GCPlan, error) {
	plan, err := s.engine.GC(ctx, cutoff, hooks.GCOptions{
		Base:     s.base(),
		SaveBase: func(cp hooks.Checkpoint) error { return saveBase(s.home, cp) },
		DryRun:   dryRun,
	})
	if err != nil {
		return hooks.GCPlan{}, err
	}
	if !plan.DryRun && plan.Before != 0 {
		logf := Logf(s.home)
		cp := &checkpointer{home: s.home, path: s.checkpoint, version: s.version, eng: s.engine, logf: logf}
		if err := cp.write(); err != nil {
			logf("%s: checkpoint: %v (the next start folds from the base)", by, err)
		}
		if first, err := s.log.First(ctx); err == nil {
			removeOldBases(s.home, first)
		}
		logf("%s: removed batches %d..%d (older than %s), kept %d blocks", by, plan.First, plan.Before-1,
			plan.Cutoff.Format(time.RFC3339), plan.Kept)
	}
	return plan, nil
}

// HealthReply is the "health" answer: the stream's own state, and whether
// the base snapshot a trimmed log needs is there.
type HealthReply struct {
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
	// Cluster is the backend: embedded, or the cluster's connection,
	// stream and replicas.
	Cluster jetstream.ClusterState `json:"cluster"`
	// Unreachable is set when the log is on a cluster that does not answer
	// now (the stream's state above is then empty): hooks pass output
	// through unchanged and record nothing until it answers again.
	Unreachable string `json:"unreachable,omitempty"`
	// Checkpoint is the batch the last checkpoint covered (0 without
	// one): a log that ends before it lost its newest batches to deleted
	// or emptied files. GCBases counts omni gc's base snapshots: none
	// means a log that starts after seq 1 was not trimmed by omni gc.
	Checkpoint events.Seq `json:"checkpoint,omitempty"`
	GCBases    int        `json:"gc_bases"`
}

// Health reports the stream's own state, a scan of every batch, the
// unreadable batches not yet recorded as lost and whether the base
// snapshot a trimmed log needs is there (omni doctor). Errors: a log that
// is not a JetStream store, the store's.
func (s *Service) Health(ctx context.Context) (HealthReply, error) {
	st, ok := s.log.(*jetstream.Store)
	if !ok {
		return HealthReply{}, fmt.Errorf("health: not a JetStream store")
	}
	cs := st.Cluster(ctx)
	h, err := st.Health(ctx)
	if err != nil {
		if st.Remote() {
			return HealthReply{Cluster: cs, Unreachable: err.Error()}, nil
		}
		return HealthReply{}, err
	}
	out := HealthReply{Health: h, Cluster: cs}
	if out.Check, err = st.Check(ctx); err != nil {
		if st.Remote() {
			return HealthReply{Cluster: cs, Unreachable: err.Error()}, nil
		}
		return HealthReply{}, err
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
	out.Checkpoint = checkpointSeqAt(s.checkpoint)
	if bases, err := filepath.Glob(filepath.Join(s.home, "store", "base-*.bin")); err == nil {
		out.GCBases = len(bases)
	}
	if h.First > 1 {
		if cp, err := s.base()(h.First); err != nil {
			out.BaseMissing = err.Error()
		} else if cp == nil {
			out.BaseMissing = BasePath(s.home, h.First) + " does not exist"
		}
	}
	return out, nil
}

// RepairReply is the "repair" answer (omni gc --repair).
type RepairReply struct {
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
	// Blocks is the recovery of a store refused as damaged (set by the
	// client, which runs it before the daemon can start), nil when none
	// was needed.
	Blocks *jetstream.Recovery `json:"blocks,omitempty"`
}

// Repair scans the store, record the unreadable batches
// as Lost (the ledger forgets the blocks archived in them, so no marker
// names bytes the store cannot give back), drops them from the stream's
// count, replaces an unusable gc base by an empty one, and writes a
// checkpoint. What is readable stays as it is. Errors: a log that is not a
// JetStream store, the scan's, the Engine's, a base that cannot be kept or
// saved.
func (s *Service) Repair(ctx context.Context) (RepairReply, error) {
	st, ok := s.log.(*jetstream.Store)
	if !ok {
		return RepairReply{}, fmt.Errorf("repair: not a JetStream store")
	}
	if st.Remote() {
		return RepairReply{}, fmt.Errorf("repair: the log is the shared stream %s on a cluster, whose replicas repair themselves", st.Stream())
	}
	var out RepairReply
	var err error
	if out.Check, err = st.Check(ctx); err != nil {
		return RepairReply{}, fmt.Errorf("repair: check: %w", err)
	}
	if out.Recorded, err = s.engine.RecordLost(ctx, out.Check.Missing, "unreadable: found by omni gc --repair"); err != nil {
		return RepairReply{}, fmt.Errorf("repair: %w", err)
	}
	out.Known = len(out.Check.Missing) - len(out.Recorded)
	if first := out.Check.First; first > 1 {
		cp, berr := s.base()(first)
		if berr != nil || cp == nil {
			path := BasePath(s.home, first)
			out.BaseReplaced = path + " does not exist"
			if berr != nil {
				out.BaseReplaced = berr.Error()
				if err := os.Rename(path, path+".damaged"); err != nil {
					return RepairReply{}, fmt.Errorf("repair: keep the damaged base: %w", err)
				}
			}
			empty, err := hooks.EmptyBase(ctx, s.log, first)
			if err != nil {
				return RepairReply{}, fmt.Errorf("repair: %w", err)
			}
			if err := saveBase(s.home, empty); err != nil {
				return RepairReply{}, fmt.Errorf("repair: %w", err)
			}
			Logf(s.home)("repair: base for seq %d replaced by an empty one (%s)", first, out.BaseReplaced)
		}
	}
	if _, err := st.DeleteBatches(ctx, out.Check.Missing); err != nil {
		Logf(s.home)("repair: %v (the batches stay counted, and stay recorded as lost)", err)
	}
	if len(out.Recorded) > 0 {
		cp := &checkpointer{home: s.home, path: s.checkpoint, version: s.version, eng: s.engine, logf: Logf(s.home)}
		if err := cp.write(); err != nil {
			Logf(s.home)("repair: checkpoint: %v", err)
		}
	}
	return out, nil
}
