package distill

import (
	"slices"
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Block collapse bounds.
const (
	// minBlockPeriod and maxBlockPeriod bound the lines of one repeated
	// block: 2 to 8 (one line is Collapse's own line rule; a build step of
	// docker, with its cache and layer lines, is 3 to 5).
	minBlockPeriod, maxBlockPeriod = 2, 8
	// minBlockRepeats: a run needs 4 blocks or more, so that after the
	// first and last blocks stay at least 2 fold (one folded block is
	// never worth a marker).
	minBlockRepeats = 4
)

// CollapseBlocks folds the interior of every run of 4 or more consecutive
// blocks of 2 to 8 lines that repeat one shape: line k of every block
// reads like line k of the first once digit runs and hex ids are masked
// (blockShape), the block holds two shapes or more, and at least one of
// its lines is routine (a timestamped log line at a routine level, a typed
// progress line such as "---> Using cache"; routineLine), so a cycle of a
// build or progress log is recognised while a table of results, a list of
// commits or a program's own debug prints, whose lines are facts, are not. The first
// and last blocks of a run stay; the blocks between become one line
//
//	[N similar blocks of P lines collapsed] (pattern: "…")
//
// whose pattern is the first line of the first folded block (its first 57
// characters). A blank line or a failure line (textline.IsFailureLine)
// belongs to no block and ends a run. It returns the new text, the number
// of folded lines and whether anything changed; the caller archives the
// raw output behind its rewind marker.
func CollapseBlocks(text string, lines []textline.Line) (string, int, bool) {
	if len(lines) < minLinesForCollapse {
		return text, 0, false
	}
	// A blank or failure line has no shape and is never routine.
	flags := make([]bool, 2*len(lines))
	shaped, routine := flags[:len(lines)], flags[len(lines):]
	for i, ln := range lines {
		s := text[ln.Start:ln.End]
		if ln.Key == 0 || textline.IsFailureLine(s) {
			continue
		}
		shaped[i] = true
		routine[i] = routineLine(strings.TrimSpace(s))
	}
	return collapseBlocks(text, lines, shaped, routine)
}

// collapseBlocks is CollapseBlocks over lines already classed: shaped[i]
// when line i is neither blank nor a failure line, routine[i] when it is
// also routineLine. Collapse calls it with the classes it computed.
func collapseBlocks(text string, lines []textline.Line, shaped, routine []bool) (string, int, bool) {
	if len(lines) < minLinesForCollapse || !slices.Contains(routine, true) {
		return text, 0, false
	}
	shapes := &blockShapes{text: text, lines: lines, shaped: shaped, shapes: make([]string, len(lines)), done: make([]bool, len(lines))}
	var b strings.Builder
	pos, folded := 0, 0
	for i := 0; i < len(lines); {
		bestP, bestR := 0, 0
		for p := minBlockPeriod; p <= maxBlockPeriod && i+p*minBlockRepeats <= len(lines); p++ {
			// The routine test first: it is O(p), and without it a long
			// run of one shape would be rescanned from every line.
			if !hasRoutine(routine, i, p) || !distinctShapes(shapes, i, p) {
				continue
			}
			r := blockRepeats(shapes, i, p)
			if r >= minBlockRepeats && r*p > bestR*bestP {
				bestP, bestR = p, r
			}
		}
		if bestP == 0 {
			i++
			continue
		}
		fa, fb := i+bestP, i+(bestR-1)*bestP // the folded blocks' lines [fa, fb)
		m := "[" + strconv.Itoa(bestR-2) + " similar blocks of " + strconv.Itoa(bestP) + " lines collapsed] (pattern: \"" +
			truncRunes(strings.TrimSpace(text[lines[fa].Start:lines[fa].End]), maxPatternChars) + "\")"
		end := textline.Ending(text[lines[fb-1].Start:lines[fb-1].End])
		if len(m)+len(end) < lines[fb-1].End-lines[fa].Start {
			b.WriteString(text[pos:lines[fa].Start])
			b.WriteString(m)
			b.WriteString(end)
			pos = lines[fb-1].End
			folded += fb - fa
		}
		i += bestR * bestP
	}
	if folded == 0 {
		return text, 0, false
	}
	b.WriteString(text[pos:])
	return b.String(), folded, true
}

// blockShapes gives the shape of each line (blockShape of the trimmed
// line; "" for a line without one, blank or failure), computed when the
// block search first reads it: only blocks that hold a routine line are
// compared, so most lines of most outputs are never shaped. Shapes are cut
// from one growing arena (a Builder never changes bytes it has written, so
// earlier cuts stay valid).
type blockShapes struct {
	text   string
	lines  []textline.Line
	shaped []bool
	shapes []string
	done   []bool
	arena  strings.Builder
}

func (sh *blockShapes) at(i int) string {
	if !sh.done[i] {
		sh.done[i] = true
		if sh.shaped[i] {
			ln := sh.lines[i]
			start := sh.arena.Len()
			appendBlockShape(&sh.arena, strings.TrimSpace(sh.text[ln.Start:ln.End]))
			sh.shapes[i] = sh.arena.String()[start:]
		}
	}
	return sh.shapes[i]
}

// blockRepeats counts the consecutive blocks of p lines from line i whose
// shapes equal the first block's, line for line (1 when only the first).
func blockRepeats(shapes *blockShapes, i, p int) int {
	for k := 0; k < p; k++ {
		if shapes.at(i+k) == "" {
			return 0
		}
	}
	r := 1
	for j := i + p; j+p <= len(shapes.shapes); j += p {
		for k := 0; k < p; k++ {
			if shapes.at(j+k) != shapes.at(i+k) {
				return r
			}
		}
		r++
	}
	return r
}

// hasRoutine reports whether some line of the block of p lines from line
// i is routine; the shapes being equal line for line, it is then routine
// in every block of the run.
func hasRoutine(routine []bool, i, p int) bool {
	for k := 0; k < p; k++ {
		if routine[i+k] {
			return true
		}
	}
	return false
}

// routineLine reports whether a trimmed line is a routine entry: a
// timestamped DEBUG/INFO/TRACE… log line (logLevel) or a typed progress or
// passing-test line (typedPattern, e.g. "---> Using cache", "Collecting
// …"). An untimestamped "DEBUG: …" is not: it is as often a program's own
// print of the values the user is looking for. typedPattern names both
// (a routine log line is its logKey), so its verdict is this one.
func routineLine(t string) bool {
	return typedPattern(t) != ""
}

// distinctShapes reports whether the block of p lines from line i holds at
// least two different shapes: a cycle, not one line's shape repeated (lines
// that differ only in their numbers are Collapse's line rule, which keeps
// them: they are distinct facts).
func distinctShapes(shapes *blockShapes, i, p int) bool {
	for k := 1; k < p; k++ {
		if shapes.at(i+k) != shapes.at(i) {
			return true
		}
	}
	return false
}

// blockShape masks a trimmed line's digit runs as "#" and its words that
// are hex ids (isHexish: 6 or more hex digits) as "#".
func blockShape(t string) string {
	var b strings.Builder
	appendBlockShape(&b, t)
	return b.String()
}

// appendBlockShape writes blockShape(t) to b: t's words, each with the
// space after it, a hex id masked whole and every other word's digit runs
// masked.
func appendBlockShape(b *strings.Builder, t string) {
	b.Grow(len(t))
	for t != "" {
		w := t
		if k := strings.IndexByte(t, ' '); k >= 0 {
			w = t[:k+1]
		}
		t = t[len(w):]
		core := strings.TrimSuffix(w, " ")
		if isHexish(core) {
			b.WriteByte('#')
			b.WriteString(w[len(core):])
			continue
		}
		digits := false
		for i := 0; i < len(w); i++ {
			if c := w[i]; c >= '0' && c <= '9' {
				if !digits {
					b.WriteByte('#')
				}
				digits = true
				continue
			}
			digits = false
			b.WriteByte(w[i])
		}
	}
}

// truncRunes cuts s to n runes, with "…" when it was longer.
func truncRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
