package statsreport

import (
	"fmt"
	"io"

	"github.com/omnictx/omni/projections/stats"
)

// Render writes the text report of one view (`omni stats`).
func Render(w io.Writer, rep stats.Report, o Options) {
	p, other := rep.Agent, rep.Terminal
	who, otherWho := "agent rows (what models read)", "terminal rows (no host or no session: no model read them)"
	if o.Terminal {
		p, other = rep.Terminal, rep.Agent
		who, otherWho = otherWho, who
	}
	fmt.Fprintf(w, "omni stats · %s\n", Span(rep))
	fmt.Fprintf(w, "%s: %s in %s\n\n", who, Plural(p.Calls, "call"), Plural(p.Sessions, "session"))
	if !o.Terminal && p.Calls == 0 && other.Calls > 0 {
		// Only omni exec or pipes so far: say where they went before the
		// zeros below suggest omni did nothing.
		fmt.Fprintf(w, "  No model read anything through omni yet. The %s recorded ran on a terminal\n"+
			"  (omni exec or a pipe with no host session) and saved %s B there: they are the\n"+
			"  terminal rows at the end, and 'omni stats --terminal' reports them in full.\n\n",
			Plural(other.Calls, "call"), Num(other.BytesSaved))
	}
	switch {
	case o.By != "":
		renderRows(w, "by "+o.By, byRows(p, o.By), o.Top)
	case o.View == "detail":
		renderDetail(w, p, o.Top)
	case o.View == "folds":
		renderFolds(w, p)
	case o.View == "projects":
		renderRows(w, "by project", p.ByProject, 0)
	default:
		renderSummary(w, p, o.Terminal)
	}
	fmt.Fprintf(w, "\n%s: %s, %s B saved — not counted above", otherWho, Plural(other.Calls, "call"), Num(other.BytesSaved))
	if o.Terminal {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, " (--terminal)")
	}
}

func renderSummary(w io.Writer, p stats.PartReport, terminal bool) {
	if terminal {
		fmt.Fprintf(w, "  %s B kept out of these rows (no model read them)\n", Num(p.BytesSaved))
	} else {
		fmt.Fprintf(w, "  %s B never reached the model\n", Num(p.BytesSaved))
	}
	fmt.Fprintf(w, "  (%s of the %s the tools produced; %s delivered)\n", Size(p.BytesSaved), Size(p.RawBytes), Size(p.DeliveredBytes))
	if t := p.Tokens; t.Calls > 0 {
		fmt.Fprintf(w, "  tokens (%s, over the %s that counted them): %s of %s saved (%s), %s delivered\n",
			t.Tokenizer, Plural(t.Calls, "call"), Num(t.TokensSaved), Num(t.RawTokens), pctStr(t.SavedPct), Num(t.DeliveredTokens))
	}
	if oc := p.OverCap; oc.Calls > 0 {
		fmt.Fprintf(w, "  baseline: over-cap outputs (%s) count whole, what the model would otherwise read from the host's file: %s B → %s B (%s saved)\n",
			Plural(oc.Calls, "call"), Num(oc.RawBytes), Num(oc.DeliveredBytes), pctStr(oc.SavedPct))
	}
	fmt.Fprintln(w)
	m := p.Mechanisms
	fmt.Fprintf(w, "  %-11s %15s   %-26s %s\n", "mechanism", "bytes saved", "share of its own base", "population")
	row := func(name string, x stats.MechanismReport, count string) {
		share := "—"
		if x.BaseBytes > 0 {
			share = fmt.Sprintf("%6s of %s B", pctStr(x.SavedPct), Num(x.BaseBytes))
		}
		fmt.Fprintf(w, "  %-11s %13s B   %-26s %s\n", name, Num(x.BytesSaved), share, count)
	}
	row("folded", m.Folded, Plural(m.Folded.Calls, "call")+", "+Plural(m.Folded.Folds, "fold"))
	row("distilled", m.Distilled, Plural(m.Distilled.Calls, "call"))
	row("collapsed", m.Collapsed, Plural(m.Collapsed.Calls, "call"))
	redacted := Plural(m.Redacted.Calls, "call") + ", " + Plural(m.Redacted.RedactedValues, "value")
	if m.Redacted.BytesSaved < 0 {
		redacted += " (the masks are longer than the values they hide)"
	}
	row("redacted", m.Redacted, redacted)
	if m.Cut.Calls != 0 {
		row("cut", m.Cut, Plural(m.Cut.Calls, "call"))
	}
	fmt.Fprintf(w, "  %-11s %13s B   %-26s %s\n", "left alone", "0", "by design", Plural(m.LeftAlone.Calls, "call"))
	fmt.Fprintln(w, "  (a share is over the text of the calls that mechanism changed; shares do not add up)")
	l := p.Lifetimes
	fmt.Fprintf(w, "\n  %s · %s", Plural(l.Sessions, "session"), Plural(l.Compactions, "compaction"))
	if c := l.CallsBeforeCompaction; c.Count > 0 {
		fmt.Fprintf(w, " · calls before a compaction: median %s, p90 %s, max %s", Num(c.Median), Num(c.P90), Num(c.Max))
	}
	fmt.Fprintln(w)
	if c := l.CallsOpen; c.Count > 0 {
		fmt.Fprintf(w, "  calls since the last compaction (or the start): median %s, p90 %s, max %s over %s\n",
			Num(c.Median), Num(c.P90), Num(c.Max), Plural(c.Count, "session"))
	}
}

func renderRows(w io.Writer, title string, rows []stats.RowReport, top int) {
	fmt.Fprintf(w, "  %-34s %8s %14s %14s %12s %7s %6s\n", title, "calls", "raw B", "delivered B", "saved B", "saved", "folds")
	shown := rows
	if top > 0 && len(rows) > top {
		shown = rows[:top]
	}
	for _, r := range shown {
		name := r.Name
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(w, "  %-34s %8s %14s %14s %12s %7s %6s\n", ClipName(name, 34), Num(r.Calls), Num(r.RawBytes),
			Num(r.DeliveredBytes), Num(r.BytesSaved), pctStr(r.SavedPct), Num(r.Folds))
	}
	if len(shown) < len(rows) {
		fmt.Fprintf(w, "  … %s more (--top 0 for all)\n", Num(len(rows)-len(shown)))
	}
}

func renderDetail(w io.Writer, p stats.PartReport, top int) {
	renderRows(w, "by tool", p.ByTool, top)
	fmt.Fprintln(w)
	renderRows(w, "by command family", p.ByFamily, top)
	fmt.Fprintln(w)
	renderRows(w, "by host", p.ByHost, top)
	fmt.Fprintln(w)
	renderRows(w, "by agent", p.ByAgent, top)
	fmt.Fprintln(w)
	renderRows(w, "by session", p.BySession, top)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-34s %8s\n", "left alone, by reason", "calls")
	for _, c := range p.LeftAloneReasons {
		fmt.Fprintf(w, "  %-34s %8s\n", ClipName(c.Name, 34), Num(c.Calls))
	}
}

func renderFolds(w io.Writer, p stats.PartReport) {
	fmt.Fprintln(w, "  fold calibration: folds per marker kind and how many of their handles a")
	fmt.Fprintln(w, "  reader fetched back with omni retrieve (a retrieve disputes the fold)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-14s %7s %8s %9s %12s %10s %12s %10s %10s %9s\n", "marker", "folds", "handles", "lines",
		"folded B", "marker B", "saved B", "retrieves", "retrieved", "share")
	var t stats.FoldReport
	for _, f := range p.Folds {
		fmt.Fprintf(w, "  %-14s %7s %8s %9s %12s %10s %12s %10s %10s %9s\n", f.Marker, Num(f.Folds), Num(f.Handles), Num(f.Lines),
			Num(f.FoldedBytes), Num(f.MarkerBytes), Num(f.BytesSaved), Num(f.Retrieves), Num(f.RetrievedHandles), pctStr(f.RetrievedPct))
		t.Folds += f.Folds
		t.Handles += f.Handles
		t.Lines += f.Lines
		t.FoldedBytes += f.FoldedBytes
		t.MarkerBytes += f.MarkerBytes
		t.BytesSaved += f.BytesSaved
		t.Retrieves += f.Retrieves
		t.RetrievedHandles += f.RetrievedHandles
	}
	fmt.Fprintf(w, "  %-14s %7s %8s %9s %12s %10s %12s %10s %10s %9s\n", "all", Num(t.Folds), Num(t.Handles), Num(t.Lines),
		Num(t.FoldedBytes), Num(t.MarkerBytes), Num(t.BytesSaved), Num(t.Retrieves), Num(t.RetrievedHandles),
		pctStr(stats.Pct(int64(t.RetrievedHandles), int64(t.Handles))))
	fmt.Fprintln(w, "  (share: the recall rate, retrieved handles over handles)")
	if len(p.Cuts) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %-22s %7s %8s %10s %9s\n", "first-seen cut", "cuts", "handles", "retrieved", "share")
		for _, f := range p.Cuts {
			flag := ""
			if f.Flagged {
				flag = "  HIGH: the agent needed these cuts"
			}
			fmt.Fprintf(w, "  %-22s %7s %8s %10s %9s%s\n", ClipName(f.Marker, 22), Num(f.Folds), Num(f.Handles), Num(f.RetrievedHandles), pctStr(f.RetrievedPct), flag)
		}
	}
	fmt.Fprintf(w, "  (a mechanism is flagged HIGH at a recall rate of %.0f%% or more over at least %d handles)\n", stats.RecallFlagPct, stats.RecallFlagMinHandles)
}
