package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/projections/stats"
)

// statsOptions are the parsed flags of `omni stats`.
type statsOptions struct {
	since    string
	view     string
	asJSON   bool
	terminal bool
	top      int
	by       string
}

// statsBy are the values of --by: the breakdown printed instead of the view.
var statsBy = []string{"machine", "user", "project", "tool", "host", "session"}

// statsViews are the values of --view.
var statsViews = []string{"summary", "detail", "folds", "projects"}

func newStatsCmd(s streams) *cobra.Command {
	var o statsOptions
	cmd := &cobra.Command{
		Use:   "stats [--since WHEN] [--view summary|detail|folds|projects] [--json]",
		Short: "Show what omni kept from the model, folded from the event log",
		Long: `Prints the bytes that never reached the model, then one row per mechanism:
folded (the ledger's markers), distilled, collapsed, redacted, cut (the final
50 KB safety cut), and the calls left alone (0 bytes, by design). Each percentage is over that mechanism's own
base (the text of the calls it changed); they are never added together.
Below them: sessions and how many calls they made before a compaction.

Every figure is a fold over the event log ($OMNI_HOME/store): bytes, never
tokens. Terminal rows — calls with no session, and 'omni exec' or pipes
(no host) run on a terminal or in a session no host hook has named — were
read by no model: they are kept out of the figures and counted on a line of
their own; --terminal reports them instead.

--since WHEN keeps events from WHEN on: a duration (90m, 1h, 3d, 2w), today
(since local midnight), week (7 days), month (30 days), a date (2026-01-31,
local midnight) or an RFC 3339 time.

--view detail: per tool, command family, host, agent (main or subagent) and
session; --view folds: per marker kind, folds and how many of their handles
a reader fetched back (the ledger's calibration; no verdict is printed);
--view projects: per project. --by machine (or user, project, tool, host,
session) prints that one breakdown: on a team sharing one cluster
(OMNI_NATS_URL), the calls each machine or user recorded. --json prints the whole report (all views) with
unit-named fields (bytes_saved, raw_bytes, calls, saved_pct).

Exit codes: 0 printed; 2 a bad flag, or the store could not be read.`,
		Example: `  omni stats --since week --view detail`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return statsRun(cmd.Context(), s, o)
		},
	}
	cmd.Flags().StringVar(&o.since, "since", "", "keep events from WHEN on: 1h, 3d, today, week, month, 2026-01-31 or an RFC 3339 time")
	cmd.Flags().StringVar(&o.view, "view", "summary", "summary, detail, folds or projects")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the whole report as JSON")
	cmd.Flags().BoolVar(&o.terminal, "terminal", false, "report the terminal rows (read by no model) instead of the agent rows")
	cmd.Flags().IntVar(&o.top, "top", 15, "rows per breakdown in --view detail (0: all)")
	cmd.Flags().StringVar(&o.by, "by", "", "print one breakdown: machine, user, project, tool, host or session")
	return cmd
}

func statsRun(ctx context.Context, s streams, o statsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !slices.Contains(statsViews, o.view) {
		return usageErr("omni stats: --view %q: want one of %s", o.view, strings.Join(statsViews, ", "))
	}
	if o.by != "" && !slices.Contains(statsBy, o.by) {
		return usageErr("omni stats: --by %q: want one of %s", o.by, strings.Join(statsBy, ", "))
	}
	var since time.Time
	if o.since != "" {
		var err error
		if since, err = parseSince(o.since, time.Now()); err != nil {
			return usageErr("omni stats: %s", errMsg(err))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := requireHome("stats", omniHome()); err != nil {
		return err
	}
	rep, err := fetchStats(ctx, omniHome(), since)
	if err != nil {
		return failErr(err, "omni stats: "+errMsg(err))
	}
	if o.asJSON {
		return writeStatsJSON(s.Out, rep)
	}
	renderStats(s.Out, rep, o)
	return nil
}

// writeStatsJSON prints the report as indented JSON with a final newline.
func writeStatsJSON(w io.Writer, rep stats.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// parseSince reads a --since value relative to now (see `omni stats --help`).
func parseSince(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(strings.ToLower(s))
	loc := now.Location()
	switch v {
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc), nil
	case "week":
		return now.Add(-7 * 24 * time.Hour), nil
	case "month":
		return now.Add(-30 * 24 * time.Hour), nil
	}
	if n := len(v); n > 1 && (v[n-1] == 'd' || v[n-1] == 'w') {
		if k, err := strconv.ParseInt(v[:n-1], 10, 64); err == nil && k > 0 {
			day := 24 * time.Hour
			if v[n-1] == 'w' {
				day *= 7
			}
			if k > int64(math.MaxInt64/day) {
				return time.Time{}, fmt.Errorf("--since %q: at most %d%c (the range of a duration)", s, int64(math.MaxInt64/day), v[n-1])
			}
			return now.Add(-time.Duration(k) * day), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (1h, 3d, 2w), today, week, month, a date (2026-01-31) or an RFC 3339 time", s)
}

// num formats n with thousands separators.
func num[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// size formats bytes in decimal units, one decimal (e.g. "2.4 MB").
func size(n int64) string {
	f := float64(n)
	neg := ""
	if f < 0 {
		neg, f = "-", -f
	}
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if f < 1000 || u == "TB" {
			if u == "B" {
				return fmt.Sprintf("%s%d B", neg, int64(f))
			}
			return fmt.Sprintf("%s%.1f %s", neg, f, u)
		}
		f /= 1000
	}
	return ""
}

func pctStr(p float64) string { return strconv.FormatFloat(p, 'f', 1, 64) + "%" }

// span describes the time range of a report.
func span(rep stats.Report) string {
	if rep.FirstEvent == "" {
		return "empty log"
	}
	r := rep.FirstEvent + " … " + rep.LastEvent
	if rep.Since != "" {
		return "since " + rep.Since + " (" + r + ")"
	}
	return "whole log (" + r + ")"
}

// renderStats writes the text report of one view.
func renderStats(w io.Writer, rep stats.Report, o statsOptions) {
	p, other := rep.Agent, rep.Terminal
	who, otherWho := "agent rows (what models read)", "terminal rows (no host or no session: no model read them)"
	if o.terminal {
		p, other = rep.Terminal, rep.Agent
		who, otherWho = otherWho, who
	}
	fmt.Fprintf(w, "omni stats · %s\n", span(rep))
	fmt.Fprintf(w, "%s: %s in %s\n\n", who, plural(p.Calls, "call"), plural(p.Sessions, "session"))
	switch {
	case o.by != "":
		renderRows(w, "by "+o.by, byRows(p, o.by), o.top)
	case o.view == "detail":
		renderDetail(w, p, o.top)
	case o.view == "folds":
		renderFolds(w, p)
	case o.view == "projects":
		renderRows(w, "by project", p.ByProject, 0)
	default:
		renderSummary(w, p, o.terminal)
	}
	fmt.Fprintf(w, "\n%s: %s, %s B saved — not counted above", otherWho, plural(other.Calls, "call"), num(other.BytesSaved))
	if o.terminal {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, " (--terminal)")
	}
}

// byRows returns the breakdown --by names (one of statsBy).
func byRows(p stats.PartReport, by string) []stats.RowReport {
	switch by {
	case "machine":
		return p.ByMachine
	case "user":
		return p.ByUser
	case "project":
		return p.ByProject
	case "tool":
		return p.ByTool
	case "host":
		return p.ByHost
	}
	return p.BySession
}

// plural returns "1 call", "2 calls".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return num(n) + " " + word + "s"
}

func renderSummary(w io.Writer, p stats.PartReport, terminal bool) {
	if terminal {
		fmt.Fprintf(w, "  %s B kept out of these rows (no model read them)\n", num(p.BytesSaved))
	} else {
		fmt.Fprintf(w, "  %s B never reached the model\n", num(p.BytesSaved))
	}
	fmt.Fprintf(w, "  (%s of the %s the tools produced; %s delivered)\n\n", size(p.BytesSaved), size(p.RawBytes), size(p.DeliveredBytes))
	m := p.Mechanisms
	fmt.Fprintf(w, "  %-11s %15s   %-26s %s\n", "mechanism", "bytes saved", "share of its own base", "population")
	row := func(name string, x stats.MechanismReport, count string) {
		share := "—"
		if x.BaseBytes > 0 {
			share = fmt.Sprintf("%6s of %s B", pctStr(x.SavedPct), num(x.BaseBytes))
		}
		fmt.Fprintf(w, "  %-11s %13s B   %-26s %s\n", name, num(x.BytesSaved), share, count)
	}
	row("folded", m.Folded, plural(m.Folded.Calls, "call")+", "+plural(m.Folded.Folds, "fold"))
	row("distilled", m.Distilled, plural(m.Distilled.Calls, "call"))
	row("collapsed", m.Collapsed, plural(m.Collapsed.Calls, "call"))
	row("redacted", m.Redacted, plural(m.Redacted.Calls, "call")+", "+plural(m.Redacted.RedactedValues, "value"))
	if m.Cut.Calls != 0 {
		row("cut", m.Cut, plural(m.Cut.Calls, "call"))
	}
	fmt.Fprintf(w, "  %-11s %13s B   %-26s %s\n", "left alone", "0", "by design", plural(m.LeftAlone.Calls, "call"))
	fmt.Fprintln(w, "  (a share is over the text of the calls that mechanism changed; shares do not add up)")
	l := p.Lifetimes
	fmt.Fprintf(w, "\n  %s · %s", plural(l.Sessions, "session"), plural(l.Compactions, "compaction"))
	if c := l.CallsBeforeCompaction; c.Count > 0 {
		fmt.Fprintf(w, " · calls before a compaction: median %s, p90 %s, max %s", num(c.Median), num(c.P90), num(c.Max))
	}
	fmt.Fprintln(w)
	if c := l.CallsOpen; c.Count > 0 {
		fmt.Fprintf(w, "  calls since the last compaction (or the start): median %s, p90 %s, max %s over %s\n",
			num(c.Median), num(c.P90), num(c.Max), plural(c.Count, "session"))
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
		fmt.Fprintf(w, "  %-34s %8s %14s %14s %12s %7s %6s\n", clipName(name, 34), num(r.Calls), num(r.RawBytes),
			num(r.DeliveredBytes), num(r.BytesSaved), pctStr(r.SavedPct), num(r.Folds))
	}
	if len(shown) < len(rows) {
		fmt.Fprintf(w, "  … %s more (--top 0 for all)\n", num(len(rows)-len(shown)))
	}
}

func clipName(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
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
		fmt.Fprintf(w, "  %-34s %8s\n", clipName(c.Name, 34), num(c.Calls))
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
		fmt.Fprintf(w, "  %-14s %7s %8s %9s %12s %10s %12s %10s %10s %9s\n", f.Marker, num(f.Folds), num(f.Handles), num(f.Lines),
			num(f.FoldedBytes), num(f.MarkerBytes), num(f.BytesSaved), num(f.Retrieves), num(f.RetrievedHandles), pctStr(f.RetrievedPct))
		t.Folds += f.Folds
		t.Handles += f.Handles
		t.Lines += f.Lines
		t.FoldedBytes += f.FoldedBytes
		t.MarkerBytes += f.MarkerBytes
		t.BytesSaved += f.BytesSaved
		t.Retrieves += f.Retrieves
		t.RetrievedHandles += f.RetrievedHandles
	}
	fmt.Fprintf(w, "  %-14s %7s %8s %9s %12s %10s %12s %10s %10s %9s\n", "all", num(t.Folds), num(t.Handles), num(t.Lines),
		num(t.FoldedBytes), num(t.MarkerBytes), num(t.BytesSaved), num(t.Retrieves), num(t.RetrievedHandles),
		pctStr(stats.Pct(int64(t.RetrievedHandles), int64(t.Handles))))
	fmt.Fprintln(w, "  (share: retrieved handles over handles; no threshold has been measured, so no verdict)")
}
