package systest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/internal/testbin"
)

// corpusDir is the shared corpus, relative to this package.
const corpusDir = "../../../shared/corpus"

// corpusFiles returns the corpus files (sorted, as a shell glob gives
// them), skipping the test when the corpus is absent or under -short.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("corpus tests replay the whole shared corpus; skipped under -short")
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	sort.Strings(files)
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	return files
}

// benchRun is one bench run over the whole corpus into a fresh home.
type benchRun struct {
	files     []string
	dir       string // parent of home and out
	home, out string
	rep       *bench.Report
	dur       time.Duration
	err       error
}

// openStore is the bench's store: the JetStream store of home, opened the
// way `omni bench` opens it (daemon.OpenStore).
func openStore(ctx context.Context, home string) (events.Log, func() error, error) {
	return daemon.OpenStore(ctx, daemon.Config{Home: home})
}

// openMemory is an in-memory log for a bench run whose store nobody reads.
func openMemory(context.Context, string) (events.Log, func() error, error) {
	l := memlog.New()
	return l, l.Close, nil
}

// corpusBench runs `omni bench --corpus <files> [--ledger-only] --out OUT
// --home H` (the full pass with the default --rewrite=on) in-process into a fresh directory under parent ("" for the
// system temp dir); inMemory keeps the log in memory instead of a store.
func corpusBench(files []string, parent string, ledgerOnly, inMemory bool) *benchRun {
	r := &benchRun{files: files}
	if r.dir, r.err = os.MkdirTemp(parent, "omni-corpus-"); r.err != nil {
		return r
	}
	r.home, r.out = filepath.Join(r.dir, "home"), filepath.Join(r.dir, "out.jsonl")
	o := bench.Options{Corpus: files, Home: r.home, Out: r.out, LedgerOnly: ledgerOnly, OpenStore: openStore, MarkBusy: daemon.MarkBusy, Logf: daemon.Logf}
	if !ledgerOnly {
		o.Rewrite = true // what `omni bench` replays by default, as `omni init --claude` installs
	}
	if inMemory {
		o.OpenStore, o.MarkBusy, o.Logf = openMemory, nil, nil
	}
	t0 := time.Now()
	r.rep, r.err = bench.Run(context.Background(), o, io.Discard)
	r.dur = time.Since(t0)
	return r
}

// pass is one shared corpus pass: made once by the first test that asks,
// read by every corpus check, removed by TestMain.
type pass struct {
	once sync.Once
	run  *benchRun
}

func (p *pass) get(t *testing.T, ledgerOnly bool) *benchRun {
	t.Helper()
	files := corpusFiles(t)
	p.once.Do(func() {
		p.run = corpusBench(files, "", ledgerOnly, false)
		if p.run.err == nil {
			t.Logf("shared bench (ledger-only %v): %d files, %d calls in %s (home %s)", ledgerOnly, len(files),
				p.run.rep.All.Calls, p.run.dur.Round(time.Millisecond), p.run.home)
		}
	})
	if p.run.err != nil {
		t.Fatalf("bench: %v", p.run.err)
	}
	return p.run
}

// The two corpus passes of the package: the guard and the ledger only
// (`omni bench --ledger-only`), and the whole pipeline (`omni bench`).
var ledger, full pass

// ledgerPass returns the shared ledger-only pass over the whole corpus.
func ledgerPass(t *testing.T) *benchRun { return ledger.get(t, true) }

// fullPass returns the shared full-pipeline pass over the whole corpus.
func fullPass(t *testing.T) *benchRun { return full.get(t, false) }

// sharedStoreMu is held by each parallel test while it opens the ledger
// pass's store: one store is opened by one process and one owner at once.
var sharedStoreMu sync.Mutex

func TestMain(m *testing.M) {
	// The corpus tests wait for the one shared pass of their mode, the
	// storms and the kill loop for their processes: four at once keep both
	// cores busy.
	testbin.Parallel(4)
	code := sharedtest.Main(m)
	for _, p := range []*pass{&ledger, &full} {
		if p.run != nil && p.run.dir != "" {
			os.RemoveAll(p.run.dir)
		}
	}
	testbin.Cleanup()
	os.Exit(code)
}
