package distill

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Collapse thresholds.
const (
	// minLinesForCollapse: an output under 10 lines is never collapsed
	// (MIN_LINES_FOR_COLLAPSE).
	minLinesForCollapse = 10
	// minGroupSize: a group needs 3 or more consecutive near-identical lines
	// (MIN_GROUP_SIZE).
	minGroupSize = 3
	// maxPatternChars: a generic marker shows at most 57 characters of the
	// repeated line, then "…".
	maxPatternChars = 57
)

// logKey is the grouping key of routine log lines (typedPattern).
const logKey = "\x00log"

// Collapse is the collapse fallback: it folds every run of 3 or more
// consecutive near-identical lines of a text of 10 lines or more into one
// marker line:
//
//	[N similar lines collapsed] (pattern: "P")
//
// Lines are near-identical when they share a typed pattern (a passing test
// line "test _ ... ok", "=== RUN _ / --- PASS: _", "✓ _"; a progress line "Compiling
// _", "Collecting _", "npm http fetch _"), or are the same line once
// trimmed (digits are not normalised: lines that differ only in numbers are
// distinct facts). Timestamped routine log entries (DEBUG, INFO, TRACE,
// ... lines, of any of these levels; see logLevel) form runs too, but a run
// keeps its first and last line and folds its interior, so the entries next to a warning or an
// error are still read; their marker counts the levels:
//
//	[142 log lines collapsed: 120 DEBUG, 22 INFO]
//
// A timestamped warning that repeats in one shape (logShape: the words that
// hold digits masked) three times or more stays at its first occurrence; the
// later ones join the routine runs and are counted in the marker under their
// own level ("…, 40 WARNING"), so a worker that rejects one record in ten
// reads as its first rejection, the counts, and whatever else it said.
//
// A failure line (textline.IsFailureLine) and a blank line are never grouped and end
// a run. Runs of identical lines that are not typed collapse only when
// more than half of the non-blank lines are collapsible. The marker takes
// the place of the run (only when it is shorter than the run) and ends
// like its last line; every other line is kept byte for byte. It is for
// outputs that are not enumerations (the caller checks that).
//
// lines are text's (textline.SplitLines). Collapse returns the new text,
// folded (the input lines replaced by markers) and ok, whether anything
// changed (text is returned unchanged when not).
func Collapse(text string, lines []textline.Line) (out string, folded int, ok bool) {
	return CollapseClassed(text, lines, nil)
}

// CollapseClassed is Collapse given failure[i], textline.IsFailureLine of
// line i, for every line (nil: Collapse reads them itself).
func CollapseClassed(text string, lines []textline.Line, failure []bool) (out string, folded int, ok bool) {
	if len(lines) < minLinesForCollapse {
		return text, 0, false
	}
	keys := make([]string, len(lines))
	// typed is whether a line's key is a typed pattern; routine keeps its
	// first value (typedPattern's verdict, which is routineLine's) and
	// shaped which lines have a block shape (neither blank nor a failure),
	// so CollapseBlocks below does not read every line again.
	flags := make([]bool, 3*len(lines))
	typed, routine, shaped := flags[:len(lines)], flags[len(lines):2*len(lines)], flags[2*len(lines):]
	nonBlank := 0
	var warnShapes map[string]int // shape of a timestamped warning → occurrences so far
	for i, ln := range lines {
		if ln.Key == 0 {
			continue
		}
		nonBlank++
		s := text[ln.Start:ln.End]
		if failure != nil && failure[i] || failure == nil && textline.IsFailureLine(s) {
			continue
		}
		shaped[i] = true
		t := strings.TrimSpace(s)
		if k := typedPattern(t); k != "" {
			keys[i], typed[i], routine[i] = k, true, true
		} else {
			keys[i] = t
		}
		if logLevelOf(t, warnLevels) != "" {
			if warnShapes == nil {
				warnShapes = map[string]int{}
			}
			warnShapes[logShape(t)]++
		}
	}
	// A timestamped warning whose shape (its text after the level, with
	// every word that holds a digit masked) repeats minGroupSize times or
	// more is routine after its first occurrence: the first one stays, the
	// later ones join the routine runs around them and are counted in the
	// marker under their level.
	if len(warnShapes) > 0 {
		seen := map[string]bool{}
		for i, ln := range lines {
			if ln.Key == 0 || keys[i] == "" || typed[i] {
				continue
			}
			t := strings.TrimSpace(text[ln.Start:ln.End])
			if logLevelOf(t, warnLevels) == "" {
				continue
			}
			sh := logShape(t)
			if warnShapes[sh] >= minGroupSize && seen[sh] {
				keys[i], typed[i] = logKey, true
			}
			seen[sh] = true
		}
	}
	// A group is the run [a, b) of one key whose lines [fa, fb) fold: all of
	// it, or for routine log lines its interior (the first and last lines
	// stay, so the entries around a warning or error are still read).
	type group struct{ a, b, fa, fb int }
	var groups []group
	collapsible := 0
	for i := 0; i < len(lines); {
		if keys[i] == "" {
			i++
			continue
		}
		j := i + 1
		for j < len(lines) && keys[j] == keys[i] && typed[j] == typed[i] {
			j++
		}
		fa, fb := i, j
		if keys[i] == logKey {
			fa, fb = i+1, j-1
		}
		if fb-fa >= minGroupSize {
			groups = append(groups, group{i, j, fa, fb})
			collapsible += fb - fa
		}
		i = j
	}
	if len(groups) == 0 {
		return collapseBlocks(text, lines, shaped, routine)
	}
	genericOK := collapsible*2 > nonBlank
	var b strings.Builder
	b.Grow(len(text) / 2)
	pos := 0
	for _, g := range groups {
		if !typed[g.a] && !genericOK {
			continue
		}
		var m string
		if keys[g.a] == logKey {
			m = logMarker(text, lines[g.fa:g.fb])
		} else {
			m = collapseMarker(g.fb-g.fa, keys[g.a], typed[g.a])
		}
		end := textline.Ending(text[lines[g.fb-1].Start:lines[g.fb-1].End])
		if len(m)+len(end) >= lines[g.fb-1].End-lines[g.fa].Start {
			continue // the marker would not be shorter than the lines
		}
		b.WriteString(text[pos:lines[g.fa].Start])
		b.WriteString(m)
		b.WriteString(end)
		pos = lines[g.fb-1].End
		folded += g.fb - g.fa
	}
	if folded == 0 {
		return collapseBlocks(text, lines, shaped, routine)
	}
	b.WriteString(text[pos:])
	return b.String(), folded, true
}

// logMarker renders the marker for folded routine log lines, with the
// count per level in order of first appearance: "[142 log lines collapsed:
// 120 DEBUG, 22 INFO]".
func logMarker(text string, lines []textline.Line) string {
	var levels [8]string
	var counts [8]int
	nl := 0
	for _, ln := range lines {
		t := strings.TrimSpace(text[ln.Start:ln.End])
		lv := logLevel(t)
		if lv == "" {
			lv = logLevelOf(t, warnLevels)
		}
		k := 0
		for k < nl && levels[k] != lv {
			k++
		}
		if k == nl && nl < len(levels) {
			levels[nl] = lv
			nl++
		}
		if k < nl {
			counts[k]++
		}
	}
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(strconv.Itoa(len(lines)))
	b.WriteString(" log lines collapsed: ")
	for k := 0; k < nl; k++ {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(counts[k]))
		b.WriteByte(' ')
		b.WriteString(levels[k])
	}
	b.WriteString("]")
	return b.String()
}

// collapseMarker renders the marker for n lines of one pattern:
// "[N similar lines collapsed] (pattern: \"P\")", an untyped pattern cut to
// maxPatternChars and "…" (typed groups show their pattern whole).
func collapseMarker(n int, key string, typed bool) string {
	p := key
	if !typed {
		if r := []rune(p); len(r) > maxPatternChars {
			p = string(r[:maxPatternChars]) + "…"
		}
	}
	return "[" + strconv.Itoa(n) + " similar lines collapsed] (pattern: \"" + p + "\")"
}

// typedPattern returns the typed pattern of a trimmed line, or "".
func typedPattern(t string) string {
	switch {
	case strings.HasPrefix(t, "test ") && strings.HasSuffix(t, " ... ok"):
		return "test _ ... ok"
	case strings.HasPrefix(t, "--- PASS: ") || hasPrefixAny(t, "=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "):
		// go test -v interleaves these for every passing test.
		return "=== RUN _ / --- PASS: _"
	case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "✔ ") || strings.HasPrefix(t, "√ ")) && !strings.Contains(t, " test"):
		// (vitest's "✓ file (8 tests) 3ms" lines are per-file tallies: kept)
		return "✓ _"
	case strings.HasPrefix(t, "Passed ") && strings.HasSuffix(t, "]"):
		return "Passed _"
	case (strings.HasSuffix(t, " PASSED") || strings.HasSuffix(t, "%]")) && strings.Contains(t, " PASSED") && strings.Contains(t, "::"):
		// (the suffixes first: a line without them is not scanned)
		return "_ PASSED"
	case strings.HasPrefix(t, "ok ") && len(t) > 3 && t[3] >= '0' && t[3] <= '9':
		return "ok _"
	case cargoProgress(t):
		return t[:strings.IndexByte(t, ' ')] + " _"
	case strings.HasPrefix(t, "go: downloading "):
		return "go: downloading _"
	case strings.HasPrefix(t, "npm http fetch "):
		return "npm http fetch _"
	case t != "" && t[0] >= 'A' && t[0] <= 'Z' && hasPrefixAny(t, "Collecting ", "Using cached ", "Setting up ", "Unpacking ", "Preparing to unpack ",
		"Selecting previously unselected package ", "Processing triggers for "):
		return t[:strings.IndexByte(t, ' ')] + " _"
	case strings.HasPrefix(t, "Requirement already satisfied: "):
		return "Requirement already satisfied: _"
	case strings.HasPrefix(t, "Get:") || strings.HasPrefix(t, "Hit:"):
		return t[:4] + "_"
	case strings.HasPrefix(t, "---> ") && (t == "---> Using cache" || isHexish(t[5:])):
		return "---> _"
	case strings.HasPrefix(t, "[") && cmakeProgress(t):
		return "[_] " + firstWord(strings.TrimSpace(t[strings.IndexByte(t, ']')+1:])) + " _"
	case layerProgress(t):
		return "<layer> pull progress"
	}
	if logLevel(t) != "" {
		return logKey
	}
	return ""
}

// routineLevels are the log levels of routine entries; warnings and errors
// are never typed.
var routineLevels = []string{"DEBUG", "INFO", "TRACE", "NOTICE", "VERBOSE", "FINE", "FINER", "FINEST"}

// logLevel returns the routine level of a timestamped log line, or "": an
// upper-case level word among the first four blank-separated words, after
// a timestamp word ("2026-11-29 10:41:17,884 DEBUG [db] …", "[2026-…Z]
// [INFO] …"), or a logfmt level=info/level=debug next to time=/ts=. Lines
// without a timestamp ("DEBUG: x=1" printed by a script the agent is
// debugging) are not log entries here: they are what the agent wants to
// read.
func logLevel(t string) string {
	if lv := logLevelOf(t, routineLevels); lv != "" {
		return lv
	}
	return plainLogEntry(t)
}

// warnLevels are the warning levels of timestamped log entries: never
// routine, but a warning that repeats in one shape is folded after its first
// occurrence (collapseLines).
var warnLevels = []string{"WARNING", "WARN"}

// logShape is the text of a timestamped log line after its level word, with
// every blank- or punctuation-separated word that holds a digit replaced by
// "#": "record 406b66 rejected (batch=4)" and "record 5e2ec5 rejected
// (batch=7)" have one shape. It is the identity of a repeated warning.
func logShape(t string) string {
	// Skip to the first level word (the timestamp words hold digits and
	// would be masked anyway).
	for _, lv := range warnLevels {
		if i := strings.Index(t, lv); i >= 0 {
			t = t[i+len(lv):]
			break
		}
	}
	var b strings.Builder
	b.Grow(len(t))
	for i := 0; i < len(t); {
		j := i
		for j < len(t) && isShapeWordByte(t[j]) {
			j++
		}
		if j == i {
			b.WriteByte(t[i])
			i++
			continue
		}
		w := t[i:j]
		if strings.IndexAny(w, "0123456789") >= 0 {
			b.WriteByte('#')
		} else {
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}

// isShapeWordByte is a byte of a word for logShape: letters, digits, "_",
// "." and "-" (so "1.4.2" and "a-1" are one word each).
func isShapeWordByte(c byte) bool {
	return c == '_' || c == '.' || c == '-' || c >= 0x80 || (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'z')
}

// logLevelOf returns the level of a timestamped log line when it is one of
// levels, or "".
func logLevelOf(t string, levels []string) string {
	if t == "" || !(t[0] >= '0' && t[0] <= '9' || t[0] == '[' || t[0] == 't' || t[0] == 'l') {
		return ""
	}
	rest := t
	stamped := false
	logfmtTime := false
	logfmtLevel := ""
	for w := 0; w < 6 && rest != ""; w++ {
		sp := strings.IndexAny(rest, " \t")
		tok := rest
		if sp >= 0 {
			tok, rest = rest[:sp], strings.TrimLeft(rest[sp:], " \t")
		} else {
			rest = ""
		}
		if strings.HasPrefix(tok, "time=") || strings.HasPrefix(tok, "ts=") || strings.HasPrefix(tok, "t=") {
			logfmtTime = true
			continue
		}
		if strings.HasPrefix(tok, "level=") {
			logfmtLevel = ""
			want := strings.ToUpper(strings.Trim(tok[6:], `"`))
			for _, lv := range levels {
				if want == lv && (lv == "DEBUG" || lv == "INFO" || lv == "TRACE" || lv == "WARNING" || lv == "WARN") {
					logfmtLevel = lv
				}
			}
			if logfmtLevel == "" {
				return ""
			}
			if logfmtTime {
				return logfmtLevel
			}
			continue
		}
		if w >= 6 || (w >= 4 && !stamped) {
			continue
		}
		if isTimestampWord(tok) {
			stamped = true
			continue
		}
		if !stamped {
			continue
		}
		core := strings.Trim(tok, "[]()<>,|:")
		for _, lv := range levels {
			if core == lv {
				return lv
			}
		}
	}
	if logfmtTime && logfmtLevel != "" {
		return logfmtLevel
	}
	return ""
}

// isTimestampWord reports a date or time word: it starts with a digit
// (after "["), holds at least four digits, and a ":" or "-" or "/".
func isTimestampWord(tok string) bool {
	tok = strings.TrimLeft(tok, "[(")
	if tok == "" || tok[0] < '0' || tok[0] > '9' {
		return false
	}
	digits := 0
	sep := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == ':' || c == '-' || c == '/':
			sep = true
		}
	}
	return digits >= 4 && sep
}

// layerStates are the per-layer states an image pull prints (docker,
// podman and docker compose without a terminal): every state of every
// layer on its own line, the transfer meters included, so a 130 MB layer
// prints some 40 lines. The pull's result is on other lines ("Status:
// Downloaded newer image for …", "✔ neo4j Pulled", "Digest: sha256:…").
var layerStates = []string{"Pulling fs layer", "Waiting", "Verifying Checksum", "Download complete",
	"Pull complete", "Already exists", "Downloading", "Extracting"}

// layerProgress reports one line of an image pull's per-layer progress:
// a 12-hex layer id (docker pull writes it with a colon,
// "b7fe3d198324: Pull complete"), then one of layerStates; "Downloading" and
// "Extracting" only with their meter ("[====>   ]  8.552MB/130.8MB", or
// the bare "  1.369kB/3.841kB" some versions print). A line that says
// anything else about a layer (an error, a retry) is not progress.
func layerProgress(t string) bool {
	if len(t) < 14 || !isHexish(t[:12]) {
		return false
	}
	rest := t[12:]
	if rest[0] == ':' {
		rest = rest[1:]
	}
	if rest == "" || rest[0] != ' ' {
		return false
	}
	rest = rest[1:]
	for _, st := range layerStates {
		if !strings.HasPrefix(rest, st) {
			continue
		}
		m := strings.TrimSpace(rest[len(st):])
		if st != "Downloading" && st != "Extracting" {
			return m == ""
		}
		if strings.HasPrefix(m, "[") {
			k := strings.IndexByte(m, ']')
			if k < 0 || strings.Trim(m[1:k], "=> ") != "" {
				return false
			}
			m = strings.TrimSpace(m[k+1:])
		}
		return meter(m)
	}
	return false
}

// meter reports a transfer meter "8.552MB/130.8MB" or "952B/10.06kB"
// (also with "s" as a unit, "2s/3s"): digits, dots and unit letters on
// both sides of one slash.
func meter(m string) bool {
	k := strings.IndexByte(m, '/')
	if k <= 0 || k == len(m)-1 {
		return false
	}
	for _, side := range []string{m[:k], m[k+1:]} {
		if side[0] < '0' || side[0] > '9' {
			return false
		}
		for i := 0; i < len(side); i++ {
			c := side[i]
			if !(c >= '0' && c <= '9' || c == '.' || c == 'k' || c == 'K' || c == 'M' || c == 'G' || c == 'T' || c == 'B' || c == 'i' || c == 's') {
				return false
			}
		}
	}
	return true
}
