// Package linediff computes a line diff between two texts and prints it in
// unified form: the edit script (Myers' O(ND) algorithm after trimming the
// common prefix and suffix), its hunks with context, and the @@ lines.
// `omni diff` uses it to show a tool's raw output beside what the model was
// given. It imports the standard library only.
package linediff

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Line is one line of an edit script: Op is ' ' (in both texts), '-' (only
// in the old) or '+' (only in the new); Text is the line with its '\n'
// ending, if it had one.
type Line struct {
	Op   byte
	Text string
}

// Hunk is one @@ block: A0/An and B0/Bn are the 0-based start and length
// (in lines) in the old and new texts; Lines the script lines it shows.
type Hunk struct {
	A0, An, B0, Bn int
	Lines          []Line
}

// MaxEdits bounds the Myers search (its trace takes about MaxEdits² ints);
// past it the differing middle is shown as one deletion and one insertion.
const MaxEdits = 1000

// SplitKeepEnds splits s after every '\n', keeping the endings; a last line
// without one is kept as is. "" gives no lines.
func SplitKeepEnds(s string) []string {
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

// Script returns an edit script from a to b: applying its ' ' and '-' lines
// gives a, its ' ' and '+' lines b. It is shortest unless more than
// MaxEdits edits are needed.
func Script(a, b []string) []Line {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []Line
	for _, l := range a[:pre] {
		out = append(out, Line{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, Line{' ', l})
	}
	return out
}

// myers returns a shortest edit script from a to b, or replaceAll when it
// needs more than MaxEdits edits.
func myers(a, b []string) []Line {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	maxD := min(n+m, MaxEdits)
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
	var rev []Line
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
			rev = append(rev, Line{' ', a[x]})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, Line{'+', b[y]})
			} else {
				x--
				rev = append(rev, Line{'-', a[x]})
			}
		}
	}
	out := make([]Line, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// replaceAll is the script that deletes all of a and inserts all of b.
func replaceAll(a, b []string) []Line {
	out := make([]Line, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, Line{'-', l})
	}
	for _, l := range b {
		out = append(out, Line{'+', l})
	}
	return out
}

// Hunks groups the edit script from a to b into hunks with ctx lines of
// context around each change; changes at most 2*ctx lines apart share a
// hunk.
func Hunks(a, b []string, ctx int) []Hunk {
	script := Script(a, b)
	var hunks []Hunk
	ai, bi := 0, 0 // positions before script[i]
	type pos struct{ a, b int }
	at := make([]pos, len(script)+1)
	for i, l := range script {
		at[i] = pos{ai, bi}
		if l.Op != '+' {
			ai++
		}
		if l.Op != '-' {
			bi++
		}
	}
	at[len(script)] = pos{ai, bi}
	i := 0
	for i < len(script) {
		if script[i].Op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(script) {
			if script[end].Op != ' ' {
				end++
				continue
			}
			// a run of context: does another change follow within 2*ctx?
			j := end
			for j < len(script) && script[j].Op == ' ' {
				j++
			}
			if j < len(script) && j-end <= 2*ctx {
				end = j
				continue
			}
			end = min(end+ctx, len(script))
			break
		}
		h := Hunk{A0: at[start].a, B0: at[start].b, Lines: script[start:end]}
		h.An = at[end].a - h.A0
		h.Bn = at[end].b - h.B0
		hunks = append(hunks, h)
		i = end
	}
	return hunks
}

// The ANSI colours Write paints with when asked.
const (
	Red   = "\x1b[31m"
	Green = "\x1b[32m"
	Cyan  = "\x1b[36m"
	Bold  = "\x1b[1m"
	Reset = "\x1b[0m"
)

// Paint returns s wrapped in the colour code and Reset when color is set,
// s itself otherwise.
func Paint(color bool, code, s string) string {
	if !color {
		return s
	}
	return code + s + Reset
}

// Write prints the hunks from a to b with ctx lines of context, each under
// its "@@ -a +b @@" line: '-' lines red, '+' lines green and @@ lines cyan
// when color is set, and `\ No newline at end of text` after a line that
// has no ending. It prints nothing when a and b are equal.
func Write(w io.Writer, a, b []string, ctx int, color bool) {
	for _, h := range Hunks(a, b, ctx) {
		fmt.Fprintln(w, Paint(color, Cyan, fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.A0, h.An), hunkRange(h.B0, h.Bn))))
		for _, l := range h.Lines {
			text := l.Text
			noEOL := !strings.HasSuffix(text, "\n")
			text = strings.TrimSuffix(text, "\n")
			switch l.Op {
			case '-':
				fmt.Fprintln(w, Paint(color, Red, "-"+text))
			case '+':
				fmt.Fprintln(w, Paint(color, Green, "+"+text))
			default:
				fmt.Fprintln(w, " "+text)
			}
			if noEOL {
				fmt.Fprintln(w, `\ No newline at end of text`)
			}
		}
	}
}

// hunkRange is the "start,len" of one side of an @@ line (1-based; "n" when
// len is 1, "start,0" for an empty side).
func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	if n == 0 {
		return strconv.Itoa(start) + ",0"
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}
