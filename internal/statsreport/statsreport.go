// Package statsreport renders the stats projection's report
// (projections/stats.Report) for people: the text views of `omni stats`,
// its JSON form, and the --since argument both `omni stats` and the
// dashboard take. It reads a report; it never folds events.
package statsreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/projections/stats"
)

// Views are the values of `omni stats --view`, the default first.
var Views = []string{"summary", "detail", "folds", "projects"}

// Options choose one text view of a report.
type Options struct {
	// View is one of Views ("" is summary).
	View string
	// Terminal reports the terminal rows (calls no model read) instead of
	// the agent rows.
	Terminal bool
	// Top is the rows per breakdown in the detail view (0: all).
	Top int
	// By, when set (one of By), prints that one breakdown instead of the
	// view: on a team sharing one cluster, "machine" and "user" split the
	// calls by the machine and user whose daemon recorded them.
	By string
}

// By are the values of `omni stats --by`.
var By = []string{"machine", "user", "project", "tool", "host", "session"}

// byRows returns the breakdown by names (one of By).
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

// WriteJSON prints the report as indented JSON with a final newline (what
// `omni stats --json` prints and the dashboard serves as /stats.json).
// Errors: the writer's.
func WriteJSON(w io.Writer, rep stats.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ParseSince reads a --since value relative to now: a duration (90m, 1h,
// 3d, 2w), today (since local midnight of now's location), week (7 days),
// month (30 days), a date (2026-01-31, local midnight) or an RFC 3339
// time. Errors: any other text, or a day or week count past a duration's
// range (about 292 years).
func ParseSince(s string, now time.Time) (time.Time, error) {
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

// Num formats n with thousands separators ("1,234,567").
func Num[T ~int | ~int64](n T) string {
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

// Size formats a byte count in decimal units with one decimal ("2.4 MB");
// under 1000 it prints whole bytes ("999 B").
func Size(n int64) string {
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

// Plural returns "1 call", "2 calls", "1,000 calls".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return Num(n) + " " + word + "s"
}

// ClipName squeezes the blanks of s and cuts it to n runes, the last one
// an ellipsis when it was cut.
func ClipName(s string, n int) string {
	r := []rune(events.Printable(strings.Join(strings.Fields(s), " ")))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// Span describes the time range of a report: "empty log", "whole log (A …
// B)" or "since S (A … B)".
func Span(rep stats.Report) string {
	if rep.FirstEvent == "" {
		return "empty log"
	}
	r := rep.FirstEvent + " … " + rep.LastEvent
	if rep.Since != "" {
		return "since " + rep.Since + " (" + r + ")"
	}
	return "whole log (" + r + ")"
}

func pctStr(p float64) string { return strconv.FormatFloat(p, 'f', 1, 64) + "%" }
