package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
)

// checkpointEvery is how many batches the daemon appends between two
// checkpoint writes (besides the one at clean shutdown). A variable for
// tests.
var checkpointEvery events.Seq = 5000

// checkpointPath is where the daemon keeps its projections' checkpoint
// of the embedded store.
func checkpointPath(home string) string { return filepath.Join(home, "store", "checkpoint.bin") }

// checkpointFile is where the daemon keeps the checkpoint of backend
// (Config.Backend: "embedded", or a cluster's URLs and stream): one file
// per backend and stream, so a home used on a cluster and then on its
// embedded store (or on another stream) never starts from, or measures
// its log against, another log's checkpoint.
func checkpointFile(home, backend string) string {
	if backend == "" || backend == "embedded" {
		return checkpointPath(home)
	}
	sum := sha256.Sum256([]byte(backend))
	return filepath.Join(home, "store", "checkpoint-"+hex.EncodeToString(sum[:8])+".bin")
}

// isCheckpointFile reports a checkpoint file of home, of any backend.
func isCheckpointFile(home, p string) bool {
	name := filepath.Base(p)
	return filepath.Dir(p) == storeDir(home) && strings.HasPrefix(name, "checkpoint") && strings.HasSuffix(name, ".bin")
}

// loadCheckpoint reads the embedded store's checkpoint of home
// (loadCheckpointAt).
func loadCheckpoint(home, version string, logf func(string, ...any)) *hooks.Checkpoint {
	return loadCheckpointAt(checkpointPath(home), version, logf)
}

// loadCheckpointAt reads the checkpoint file path. A missing file is nil;
// an unreadable or corrupt one is logged and nil (never trusted: the
// Engine validates even a well-formed one against the log).
func loadCheckpointAt(path, version string, logf func(string, ...any)) *hooks.Checkpoint {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		logf("checkpoint ignored: %v", err)
		return nil
	}
	// The file starts with the build that wrote it: a checkpoint is the
	// state of one binary's folds, and another build may fold differently.
	want := checkpointHeader(version)
	if len(b) < len(want) || string(b[:len(want)]) != want {
		logf("checkpoint ignored: %s was written by another omni build", path)
		return nil
	}
	b, err = unseal(b[len(want):])
	if err != nil {
		logf("checkpoint ignored: %s: %v", path, err)
		return nil
	}
	var cp hooks.Checkpoint
	if err := cp.UnmarshalBinary(b); err != nil {
		logf("checkpoint ignored: %s: %v", path, err)
		return nil
	}
	return &cp
}

// checkpointSeq returns the batch the checkpoint file of home was taken
// at, whichever build wrote it (0 when there is none or it cannot be
// read): only to notice a log that lost its newest batches.
func checkpointSeq(home string) events.Seq { return checkpointSeqAt(checkpointPath(home)) }

// checkpointSeqAt is checkpointSeq of the checkpoint file path.
func checkpointSeqAt(path string) events.Seq {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return 0
	}
	body, err := unseal(b[i+1:])
	if err != nil {
		return 0
	}
	var cp hooks.Checkpoint
	if cp.UnmarshalBinary(body) != nil {
		return 0
	}
	return cp.Seq
}

// checkpointHeader names the build of this binary (its version, size and
// modification time, read once per process): checkpoints from any other
// build are ignored, so a changed fold never starts from a state it did
// not make.
func checkpointHeader(version string) string {
	buildOnce.Do(func() {
		build = "omni-checkpoint " + version + " unknown-build\n"
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				build = fmt.Sprintf("omni-checkpoint %s %d-%d\n", version, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	})
	return build
}

var (
	buildOnce sync.Once
	build     string
)

// writeFileAtomic writes b to path through a temporary file in the same
// directory, synced, then renamed over path.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".checkpoint-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// checkpointer writes the Engine's checkpoint for the daemon: after every
// checkpointEvery batches (in the background, one write at a time) and at
// clean shutdown. The snapshot is taken under the Engine's lock; encoding
// and writing happen outside it.
type checkpointer struct {
	home    string
	path    string // checkpointFile of the home's backend
	version string // Config.Version, for checkpointHeader
	eng     *hooks.Engine
	logf    func(string, ...any)

	// onWrite, if set, runs after each checkpoint written (the daemon
	// resets its memory limit there).
	onWrite func()

	mu      sync.Mutex // one write at a time
	pending sync.WaitGroup
	busy    atomic.Bool   // a background write is running
	written atomic.Uint64 // the sequence of the last checkpoint written (or started from)
}

func newCheckpointer(cfg Config, eng *hooks.Engine, logf func(string, ...any)) *checkpointer {
	c := &checkpointer{home: cfg.Home, path: checkpointFile(cfg.Home, cfg.Backend()), version: cfg.Version, eng: eng, logf: logf}
	c.written.Store(uint64(eng.Restored()))
	return c
}

// maybe starts a background write when checkpointEvery batches were
// appended since the last one.
func (c *checkpointer) maybe() {
	if uint64(c.eng.Applied()) < c.written.Load()+uint64(checkpointEvery) || !c.busy.CompareAndSwap(false, true) {
		return
	}
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		defer c.busy.Store(false)
		if err := c.write(); err != nil {
			c.logf("checkpoint: %v", err)
		}
	}()
}

// write takes a checkpoint and stores it, unless one at the same sequence
// was written already.
func (c *checkpointer) write() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	if c.eng.Applied() == 0 {
		return nil // an empty log: nothing to save
	}
	cp, err := c.eng.Checkpoint()
	if err != nil || uint64(cp.Seq) == c.written.Load() {
		return err
	}
	body, err := cp.MarshalBinary()
	if err != nil {
		return err
	}
	b := seal(checkpointHeader(c.version), body)
	if err := writeFileAtomic(c.path, b); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	c.written.Store(uint64(cp.Seq))
	c.logf("checkpoint at %d written (%d bytes) in %s", cp.Seq, len(b), time.Since(start).Round(time.Microsecond))
	if c.onWrite != nil {
		c.onWrite()
	}
	return nil
}

// close waits for a background write and writes the final checkpoint. A
// failed write is logged, never a failed shutdown: the next start folds
// the log instead.
func (c *checkpointer) close() error {
	c.pending.Wait()
	if err := c.write(); err != nil {
		c.logf("checkpoint: %v", err)
	}
	return nil
}

// newEngineFromCheckpoint builds the Engine of home from its checkpoint and
// the tail of log, logging how far the checkpoint took it.
func newEngineFromCheckpoint(ctx context.Context, log events.Log, cfg Config, opt hooks.Options) (*hooks.Engine, error) {
	home := cfg.Home
	start := time.Now()
	cpFile := checkpointFile(home, cfg.Backend())
	cp := loadCheckpointAt(cpFile, cfg.Version, opt.Logf)
	eng, err := hooks.NewFromCheckpoint(ctx, log, opt, cp)
	if err != nil {
		return nil, err
	}
	// A checkpoint taken past the end of the log means the store lost its
	// newest batches (a truncated file dropped while recovering). Record
	// them, so the blocks archived in them are forgotten and the loss shows
	// in omni doctor and replay; the next appends reuse those numbers.
	cpSeq := checkpointSeqAt(cpFile)
	if last, lerr := log.Last(ctx); lerr == nil && cpSeq > last {
		seqs := make([]events.Seq, 0, cpSeq-last)
		for q := last + 1; q <= cpSeq; q++ {
			seqs = append(seqs, q)
		}
		reason := fmt.Sprintf("truncated: the checkpoint was taken at batch %d, the log ends at %d", cpSeq, last)
		if _, err := eng.RecordLost(ctx, seqs, reason); err != nil {
			opt.Logf("store: %s; recording it failed: %v", reason, err)
		} else {
			opt.Logf("store: %s; batches %d..%d recorded as lost", reason, last+1, cpSeq)
		}
	}
	if eng.Restored() != 0 {
		opt.Logf("engine from checkpoint %d, folded to %d in %s", cp.Seq, eng.Applied(), time.Since(start).Round(time.Microsecond))
	}
	return eng, nil
}

// baseHeader starts every base snapshot file. Unlike the daemon's
// checkpoint, a base is not tied to one build: it is the only record of
// the batches omni gc removed, so it must outlive upgrades. Its format is
// guarded by hooks.CheckpointVersion instead.
const baseHeader = "omni-base 2\n"

// BasePath is where omni gc keeps the base snapshot of a log whose oldest
// retained batch is first.
func BasePath(home string, first events.Seq) string {
	return filepath.Join(home, "store", fmt.Sprintf("base-%d.bin", first))
}

// baseLoader reads the base snapshot omni gc saved in home: nil, nil when
// there is none for that first batch.
func baseLoader(home string) hooks.BaseLoader {
	return func(first events.Seq) (*hooks.Checkpoint, error) {
		b, err := os.ReadFile(BasePath(home, first))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) < len(baseHeader) || string(b[:len(baseHeader)]) != baseHeader {
			return nil, fmt.Errorf("%s is not an omni base snapshot", BasePath(home, first))
		}
		body, err := unseal(b[len(baseHeader):])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", BasePath(home, first), err)
		}
		var cp hooks.Checkpoint
		if err := cp.UnmarshalBinary(body); err != nil {
			return nil, fmt.Errorf("%s: %w", BasePath(home, first), err)
		}
		return &cp, nil
	}
}

// saveBase writes cp as the base for the batch after cp.Seq, durably
// (temporary file, fsync, rename, fsync of the directory).
func saveBase(home string, cp hooks.Checkpoint) error {
	body, err := cp.MarshalBinary()
	if err != nil {
		return err
	}
	path := BasePath(home, cp.Seq+1)
	if err := writeFileAtomic(path, seal(baseHeader, body)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", filepath.Dir(path), err)
		}
	}
	return nil
}

// removeOldBases deletes the base snapshots omni gc wrote for a first
// batch below first (the log no longer starts there). The base for first,
// bases for later batches (a gc that stopped before its purge) and any
// other file are kept.
func removeOldBases(home string, first events.Seq) {
	matches, _ := filepath.Glob(filepath.Join(home, "store", "base-*.bin"))
	for _, m := range matches {
		var seq uint64
		name := filepath.Base(m)
		if n, err := fmt.Sscanf(name, "base-%d.bin", &seq); err != nil || n != 1 || name != fmt.Sprintf("base-%d.bin", seq) {
			continue
		}
		if events.Seq(seq) < first {
			_ = os.Remove(m)
		}
	}
}

// seal returns header, a line "sha256 <hex of body>", then body: the form
// of the checkpoint and base files, so a damaged file is refused rather
// than trusted (a byte flip can still decode).
func seal(header string, body []byte) []byte {
	sum := sha256.Sum256(body)
	out := make([]byte, 0, len(header)+8+64+1+len(body))
	out = append(out, header...)
	out = append(out, "sha256 "...)
	out = append(out, hex.EncodeToString(sum[:])...)
	out = append(out, '\n')
	return append(out, body...)
}

// unseal checks the "sha256 <hex>" line that starts b against the rest and
// returns the rest.
func unseal(b []byte) ([]byte, error) {
	line, body, ok := bytes.Cut(b, []byte{'\n'})
	hexSum, found := bytes.CutPrefix(line, []byte("sha256 "))
	if !ok || !found {
		return nil, errors.New("no checksum line")
	}
	sum := sha256.Sum256(body)
	if string(hexSum) != hex.EncodeToString(sum[:]) {
		return nil, errors.New("checksum mismatch: the file is damaged")
	}
	return body, nil
}
