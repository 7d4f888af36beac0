package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// HandleLen is the length of a handle in hex characters: 64 bits of SHA-256.
const HandleLen = 16

// ExampleHandle is reserved for documentation; no real block is ever named
// by it (a block that hashes to it is named ...0001) and `omni retrieve`
// refuses it, so a documentation example is never taken for a real handle.
const ExampleHandle = "0000000000000000"

// maxSourceInMarker bounds the from-clause's source, in characters: first
// line only, control characters dropped, whitespace squeezed (46.9% of the
// commands in a measured ledger of recorded agent calls contain newlines).
const maxSourceInMarker = 40

// Filler is the line that stands for one more replaced line after a marker
// in a Read result, so every surviving line keeps its number (U+22EE, the
// vertical ellipsis: the host numbers every line it shows).
const Filler = "⋮"

// HandleOf returns the handle of an archived block: the first 16 lowercase
// hex characters of the SHA-256 of its exact bytes, with the reserved
// ExampleHandle remapped to "0000000000000001".
func HandleOf(block string) string {
	sum := sha256.Sum256([]byte(block))
	h := hex.EncodeToString(sum[:HandleLen/2])
	if h == ExampleHandle {
		return "0000000000000001"
	}
	return h
}

// MarkerKind is the wording of a ledger marker.
type MarkerKind string

// The ledger marker kinds; each one's text is given below and pinned by
// TestRenderMarkerTexts.
const (
	// MarkerRun: "[OMNI: N lines already shown, omni retrieve H]" (about
	// 60 bytes: the wording says whether the lines were shown to this
	// reader and names the command that brings them back).
	MarkerRun MarkerKind = "run"
	// MarkerRerun: "[OMNI: N lines identical to an earlier run, omni retrieve H]".
	// No longer emitted (a run is one marker whatever call first
	// delivered it); kept so older logs read and replay.
	MarkerRerun MarkerKind = "rerun"
	// MarkerWhole: "[OMNI: identical to the N lines already shown, omni
	// retrieve H]" (for a Read, a lone marker may change the line count
	// only when its wording says the whole file repeats).
	MarkerWhole MarkerKind = "whole"
	// MarkerShortened: "[OMNI: output shortened to N lines, all shown before; the M lines: omni retrieve H]",
	// a whole output whose shortened form (Shorten's) the reader was
	// shown already; H returns the tool's M lines, not the short form.
	MarkerShortened MarkerKind = "shortened"
	// MarkerProject: "[OMNI: N lines not shown here, omni retrieve H]".
	MarkerProject MarkerKind = "project"
	// MarkerProjectWhole: "[OMNI: identical to N lines from an earlier session[ from S], none shown here, omni retrieve H]".
	// Never emitted by Decide: a project fold never replaces a whole output.
	MarkerProjectWhole MarkerKind = "project-whole"
)

// renderWhole returns the MarkerWhole text (no line ending) for n lines
// and handle h. One wording for every tool ("identical to the N lines
// already shown"): a checker that reads markers tells a whole-output fold
// by "identical to" (the shared hook scenarios do), and a model reads the
// whole output as repeated. read is kept for the callers' sake.
func renderWhole(n int, h string, read bool) string {
	_ = read
	return renderMarker(MarkerWhole, n, h, "")
}

// renderShortened returns the MarkerShortened text (no line ending): n
// lines of the short form shown before, m lines of the tool's output
// behind handle h.
func renderShortened(n, m int, h string) string {
	return "[OMNI: output shortened to " + strconv.Itoa(n) + " lines, all shown before; the " +
		strconv.Itoa(m) + " lines: omni retrieve " + h + "]"
}

// renderMarker returns the exact marker text (no line ending) for n lines,
// handle h and from-clause source from ("" for none; Decide passes none).
func renderMarker(kind MarkerKind, n int, h, from string) string {
	var b strings.Builder
	b.Grow(80 + len(from))
	b.WriteString("[OMNI: ")
	num := strconv.Itoa(n)
	fromClause := ""
	if from != "" {
		fromClause = " from " + from
	}
	switch kind {
	case MarkerWhole:
		b.WriteString("identical to the ")
		b.WriteString(num)
		b.WriteString(" lines already shown")
		b.WriteString(fromClause)
	case MarkerRerun:
		b.WriteString(num)
		b.WriteString(" lines identical to an earlier run")
	case MarkerProject:
		b.WriteString(num)
		b.WriteString(" lines not shown here")
		b.WriteString(fromClause)
	case MarkerProjectWhole:
		b.WriteString("identical to ")
		b.WriteString(num)
		b.WriteString(" lines from an earlier session")
		b.WriteString(fromClause)
		b.WriteString(", none shown here")
	default:
		b.WriteString(num)
		b.WriteString(" lines already shown")
		b.WriteString(fromClause)
	}
	b.WriteString(", omni retrieve ")
	b.WriteString(h)
	b.WriteString("]")
	return b.String()
}

// sourceForMarker shortens a command or path for a from-clause: its first
// line, control characters dropped, runs of whitespace squeezed to one
// space, trimmed, at most maxSourceInMarker characters.
func sourceForMarker(src string) string {
	if i := strings.IndexAny(src, "\r\n"); i >= 0 {
		src = src[:i]
	}
	var b strings.Builder
	n := 0
	space := false
	for _, r := range strings.TrimSpace(src) {
		if r == ' ' || r == '\t' {
			space = true
			continue
		}
		if r < 0x20 || r == 0x7f {
			continue
		}
		if space && n > 0 {
			if n+1 >= maxSourceInMarker {
				break
			}
			b.WriteByte(' ')
			n++
		}
		space = false
		b.WriteRune(r)
		n++
		if n >= maxSourceInMarker {
			break
		}
	}
	return b.String()
}
