package systest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/internal/testbin"
	"github.com/omnictx/omni/internal/testfixture"
)

// trimmedLines returns the set of whitespace-trimmed non-blank lines of s.
func trimmedLines(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range splitLinesKeep(s) {
		if t := strings.TrimSpace(l); t != "" {
			m[t] = true
		}
	}
	return m
}

// `omni explain` on five folds of a corpus bench names the call that first
// delivered the folded lines, found here independently from the bench's
// --out rows: the first earlier row of the same reader since its last
// compaction (session scope), or of the same project (project scope), whose
// delivered text holds the block's first non-blank line.
func TestExplainCorpusFolds(t *testing.T) {
	t.Parallel()
	bin := testbin.Omni(t)
	b := ledgerPass(t)
	sharedStoreMu.Lock()
	defer sharedStoreMu.Unlock()
	rows := readBenchOut(t, b.out)
	svc, closeStore, err := daemon.OpenLocal(context.Background(), daemon.Config{Home: b.home}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { closeStore() }()
	ctx := context.Background()
	// The i-th Emitted event of the log is the i-th row of --out.
	var seqs []events.Seq
	rowOf := map[events.Seq]int{}
	err = svc.Log().Read(ctx, 0, func(ev events.Event) error {
		if ev.Kind == events.KindEmitted {
			rowOf[ev.Seq] = len(seqs)
			seqs = append(seqs, ev.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != len(rows) {
		t.Fatalf("%d deliveries in the log, %d rows in --out", len(seqs), len(rows))
	}
	var folded []int
	projectRow := -1
	for i, r := range rows {
		if len(r.Handles) == 0 {
			continue
		}
		folded = append(folded, i)
		if projectRow < 0 && strings.Contains(r.Delivered, " not shown here") {
			projectRow = i
		}
	}
	if len(folded) < 5 {
		t.Fatalf("only %d folding calls in the corpus", len(folded))
	}
	var picks []int
	for k := 1; k <= 5; k++ {
		picks = append(picks, folded[len(folded)*k/6])
	}
	if projectRow >= 0 {
		picks[2] = projectRow
	}
	for _, i := range picks {
		r := rows[i]
		x := testfixture.Explain(t, svc, strconv.FormatUint(uint64(seqs[i]), 10))
		if len(x.Folds) != len(r.Handles) {
			t.Errorf("row %d (seq %d): %d folds explained, %d handles", i, seqs[i], len(x.Folds), len(r.Handles))
			continue
		}
		for _, w := range x.Folds {
			// The bench runs --ledger-only, so the ledger saw the raw text
			// and the fold's line numbers index it.
			raw := splitLinesKeep(r.Raw)
			if w.FirstLine+w.Lines > len(raw) {
				t.Fatalf("row %d: fold lines %d+%d beyond the %d raw lines (did the bench run the first-seen stages?)",
					i, w.FirstLine, w.Lines, len(raw))
			}
			target := ""
			for _, l := range raw[w.FirstLine : w.FirstLine+w.Lines] {
				if target = strings.TrimSpace(l); target != "" {
					break
				}
			}
			want := -1
			for j := 0; j < i && want < 0; j++ {
				o := rows[j]
				if o.Reason == "host-cap" {
					continue
				}
				same := o.Session == r.Session && o.Agent == r.Agent && o.Epoch == r.Epoch
				if w.Scope == "project" {
					same = o.Project == r.Project
				}
				if same && trimmedLines(o.Delivered)[target] {
					want = j
				}
			}
			if w.First == nil || want < 0 {
				t.Errorf("row %d seq %d handle %s (%s): first delivery %+v, oracle row %d", i, seqs[i], w.Handle, w.Scope, w.First, want)
				continue
			}
			if got := rowOf[w.First.Seq]; got != want {
				t.Errorf("row %d seq %d handle %s (%s): explain names seq %d (row %d), the oracle row %d (seq %d)",
					i, seqs[i], w.Handle, w.Scope, w.First.Seq, got, want, seqs[want])
			}
			reader := rows[want].Session
			if a := rows[want].Agent; a != "" && a != "main" {
				reader += "/" + a
			}
			if w.First.Reader != reader {
				t.Errorf("row %d: first reader %s, want %s", i, w.First.Reader, reader)
			}
			traced := w.First.Source
			if w.First.LineSource != "" {
				traced = w.First.LineSource
			}
			if w.LedgerSource != traced || !w.Cleared || w.TracedLines != w.BlockLines {
				t.Errorf("row %d: ledger source %q, traced %q; cleared %v; traced %d of %d lines", i, w.LedgerSource,
					w.First.Source, w.Cleared, w.TracedLines, w.BlockLines)
			}
			t.Logf("row %d seq %d: %s fold %s (%d lines) first delivered at seq %d (row %d) to %s by %q",
				i, seqs[i], w.Marker, w.Handle, w.Lines, w.First.Seq, want, w.First.Reader, statsreport.ClipName(w.First.Source, 50))
		}
	}
	if projectRow < 0 {
		t.Log("no project fold in the corpus bench")
	}
	// The text form of one of them, by handle, as `omni explain` prints it.
	if err := closeStore(); err != nil {
		t.Fatal(err)
	}
	closeStore = func() error { return nil }
	c := exec.Command(bin, "explain", rows[picks[0]].Handles[0])
	c.Env = append(os.Environ(), "OMNI_HOME="+b.home, "OMNI_NO_DAEMON=1")
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "first delivered by seq ") || !strings.Contains(string(out), "bar: ") {
		t.Errorf("omni explain: %v\n%s", err, out)
	}
}
