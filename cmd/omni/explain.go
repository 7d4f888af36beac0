package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
)

func newExplainCmd(s streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "explain HANDLE|SEQ",
		Short: "Say why a fold happened, from the event log",
		Long: `For a handle (16 hex characters, as in an [OMNI: ...] marker), explains every
fold that issued it; for a sequence number, every fold of that invocation.
For each fold it says, from the log alone:

  - the invocation that folded (reader, tool, command or path),
  - the marker, the scope it claimed (this reader was shown the lines, or
    only another reader of the project was), the lines and bytes replaced,
  - the bar the run had to clear: marker bytes plus the gain its scope
    requires (150 B for this reader's own lines, 450 B for the project's),
  - which earlier invocation first delivered those lines, to which reader,
    by which command (replaying the deliveries the way the ledger records
    them: first source kept, a compaction empties the session's readers),
  - whether the reader's session has since compacted or ended, and who
    retrieved the handle.

Exit codes: 0 explained; 1 the handle or sequence names no fold, or is
malformed; 2 the store could not be read.`,
		Example: `  omni explain 819dd12d2d605079`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := hooks.ParseTarget(args[0]); err != nil {
				return failErr(errNotFound, fmt.Sprintf("omni explain: %q: %v", args[0], err))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			x, err := newClient().Explain(ctx, daemon.ExplainRequest{Target: args[0]})
			if err != nil {
				return failErr(err, "omni explain: "+errMsg(err))
			}
			if asJSON {
				return writeJSON(s.Out, x)
			}
			renderExplain(s.Out, x)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the explanation as JSON")
	return cmd
}

// scopeClaim says in words what a fold's scope claims.
func scopeClaim(scope string) string {
	if scope == "project" {
		return "project scope: shown to another reader of this project, not to this one"
	}
	return "session scope: already shown to this reader"
}

func renderExplain(w io.Writer, x hooks.Explanation) {
	x = printableExplanation(x)
	if x.TotalFolds > len(x.Folds) {
		fmt.Fprintf(w, "%s names %d folds; the first %d are explained\n\n", x.Target, x.TotalFolds, len(x.Folds))
	}
	for i, f := range x.Folds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "fold at seq %d (%s), reader %s", f.Seq, f.Time, f.Reader)
		if f.Project != "" {
			fmt.Fprintf(w, ", project %s", f.Project)
		}
		fmt.Fprintln(w)
		if f.Tool != "" || f.Source != "" {
			fmt.Fprintf(w, "  output of %s %s (%s B)\n", f.Tool, quoteSource(f.Source), statsreport.Num(f.RawBytes))
		}
		fmt.Fprintf(w, "  marker %q, handle %s: lines %d-%d (%s lines, %s B) became a %s B marker\n", f.Marker, f.Handle,
			f.FirstLine+1, f.FirstLine+f.Lines, statsreport.Num(f.Lines), statsreport.Num(f.Bytes), statsreport.Num(f.MarkerBytes))
		fmt.Fprintf(w, "  claim: %s\n", scopeClaim(f.Scope))
		verdict := "cleared"
		if !f.Cleared {
			verdict = "NOT cleared (recorded before this bar?)"
		}
		fmt.Fprintf(w, "  bar: %s B of lines against %s B marker + %s B gain = %s B: %s\n", statsreport.Num(f.Bytes), statsreport.Num(f.MarkerBytes),
			statsreport.Num(f.GainBytes), statsreport.Num(f.BarBytes), verdict)
		if f.First != nil {
			d := f.First
			fmt.Fprintf(w, "  first delivered by seq %d (%s) to %s: %s %s", d.Seq, d.Time, d.Reader, d.Tool, quoteSource(d.Source))
			if d.Door != "" && d.Door != "hook" {
				fmt.Fprintf(w, " via %s", d.Door)
			}
			fmt.Fprintf(w, " — %d of the %d distinct lines\n", d.Lines, f.BlockLines)
			for _, o := range f.Deliveries {
				if o.Seq == d.Seq {
					continue
				}
				fmt.Fprintf(w, "    and seq %d (%s) to %s: %s %s — %d lines\n", o.Seq, o.Time, o.Reader, o.Tool, quoteSource(o.Source), o.Lines)
			}
		} else if f.ArchiveMissing {
			fmt.Fprintln(w, "  first delivery: cannot be traced: the log no longer holds the block's archive (a damaged store file, see 'omni doctor', or removed by 'omni gc')")
		} else {
			fmt.Fprintln(w, "  first delivery: not found in the log (retention, or the lines' window passed)")
		}
		if f.TracedLines < f.BlockLines {
			fmt.Fprintf(w, "  %d of %d lines traced to a delivery\n", f.TracedLines, f.BlockLines)
		}
		if f.LedgerSource != "" && (f.First == nil || f.LedgerSource != f.First.Source) {
			fmt.Fprintf(w, "  the ledger named the first source %s\n", quoteSource(f.LedgerSource))
		}
		var since []string
		if c := f.Compacted; c != nil {
			since = append(since, fmt.Sprintf("the session compacted at seq %d (%s, %s)", c.Seq, c.What, c.Time))
		} else {
			since = append(since, "the session has not compacted")
		}
		if n := len(f.Retrieves); n > 0 {
			r := f.Retrieves[0]
			who := r.Reader
			if who == "" {
				who = "an unknown reader"
			}
			since = append(since, fmt.Sprintf("retrieved %d time(s), first at seq %d by %s", n, r.Seq, who))
		} else {
			since = append(since, "never retrieved")
		}
		if e := f.Ended; e != nil {
			since = append(since, fmt.Sprintf("the session ended at seq %d", e.Seq))
		}
		fmt.Fprintf(w, "  since then: %s\n", strings.Join(since, "; "))
	}
}

// quoteSource shows a command or path on one line, shortened.
// printableExplanation returns x with every string a payload wrote (ids,
// projects, sources, markers) made printable (events.Printable), so none
// can forge a line or act on the terminal.
func printableExplanation(x hooks.Explanation) hooks.Explanation {
	p := events.Printable
	x.Target = p(x.Target)
	folds := make([]hooks.FoldWhy, len(x.Folds))
	for i, f := range x.Folds {
		f.Reader, f.Project, f.Tool, f.Source, f.Marker, f.LedgerSource = p(f.Reader), p(f.Project), p(f.Tool), p(f.Source), p(f.Marker), p(f.LedgerSource)
		if f.First != nil {
			d := *f.First
			d.Reader, d.Tool, d.Source, d.Door = p(d.Reader), p(d.Tool), p(d.Source), p(d.Door)
			f.First = &d
		}
		ds := make([]hooks.Delivery, len(f.Deliveries))
		for k, o := range f.Deliveries {
			o.Reader, o.Tool, o.Source = p(o.Reader), p(o.Tool), p(o.Source)
			ds[k] = o
		}
		f.Deliveries = ds
		rs := make([]hooks.Later, len(f.Retrieves))
		for k, r := range f.Retrieves {
			r.Reader, r.What = p(r.Reader), p(r.What)
			rs[k] = r
		}
		f.Retrieves = rs
		if f.Compacted != nil {
			c := *f.Compacted
			c.What = p(c.What)
			f.Compacted = &c
		}
		folds[i] = f
	}
	x.Folds = folds
	return x
}

func quoteSource(s string) string {
	if s == "" {
		return "(no command)"
	}
	return "`" + statsreport.ClipName(s, 100) + "`"
}
