package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
)

type diffOptions struct {
	color   string
	context int
	asJSON  bool
}

func newDiffCmd(s streams) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [SEQ]",
		Short: "Show what a tool produced beside what the model was given",
		Long: `Reruns one recorded invocation from the event log — the newest that
delivered text, or the one at sequence SEQ (as printed by omni replay,
omni explain or omni stats) — exactly as omni replay does, and prints a
unified diff from the raw text to the delivered one. Lines starting with -
never reached the model; lines starting with + are what replaced them.

Colour is used only on a terminal (--color auto, the default; NO_COLOR turns
it off). A header names the reader, tool, command and folds. If the rerun is
not byte-identical to what the log says was delivered, a note says so.

Exit codes: 0 printed; 1 SEQ holds no invocation that delivered text;
2 a bad argument, or the store could not be read.`,
		Example: `  omni diff
  omni diff 42 --context 1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.context < 0 {
				return usageErr("omni diff: --context %d: want 0 or more lines", o.context)
			}
			var seq uint64
			if len(args) == 1 {
				var err error
				if seq, err = strconv.ParseUint(strings.TrimSpace(args[0]), 10, 64); err != nil || seq == 0 {
					return usageErr("omni diff: %q is not a sequence number", args[0])
				}
			}
			switch o.color {
			case "auto", "always", "never":
			default:
				return usageErr("omni diff: --color is auto, always or never")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			d, err := newClient().Diff(ctx, daemon.DiffRequest{Seq: events.Seq(seq)})
			if err != nil {
				return failErr(err, "omni diff: "+strings.TrimPrefix(errMsg(err), "diff: "))
			}
			if o.asJSON {
				return writeJSON(s.Out, d)
			}
			color := o.color == "always" || o.color == "auto" && isTerminal(s.Out) && os.Getenv("NO_COLOR") == ""
			renderDiff(s.Out, d, o.context, color)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.color, "color", "auto", "auto (on a terminal only), always or never")
	cmd.Flags().IntVar(&o.context, "context", 3, "unchanged lines shown around each change")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the raw and delivered texts as JSON")
	return cmd
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
)

// renderDiff prints the header and the unified diff of d.
func renderDiff(w io.Writer, d hooks.DiffResult, ctxLines int, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	what := d.Tool
	if d.Source != "" {
		what += ": " + statsreport.ClipName(d.Source, 80)
	}
	fmt.Fprintln(w, paint(ansiBold, fmt.Sprintf("omni diff · seq %d · %s · %s · %s (%s)", d.Seq, d.Time, d.Reader, what, d.Door)))
	raw, del := splitKeepEnds(d.Raw), splitKeepEnds(d.Delivered)
	fmt.Fprintf(w, "raw %s B, %s lines → delivered %s B, %s lines", statsreport.Num(len(d.Raw)), statsreport.Num(len(raw)), statsreport.Num(len(d.Delivered)), statsreport.Num(len(del)))
	if len(d.Folds) > 0 {
		parts := make([]string, len(d.Folds))
		for i, f := range d.Folds {
			parts[i] = f.Marker + " " + f.Handle
		}
		fmt.Fprintf(w, "; %d fold(s): %s", len(d.Folds), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	if !d.Match {
		fmt.Fprintln(w, "note: this rerun is not byte-identical to what the log says was delivered (omni replay --at", d.Seq, "shows more)")
	}
	if d.Raw == d.Delivered {
		reason := d.Reason
		if reason == "" {
			reason = "nothing folded"
		}
		fmt.Fprintf(w, "delivered unchanged (%s)\n", reason)
		return
	}
	fmt.Fprintln(w, paint(ansiRed, "--- raw"))
	fmt.Fprintln(w, paint(ansiGreen, "+++ delivered"))
	for _, h := range unifiedHunks(raw, del, ctxLines) {
		fmt.Fprintln(w, paint(ansiCyan, fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.a0, h.an), hunkRange(h.b0, h.bn))))
		for _, l := range h.lines {
			text := l.text
			noEOL := !strings.HasSuffix(text, "\n")
			text = strings.TrimSuffix(text, "\n")
			switch l.op {
			case '-':
				fmt.Fprintln(w, paint(ansiRed, "-"+text))
			case '+':
				fmt.Fprintln(w, paint(ansiGreen, "+"+text))
			default:
				fmt.Fprintln(w, " "+text)
			}
			if noEOL {
				fmt.Fprintln(w, `\ No newline at end of text`)
			}
		}
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	if n == 0 {
		return strconv.Itoa(start) + ",0"
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

// splitKeepEnds splits s after every '\n', keeping the endings.
func splitKeepEnds(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffLine is one line of a diff: op is ' ', '-' or '+'.
type diffLine struct {
	op   byte
	text string
}

// hunk is one @@ block: a0/an and b0/bn are the 0-based start and length in
// the old and new texts.
type hunk struct {
	a0, an, b0, bn int
	lines          []diffLine
}

// maxDiffEdits bounds the Myers search (its trace takes about
// maxDiffEdits² ints); past it the differing middle is shown as one
// deletion and one insertion.
const maxDiffEdits = 1000

// diffLinesOf returns the edit script from a to b (Myers' O(ND) algorithm
// after trimming the common prefix and suffix).
func diffLinesOf(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []diffLine
	for _, l := range a[:pre] {
		out = append(out, diffLine{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, diffLine{' ', l})
	}
	return out
}

// myers returns a shortest edit script from a to b, or replaceAll when it
// needs more than maxDiffEdits edits.
func myers(a, b []string) []diffLine {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[k] for k in [-d-1, d+1] before step d, at index k+d+1.
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return replaceAll(a, b)
	}
	var rev []diffLine
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d+1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := 0
		if d > 0 {
			px = at(pk)
		}
		py := px - pk
		if d == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffLine{' ', a[x]})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, diffLine{'+', b[y]})
			} else {
				x--
				rev = append(rev, diffLine{'-', a[x]})
			}
		}
	}
	out := make([]diffLine, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

func replaceAll(a, b []string) []diffLine {
	out := make([]diffLine, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, diffLine{'-', l})
	}
	for _, l := range b {
		out = append(out, diffLine{'+', l})
	}
	return out
}

// unifiedHunks groups an edit script into hunks with ctx lines of context.
func unifiedHunks(a, b []string, ctx int) []hunk {
	script := diffLinesOf(a, b)
	var hunks []hunk
	ai, bi := 0, 0 // positions before script[i]
	type pos struct{ a, b int }
	at := make([]pos, len(script)+1)
	for i, l := range script {
		at[i] = pos{ai, bi}
		if l.op != '+' {
			ai++
		}
		if l.op != '-' {
			bi++
		}
	}
	at[len(script)] = pos{ai, bi}
	i := 0
	for i < len(script) {
		if script[i].op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(script) {
			if script[end].op != ' ' {
				end++
				continue
			}
			// a run of context: does another change follow within 2*ctx?
			j := end
			for j < len(script) && script[j].op == ' ' {
				j++
			}
			if j < len(script) && j-end <= 2*ctx {
				end = j
				continue
			}
			end = min(end+ctx, len(script))
			break
		}
		h := hunk{a0: at[start].a, b0: at[start].b, lines: script[start:end]}
		h.an = at[end].a - h.a0
		h.bn = at[end].b - h.b0
		hunks = append(hunks, h)
		i = end
	}
	return hunks
}
