package pipeline

import (
	"encoding/json"
	"strings"
	"unsafe"
)

// Kind names a structured or byte-exact payload class found by Sniff; ""
// (KindNone) means none. Any other value means: deliver the output verbatim
// and keep it away from collapse, the distillers and the ledger (a byte-exact
// payload folded on a re-run is no longer the payload). The string is what a passthrough reason
// records after "structured:".
type Kind string

// The kinds, in the order Sniff checks them. The first six are
// structured kinds; KindJSONLine is the any-JSON-line rule of the distill
// stage; the last three are opaque classes (without them the ledger would
// fold a one-line base64 blob, PEM block or minified bundle on an identical
// re-run). Sizes are bytes of the
// whitespace-trimmed text or line; counts are lines. Sniff's comment gives
// each rule in full.
const (
	// KindNone: no structured or opaque payload; the text may be compressed.
	KindNone Kind = ""
	// KindJSON: the whole text is a JSON object or array ("{…}" or "[…]")
	// that parses; above 1,000,000 bytes the brackets alone decide.
	KindJSON Kind = "json"
	// KindNDJSON: 2 or more non-empty lines, every one starting "{" or "[",
	// and the first 50 of them parse.
	KindNDJSON Kind = "ndjson"
	// KindJSONShaped: bracketed like JSON and holding a `"key":` pair, but not
	// parsing: truncated JSON, JSON with comments.
	KindJSONShaped Kind = "json-shaped"
	// KindYAML: a leading "---" document marker, or 2 or more lines that are
	// all YAML-shaped with some indentation or "- " items; block-scalar
	// bodies are skipped.
	KindYAML Kind = "yaml"
	// KindTSV: 3 or more non-empty lines with the same non-zero number of
	// tabs on every line.
	KindTSV Kind = "tsv"
	// KindCSV: the same with commas.
	KindCSV Kind = "csv"
	// KindJSONLine: some single line, trimmed, is a bracketed JSON object or
	// array that parses, e.g. curl output next to a prose line.
	KindJSONLine Kind = "json-line"
	// KindPEM: some line, trimmed, is PEM armour: it starts "-----BEGIN "
	// and ends "-----".
	KindPEM Kind = "pem"
	// KindBase64: some line, trimmed, of 64 bytes or more made only of the
	// base64 or base64url alphabet with at most two "=" of padding and no
	// spaces, holding a letter and a digit and few symbols.
	KindBase64 Kind = "base64"
	// KindMinified: some line, trimmed, of 1000 bytes or more that is under
	// 8% spaces and tabs and not one repeated byte: minified bundles, long
	// single-line tokens and data.
	KindMinified Kind = "minified"
)

// Thresholds of the guard. Sizes are bytes, counts are lines.
const (
	// sniffMaxJSONParseBytes is the size above which a bracketed text or
	// line is taken as JSON without parsing it, to stay inside the latency
	// budget (1,000,000 bytes).
	sniffMaxJSONParseBytes = 1_000_000
	// sniffNDJSONSampleLines is how many NDJSON lines are parsed before
	// trusting the rest (50).
	sniffNDJSONSampleLines = 50
	// sniffMinDelimitedLines is the fewest non-empty lines for TSV or CSV
	// (3; one line proves nothing).
	sniffMinDelimitedLines = 3
	// sniffMinBase64LineBytes is the shortest line taken as a base64 payload
	// (omni's own threshold: 64 bytes, the
	// width of a PEM body line and more than a hex commit id).
	sniffMinBase64LineBytes = 64
	// sniffMinMinifiedLineBytes is the shortest line taken as a minified
	// bundle or long token (omni's own threshold: 1000).
	sniffMinMinifiedLineBytes = 1000
	// sniffMinifiedMaxSpacePerMille bounds the whitespace (spaces and tabs)
	// of a minified line, per mille of its bytes: under 8%. Prose runs at
	// 15-20%; the minified bundle of the pem-and-minified-repeat scenario,
	// with "return n" in every function, at 5.1%, which is why the bound is
	// not 2%.
	sniffMinifiedMaxSpacePerMille = 80
	// sniffMinifiedMaxBytePerMille is the largest share, per mille, that any
	// one byte value may take of a minified line: a quarter. It keeps rulers
	// ("=====… 3 passed …=====" on a wide terminal) and test-runner progress
	// lines ("....s..x....") out; code and base64 stay far below it.
	sniffMinifiedMaxBytePerMille = 250
)

// Sniff returns the structured or opaque class of a tool output, or KindNone.
// It trims surrounding whitespace and checks, in this order, returning the
// first hit (rules 1-6 structured, rules 7-9 opaque):
//
//  1. KindJSON: the text starts "{" and ends "}" (or "[" … "]") and is valid
//     JSON (encoding/json.Valid); above 1,000,000 bytes the brackets alone
//     decide.
//  2. KindNDJSON: 2 or more non-empty lines, all starting "{" or "[" after
//     trimming, and the first 50 of them valid JSON.
//  3. KindJSONShaped: bracketed as in 1 and containing a quoted string
//     followed by optional whitespace and ":" (`"[^"]*"\s*:`).
//  4. KindYAML: the first non-blank line is "---", or "--- " followed by
//     something only YAML puts there ("#", "!", "&", "*", "|", ">", "[",
//     "{" or a quote); otherwise 2 or more non-blank lines, every one
//     YAML-shaped, and some structure (a line starting with a space, or a
//     "- " item). A YAML-shaped line is a "#" comment, "---", "...", "-",
//     "- …", or `^\s*(quoted|[A-Za-z_][A-Za-z0-9_.\-/]*)\s*:(\s.*|)$`. After
//     a block-scalar line (`key: |`, `key: >-`, `- key: |2`, optionally
//     with a trailing comment), the lines indented deeper than the key are
//     skipped, not judged, until a line at the key's indent or less. When
//     a plain scalar follows the first line's "---" marker ("--- FAIL:
//     TestX" from go test, "--- a/file" from diff -u), that line counts as
//     YAML-shaped and the other lines decide.
//  5. KindTSV, then KindCSV: 3 or more non-empty lines, each trimmed, with
//     the same non-zero count of tabs (commas) on every line. As in the
//     reference, three lines of prose with exactly one comma each are CSV,
//     and "nl -ba" or "cat -n" listings without blank lines (one tab after
//     each line number) are TSV: false positives on the safe side.
//  6. KindJSONLine: some trimmed line is bracketed and valid JSON (a line
//     above 1,000,000 bytes: the brackets alone decide). "[]" and "[1, 2]"
//     count.
//  7. KindPEM: some trimmed line starts "-----BEGIN " and ends "-----".
//  8. KindBase64: some trimmed line of 64 bytes or more is made only of A-Z
//     a-z 0-9 + / - _ with at most two "=" at its end, and, so that rulers
//     ("-----…", "---+---") and long paths or identifiers are not payloads,
//     holds a letter and a digit and at most one symbol (+ / - _) per 8
//     bytes. Hex digests of 64 bytes or more count.
//  9. KindMinified: some trimmed line of 1000 bytes or more is under 8%
//     spaces and tabs, and no single byte value makes up more than a
//     quarter of it.
//
// Lines end at "\n"; a "\r" before it is whitespace, so CRLF text sniffs
// like LF text. A kubectl or docker table is not structured here (it is an
// enumeration, handled elsewhere). Sniff is pure, never panics and is safe
// for concurrent use; it allocates nothing itself (encoding/json.Valid
// draws its scanner from a pool). On a 16 KB log it costs a few µs.
func Sniff(text string) Kind {
	t := strings.TrimSpace(text)
	if t == "" {
		return KindNone
	}
	bracketed := sniffBracketed(t)
	if bracketed && sniffJSONValue(t) {
		return KindJSON
	}
	if sniffNDJSON(t) {
		return KindNDJSON
	}
	if bracketed && sniffHasJSONKey(t) {
		return KindJSONShaped
	}
	if sniffYAML(t) {
		return KindYAML
	}
	if k := sniffDelimited(t); k != KindNone {
		return k
	}
	return sniffOpaque(t)
}

// sniffNextLine splits s at its first "\n": the line without the "\n", and
// the rest after it ("" once s is used up).
func sniffNextLine(s string) (line, rest string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// sniffBracketed reports whether s starts "{" and ends "}", or starts "["
// and ends "]".
func sniffBracketed(s string) bool {
	if len(s) < 2 {
		return false
	}
	f, l := s[0], s[len(s)-1]
	return (f == '{' && l == '}') || (f == '[' && l == ']')
}

// sniffJSONValue reports whether a bracketed s is JSON: above
// sniffMaxJSONParseBytes by its brackets alone, otherwise by parsing it.
func sniffJSONValue(s string) bool {
	if len(s) > sniffMaxJSONParseBytes {
		return true
	}
	// json.Valid only reads its argument, so a read-only view of the string's
	// bytes is enough; it spares a copy of up to sniffMaxJSONParseBytes.
	return json.Valid(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// sniffNDJSON implements rule 2: at least 2 non-empty trimmed lines, all
// starting "{" or "[", the first sniffNDJSONSampleLines of them valid JSON.
func sniffNDJSON(t string) bool {
	// First the cheap test on every line, so that a log fails at its first
	// line and parsing starts only when the shape holds throughout.
	n := 0
	for rest := t; rest != ""; {
		var line string
		line, rest = sniffNextLine(rest)
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			return false
		}
		n++
	}
	if n < 2 {
		return false
	}
	parsed := 0
	for rest := t; rest != "" && parsed < sniffNDJSONSampleLines; {
		var line string
		line, rest = sniffNextLine(rest)
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) <= sniffMaxJSONParseBytes && !json.Valid(unsafe.Slice(unsafe.StringData(line), len(line))) {
			return false
		}
		parsed++
	}
	return true
}

// sniffHasJSONKey reports whether s holds `"[^"]*"\s*:`: some double quote
// that closes a quoted run (every quote after the first one does) followed
// by optional whitespace and a colon.
func sniffHasJSONKey(s string) bool {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return false
	}
	for {
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return false
		}
		i += 1 + j
		k := i + 1
		for k < len(s) && sniffIsRegexSpace(s[k]) {
			k++
		}
		if k < len(s) && s[k] == ':' {
			return true
		}
	}
}

// sniffIsRegexSpace is the ASCII part of the regex class \s.
func sniffIsRegexSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// sniffIsBlank is horizontal whitespace inside a line (a "\r" left by a CRLF
// ending counts too).
func sniffIsBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// sniffTrimRight drops trailing whitespace (including the "\r" of CRLF).
func sniffTrimRight(s string) string {
	for len(s) > 0 && sniffIsBlank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// sniffIndent is the number of leading blank bytes of s.
func sniffIndent(s string) int {
	i := 0
	for i < len(s) && sniffIsBlank(s[i]) {
		i++
	}
	return i
}

// sniffYAML implements rule 4 (see Sniff). t is trimmed and non-empty.
func sniffYAML(t string) bool {
	lines := 0
	structure := false
	block := -1 // indent of the key that opened a block scalar, -1 for none
	for rest := t; rest != ""; {
		var line string
		line, rest = sniffNextLine(rest)
		if strings.TrimSpace(line) == "" {
			continue // blank lines are neither judged nor counted
		}
		line = sniffTrimRight(line)
		indent := sniffIndent(line)
		lines++
		body := line[indent:]
		if lines == 1 && strings.HasPrefix(body, "---") {
			if body == "---" {
				return true
			}
			if body[3] == ' ' || body[3] == '\t' {
				if sniffYAMLDocStart(body[3:]) {
					return true
				}
				// "--- FAIL: TestX" (go test) or "--- a/file" (diff -u):
				// a document marker with a plain scalar is too weak a sign
				// alone, so the rest of the text decides.
				continue
			}
		}
		if line[0] == ' ' || strings.HasPrefix(body, "- ") {
			structure = true
		}
		if block >= 0 && indent > block {
			continue // inside a block scalar: not judged
		}
		block = -1
		if !sniffYAMLShaped(body) {
			return false
		}
		if col, ok := sniffBlockScalarKey(line, indent); ok {
			block = col
		}
	}
	return lines >= 2 && structure
}

// sniffYAMLDocStart reports whether the rest of a "--- …" first line starts
// with something only YAML puts there: a comment, tag, anchor, alias, block
// scalar indicator, flow collection or quoted scalar.
func sniffYAMLDocStart(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" {
		return true
	}
	switch rest[0] {
	case '#', '!', '&', '*', '|', '>', '[', '{', '"', '\'':
		return true
	}
	return false
}

// sniffYAMLShaped reports whether a line, without its indent and trailing
// whitespace, is YAML-shaped: a comment, a document marker, a "- " item or
// a "key:" pair (the cases below).
func sniffYAMLShaped(b string) bool {
	switch {
	case b[0] == '#', b == "---", b == "...", b == "-", strings.HasPrefix(b, "- "):
		return true
	}
	k := sniffYAMLKeyEnd(b)
	if k < 0 {
		return false
	}
	for k < len(b) && sniffIsBlank(b[k]) {
		k++
	}
	if k >= len(b) || b[k] != ':' {
		return false
	}
	k++
	return k == len(b) || sniffIsBlank(b[k])
}

// sniffYAMLKeyEnd returns the end of a key at the start of b: a "double" or
// 'single' quoted run, or [A-Za-z_][A-Za-z0-9_.\-/]*; -1 if b starts with
// neither.
func sniffYAMLKeyEnd(b string) int {
	switch c := b[0]; {
	case c == '"' || c == '\'':
		j := strings.IndexByte(b[1:], c)
		if j < 0 {
			return -1
		}
		return j + 2
	case c == '_' || sniffIsLetter(c):
		k := 1
		for k < len(b) {
			c := b[k]
			if c == '_' || c == '.' || c == '-' || c == '/' || sniffIsLetter(c) || sniffIsDigit(c) {
				k++
				continue
			}
			break
		}
		return k
	}
	return -1
}

func sniffIsLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func sniffIsDigit(c byte) bool  { return c >= '0' && c <= '9' }

// sniffBlockScalarKey reports whether line (right-trimmed, indent bytes of
// leading whitespace) opens a block scalar, as
// `^\s*\S+\s*:\s*[|>][0-9]*[-+]?\s*$` does, and returns the column that
// the scalar's body must be indented deeper than: the key's. Beyond the
// reference regex it also accepts the key of a sequence item ("- run: >-",
// column of "run"), a block scalar that is itself a sequence item ("- |",
// column of the dash), a quoted key with spaces, the indicators in either
// order ("|-2" as well as "|2-") and a trailing " # comment".
func sniffBlockScalarKey(line string, indent int) (int, bool) {
	col, dash := indent, -1
	for strings.HasPrefix(line[col:], "- ") {
		dash = col
		col += 2
		for col < len(line) && sniffIsBlank(line[col]) {
			col++
		}
	}
	s := line[col:]
	if s == "" {
		return 0, false
	}
	if dash >= 0 && (s[0] == '|' || s[0] == '>') {
		return dash, sniffBlockIndicator(s)
	}
	// The key ends where a quoted key closes, or else at the first blank
	// (or on the colon that ends the run, as in "key:").
	k := -1
	if s[0] == '"' || s[0] == '\'' {
		k = sniffYAMLKeyEnd(s)
	}
	if k < 0 {
		k = 0
		for k < len(s) && !sniffIsBlank(s[k]) {
			k++
		}
		if k >= 2 && s[k-1] == ':' {
			k--
		}
	}
	for k < len(s) && sniffIsBlank(s[k]) {
		k++
	}
	if k == 0 || k >= len(s) || s[k] != ':' {
		return 0, false
	}
	after := strings.TrimLeft(s[k+1:], " \t")
	return col, after != "" && sniffBlockIndicator(after)
}

// sniffBlockIndicator reports whether s is a block scalar header: "|" or
// ">", then an indentation digit run and a chomping "-" or "+" in either
// order, then nothing or blanks and a "#" comment.
func sniffBlockIndicator(s string) bool {
	if s == "" || (s[0] != '|' && s[0] != '>') {
		return false
	}
	i := 1
	digits, chomp := false, false
	for i < len(s) {
		c := s[i]
		if sniffIsDigit(c) && !digits {
			for i < len(s) && sniffIsDigit(s[i]) {
				i++
			}
			digits = true
			continue
		}
		if (c == '-' || c == '+') && !chomp {
			chomp = true
			i++
			continue
		}
		break
	}
	if i == len(s) {
		return true
	}
	if !sniffIsBlank(s[i]) {
		return false
	}
	for i < len(s) && sniffIsBlank(s[i]) {
		i++
	}
	return i == len(s) || s[i] == '#'
}

// sniffDelimited implements rule 5: TSV, then CSV.
func sniffDelimited(t string) Kind {
	n := 0
	tabs, commas := 0, 0
	tabOK, commaOK := false, false
	for rest := t; rest != ""; {
		var line string
		line, rest = sniffNextLine(rest)
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		tc, cc := -1, -1
		if n == 0 || tabOK {
			tc = strings.Count(line, "\t")
		}
		if n == 0 || commaOK {
			cc = strings.Count(line, ",")
		}
		if n == 0 {
			tabs, commas = tc, cc
			tabOK, commaOK = tc > 0, cc > 0
		} else {
			tabOK = tabOK && tc == tabs
			commaOK = commaOK && cc == commas
		}
		if !tabOK && !commaOK {
			return KindNone
		}
		n++
	}
	switch {
	case n < sniffMinDelimitedLines:
		return KindNone
	case tabOK:
		return KindTSV
	case commaOK:
		return KindCSV
	}
	return KindNone
}

// sniffOpaque implements rules 6 to 9 in one pass over the lines. A JSON
// line wins at once; otherwise the best (earliest listed) kind seen is kept
// and only better kinds are still looked for.
func sniffOpaque(t string) Kind {
	best := KindNone
	for rest := t; rest != ""; {
		var line string
		line, rest = sniffNextLine(rest)
		line = strings.TrimSpace(line)
		if len(line) < 2 {
			continue
		}
		if sniffBracketed(line) && sniffJSONValue(line) {
			return KindJSONLine
		}
		if best == KindPEM {
			continue
		}
		if sniffIsPEMArmour(line) {
			best = KindPEM
			continue
		}
		if best == KindBase64 {
			continue
		}
		if len(line) >= sniffMinBase64LineBytes && sniffIsBase64Line(line) {
			best = KindBase64
			continue
		}
		if best == KindMinified {
			continue
		}
		if len(line) >= sniffMinMinifiedLineBytes && sniffIsMinifiedLine(line) {
			best = KindMinified
		}
	}
	return best
}

// sniffIsPEMArmour reports whether a trimmed line is a PEM BEGIN line.
func sniffIsPEMArmour(line string) bool {
	return len(line) > len("-----BEGIN -----") &&
		strings.HasPrefix(line, "-----BEGIN ") && strings.HasSuffix(line, "-----")
}

// sniffIsBase64Line reports whether a trimmed line is a base64 payload (rule
// 8 of Sniff).
func sniffIsBase64Line(line string) bool {
	end := len(line)
	for pad := 0; pad < 2 && end > 0 && line[end-1] == '='; pad++ {
		end--
	}
	letter, digit := false, false
	symbols := 0
	for i := 0; i < end; i++ {
		c := line[i]
		switch {
		case sniffIsLetter(c):
			letter = true
		case sniffIsDigit(c):
			digit = true
		case c == '+' || c == '/' || c == '-' || c == '_':
			symbols++
		default:
			return false
		}
	}
	return letter && digit && symbols*8 <= end
}

// sniffIsMinifiedLine reports whether a trimmed line of at least
// sniffMinMinifiedLineBytes is almost free of whitespace (rule 9 of Sniff).
func sniffIsMinifiedLine(line string) bool {
	limit := len(line) * sniffMinifiedMaxSpacePerMille / 1000
	spaces := 0
	var counts [256]int
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ' ' || c == '\t' {
			spaces++
			if spaces >= limit {
				return false
			}
		}
		counts[c]++
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return top*1000 <= len(line)*sniffMinifiedMaxBytePerMille
}
