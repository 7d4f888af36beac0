package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// writeStoreCorpus writes a corpus with what a stream holds: repeats in a
// session and across sessions of one project, a subagent, a Claude Code
// Read with the transcript's numbering, a compaction, and failing test
// runs the PreToolUse rewrite takes.
func writeStoreCorpus(t *testing.T) string {
	t.Helper()
	var long, read strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&long, "pkg/file_%03d.go: the quick brown fox jumps over the lazy dog\n", i)
		fmt.Fprintf(&read, "%6d→line %03d of the file, long enough to count for the ledger\n", i+1, i)
	}
	var fail strings.Builder
	fail.WriteString("Exit code 1\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&fail, "=== RUN   TestThing%02d\n--- PASS: TestThing%02d (0.00s)\n", i, i)
	}
	fail.WriteString("--- FAIL: TestBroken (0.01s)\n    x_test.go:9: want 1, got 2\nFAIL\nFAIL\texample.com/x\t0.02s\n")
	zero, one := 0, 1
	recs := []Record{
		{Session: "proj/s1", Agent: "main", Seq: 0, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 1, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 2, Tool: "Read", Input: "/src/a.go", Output: read.String(), RawTool: "Read"},
		{Session: "proj/s1", Agent: "main", Seq: 3, Tool: "Read", Input: "/src/a.go", Output: read.String(), RawTool: "Read"},
		{Session: "proj/s1", Agent: "main", Seq: 4, Tool: "Bash", Input: "go test ./...", Output: fail.String(), IsError: true, RawTool: "Bash"},
		{Session: "proj/s1", Agent: "main", Seq: 5, Tool: "Bash", Input: "go test ./...", Output: fail.String(), IsError: true, RawTool: "Bash"},
		{Session: "proj/s1", Agent: "subagent-a1", Seq: 0, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 6, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero, CompactionEpoch: 1},
		{Session: "proj/s1", Agent: "main", Seq: 7, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero, CompactionEpoch: 1},
		{Session: "proj/s2", Agent: "main", Seq: 0, Tool: "Glob", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s2", Agent: "main", Seq: 1, Tool: "Bash", Input: "make", Output: "error: boom\n", ExitCode: &one, IsError: true},
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// corpusRun runs bench --corpus into a log the test keeps.
func corpusRun(t *testing.T, corpus string, o Options) (*Report, *memlog.Log, string) {
	t.Helper()
	log := memlog.New()
	o.Corpus = []string{corpus}
	o.Home = t.TempDir()
	o.Out = filepath.Join(t.TempDir(), "out.jsonl")
	o.OpenStore = func(context.Context, string) (events.Log, func() error, error) {
		return log, func() error { return nil }, nil
	}
	rep, err := Run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return rep, log, o.Out
}

// figures is a report without what differs between two runs of the same
// figures: times, the inputs' names and the settings' names.
func figures(t *testing.T, r *Report) string {
	t.Helper()
	c := *r
	c.Seconds, c.PipelineP50, c.PipelineP99 = 0, 0, 0
	c.Files, c.Home, c.Rewrite = nil, "", ""
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Same build and settings: the chained rerun of a stream bench --corpus
// recorded reproduces it (every decision identical, the same figures and
// the same --out bytes); with --ledger-only it gives the figures of
// bench --corpus --ledger-only.
func TestRunStoreReproduces(t *testing.T) {
	corpus := writeStoreCorpus(t)
	rep, log, out := corpusRun(t, corpus, Options{Rewrite: true})
	if rep.Rewritten.Calls == 0 || rep.All.Folds == 0 {
		t.Fatalf("the corpus exercises no rewrite or fold: %+v", rep.All)
	}
	storeOut := filepath.Join(t.TempDir(), "store.jsonl")
	sr, err := RunStore(context.Background(), StoreOptions{Source: LogSource{Log: log}, Out: storeOut, Changes: 5}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sr.Changed != 0 || sr.Identical != sr.Compared || sr.Compared != rep.All.Calls {
		t.Fatalf("rerun: compared %d, identical %d, changed %d; want %d identical", sr.Compared, sr.Identical, sr.Changed, rep.All.Calls)
	}
	if got, want := figures(t, sr.Rerun), figures(t, rep); got != want {
		t.Fatalf("rerun figures differ:\n%s\nwant\n%s", got, want)
	}
	if sr.Recorded.All.BytesSaved != rep.All.BytesSaved || sr.Difference.All.BytesSaved != 0 || sr.Recorded.All.Folds != rep.All.Folds {
		t.Fatalf("recorded %+v, difference %+v, want the run's %+v", sr.Recorded.All, sr.Difference.All, rep.All)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(storeOut)
	if !bytes.Equal(a, b) {
		t.Fatalf("--out differs:\n%s\nwant\n%s", b, a)
	}

	lrep, _, _ := corpusRun(t, corpus, Options{LedgerOnly: true})
	lsr, err := RunStore(context.Background(), StoreOptions{Source: LogSource{Log: log}, LedgerOnly: true}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := figures(t, lsr.Rerun), figures(t, lrep); got != want {
		t.Fatalf("--ledger-only rerun figures differ:\n%s\nwant\n%s", got, want)
	}
	if lsr.Changed == 0 {
		t.Fatal("--ledger-only over a full stream changed no decision")
	}
}

// A what-if of the fold floor changes decisions, shows its saving delta
// and the recorded and rerun texts of a change.
func TestRunStoreFoldFloor(t *testing.T) {
	corpus := writeStoreCorpus(t)
	rep, log, _ := corpusRun(t, corpus, Options{Rewrite: true})
	sr, err := RunStore(context.Background(), StoreOptions{Source: LogSource{Log: log}, FoldFloor: 1 << 20, Changes: 2}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sr.Changed == 0 || sr.Rerun.All.Folds != 0 || sr.Difference.All.BytesSaved >= 0 || sr.Recorded.All.BytesSaved != rep.All.BytesSaved {
		t.Fatalf("changed %d, folds %d, difference %+v", sr.Changed, sr.Rerun.All.Folds, sr.Difference.All)
	}
	if len(sr.Changes) != 2 || !sr.Changes[0].RecordedExact || !strings.Contains(sr.Changes[0].Recorded, "[OMNI:") || strings.Contains(sr.Changes[0].Rerun, "[OMNI:") {
		t.Fatalf("changes %+v", sr.Changes)
	}
	var w bytes.Buffer
	PrintStore(&w, sr)
	for _, want := range []string{"fold floor 1048576 B", "changed " + fmt.Sprint(sr.Changed), "--- recorded", "+++ rerun", "\n-[OMNI:"} {
		if !strings.Contains(w.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, w.String())
		}
	}
}

// A home that already holds a log is refused by bench --corpus --home and
// as bench --store's scratch home, naming --store.
func TestBenchHomeHoldingLogRefused(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "store", "jetstream", "$G", "streams", "EVENTS", "msgs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.blk"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{Corpus: []string{writeStoreCorpus(t)}, Home: home, OpenStore: memStore}, io.Discard)
	if !errors.Is(err, ErrHomeHoldsLog) || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("bench --home over a log: %v", err)
	}
	_, err = RunStore(context.Background(), StoreOptions{Source: LogSource{Log: memlog.New()}, Home: home, OpenStore: memStore}, io.Discard)
	if !errors.Is(err, ErrHomeHoldsLog) {
		t.Fatalf("bench --store --home over a log: %v", err)
	}
	// A store without a block file but with batches is refused too.
	full := memlog.New()
	if _, err := full.Append(context.Background(), []events.Event{{ID: "x", Kind: events.KindGoalSet, GoalSet: &events.GoalSet{}}}); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Corpus: []string{writeStoreCorpus(t)}, Home: t.TempDir(),
		OpenStore: func(context.Context, string) (events.Log, func() error, error) {
			return full, func() error { return nil }, nil
		}}, io.Discard)
	if !errors.Is(err, ErrHomeHoldsLog) {
		t.Fatalf("bench --home over a store with batches: %v", err)
	}
}

// editedSource is a recorded stream with its first batches removed (omni
// gc), one missing (a damaged file) and one withheld (omni forget).
type editedSource struct {
	LogSource
	removed, missing, withheld events.Seq
}

func (s editedSource) Batches(ctx context.Context, fn func([]events.Event, events.Seq) error) error {
	return s.LogSource.Batches(ctx, func(b []events.Event, last events.Seq) error {
		switch q := b[0].Seq; {
		case q < s.removed || q == s.missing:
			return nil
		case q == s.withheld:
			b = append([]events.Event(nil), b...)
			inv := *b[0].Invoked
			inv.Input, inv.Params = nil, map[string]string{"input": "withheld:forgotten"}
			b[0].Invoked = &inv
		}
		return fn(b, last)
	})
}

// Inputs the rerun cannot take are counted and named: batches removed by
// omni gc, a batch missing inside the log, a withheld input, masked ones.
func TestRunStoreNamesWhatItCannotRerun(t *testing.T) {
	_, log, _ := corpusRun(t, writeStoreCorpus(t), Options{Rewrite: true})
	src := editedSource{LogSource: LogSource{Log: log}, removed: 3, missing: 5, withheld: 7}
	sr, err := RunStore(context.Background(), StoreOptions{Source: src}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sr.RemovedBefore != 3 || sr.MissingCount != 1 || sr.Missing[0] != 5 || sr.WithheldCount != 1 || sr.Withheld[0].Seq != 7 ||
		sr.Withheld[0].Reason != "withheld:forgotten" {
		t.Fatalf("removed before %d, missing %v, withheld %+v", sr.RemovedBefore, sr.Missing, sr.Withheld)
	}
	var w bytes.Buffer
	PrintStore(&w, sr)
	for _, want := range []string{"removed by omni gc: batches 1..2", "missing inside the log: 1", "withheld, not rerun: 1", " 7 (withheld:forgotten)"} {
		if !strings.Contains(w.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, w.String())
		}
	}
}
