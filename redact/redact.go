// Package redact replaces credential values in text by [REDACTED] before
// anything omni receives is recorded, archived or printed (one
// redaction stage at the entry of every door).
//
// A secret is a value, never a name: keys, variable names, placeholders
// (changeme, xxx, ${TOKEN}, <password>) and documentation examples stay.
// Redaction keeps the line count and the structure of what it rewrites: a
// value inside quotes is replaced inside the quotes, so a JSON or YAML
// document still parses and a Read keeps its numbering.
//
// The rules are ours and compiled into tables once (no regular expressions):
// a vendor token table keyed by the token's first two bytes, credential-name
// rules for assignments in every common syntax (env, shell, YAML, JSON,
// TOML, ini, properties, XML, Go, Python, command-line flags, HTTP headers,
// URL query parameters, connection strings), URL userinfo, PEM private keys
// in any encoding, JWTs, .netrc and .pgpass lines. Each line is scanned a
// constant number of times, so the cost is linear in the input; a huge
// line, binary or invalid UTF-8 never makes it panic.
//
// The package imports the standard library only, so it can run in any
// door (the daemon, an in-process hook, exec, pipe, distill).
package redact

import (
	"slices"
	"strings"
)

// Marker is the text that replaces a credential value.
const Marker = "[REDACTED]"

// Counts maps a rule kind ("assignment", "url-userinfo", "jwt",
// "vendor:stripe", ...) to the number of values it replaced.
type Counts map[string]int

// Text returns s with every credential value replaced by Marker and the
// number of values replaced. Text without credentials is returned as is,
// without copying. Text is pure, safe for concurrent use, and never panics.
func Text(s string) (string, int) {
	return text(s, nil)
}

// TextCounts is Text that also adds, per rule kind, the values it replaced
// to c (c may be nil).
func TextCounts(s string, c Counts) (string, int) {
	return text(s, c)
}

// span is a byte range [s, e) of one line to replace by Marker.
type span struct {
	s, e int
	kind string
}

// lineState carries what a line's scan needs from the lines above it.
type lineState struct {
	inPEM      bool // inside a multi-line private key body
	pemCounted bool // the block's one count was taken
	// secretEnvName: the line above was `- name: <credential name>`, so a
	// `value:` line here is the credential (Kubernetes env).
	secretEnvName bool
	// secretCols are the columns a table's header named as credentials
	// (PASSWORD, api_key); cols is that header's cell count. Rows below
	// with as many cells have those cells masked, until a blank line or a
	// row of another shape.
	secretCols []int
	cols       int
	// nameCol and valueCol (1-based; 0: none) are a header's NAME/KEY and
	// VALUE columns: a row whose name is a credential name has its value
	// masked.
	nameCol, valueCol int
}

func text(s string, c Counts) (string, int) {
	var st lineState
	out, n := textState(s, &st, c)
	if n == 0 || out == s {
		return out, n
	}
	// A value masked on one line is masked wherever else it recurs in
	// the text (printed again bare, on stderr, in a later message).
	found := map[string]bool{}
	collectMasked(s, out, found)
	if again := propagated(found); len(again) > 0 {
		var m int
		out, m = maskAgain(out, again, c)
		n += m
	}
	return out, n
}

// minPropagated is the shortest masked value that is also masked where
// it recurs without the context that gave it away: 16 bytes, the length of
// a generated credential, and only one that mixes letters and digits
// (collectMasked), so a human password that is also a word ("admin1",
// or a project's name used as its password, as in one start command of
// the shared corpus) stays where it is not named as a password.
const minPropagated = 16

// collectMasked adds to found the values red (the redacted form of s)
// masked: the text of s under each Marker of red, found by matching the
// literal pieces between markers in order.
func collectMasked(s, red string, found map[string]bool) {
	pieces := strings.Split(red, Marker)
	if len(pieces) < 2 {
		return
	}
	at := 0
	if !strings.HasPrefix(s, pieces[0]) {
		return
	}
	at = len(pieces[0])
	for i := 1; i < len(pieces); i++ {
		p := pieces[i]
		var end int
		if i == len(pieces)-1 {
			if !strings.HasSuffix(s[at:], p) {
				return
			}
			end = len(s) - len(p)
		} else if p == "" {
			return // adjacent markers: the split between them is unknown
		} else {
			k := strings.Index(s[at:], p)
			if k < 0 {
				return
			}
			end = at + k
		}
		if v := s[at:end]; len(v) >= minPropagated && hasLetterAndDigit(v) && !strings.Contains(v, "\n") && v != Marker {
			found[v] = true
		}
		at = end + len(p)
	}
}

// propagated returns found's values, longest first (ties in byte order),
// so a value that holds another is masked whole.
func propagated(found map[string]bool) []string {
	out := make([]string, 0, len(found))
	for v := range found {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return out
}

// maskAgain replaces every occurrence of the values in s by Marker and
// counts them (kind "recurring").
func maskAgain(s string, values []string, c Counts) (string, int) {
	n := 0
	for _, v := range values {
		if k := strings.Count(s, v); k > 0 {
			s = strings.ReplaceAll(s, v, Marker)
			n += k
		}
	}
	if n > 0 && c != nil {
		c["recurring"] += n
	}
	return s, n
}

// textState is text starting from, and leaving, the line state st.
func textState(s string, st *lineState, c Counts) (string, int) {
	var b strings.Builder
	changed := false
	count := 0
	var spans []span
	pos := 0
	for pos < len(s) {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end = pos + end + 1
		}
		raw := s[pos:end]
		body := raw
		if strings.HasSuffix(body, "\n") {
			body = body[:len(body)-1]
		}
		if strings.HasSuffix(body, "\r") {
			body = body[:len(body)-1]
		}
		spans = spans[:0]
		spans = lineSpans(body, st, spans)
		if len(spans) > 0 {
			out, n := apply(body, spans, c)
			if out != body {
				if !changed {
					b.Grow(len(s))
					b.WriteString(s[:pos])
					changed = true
				}
				count += n
				b.WriteString(out)
				b.WriteString(raw[len(body):])
				pos = end
				continue
			}
		}
		if changed {
			b.WriteString(raw)
		}
		pos = end
	}
	if !changed {
		return s, 0
	}
	return b.String(), count
}

// apply replaces the spans of line by Marker (overlapping spans merge; a
// span that already reads Marker stays) and counts the values by kind. A
// span of kind "" changes the line without counting (the second and later
// body lines of a private key, counted once with their block).
func apply(line string, spans []span, c Counts) (string, int) {
	slices.SortFunc(spans, func(a, b span) int {
		if a.s != b.s {
			return a.s - b.s
		}
		return b.e - a.e
	})
	var b strings.Builder
	b.Grow(len(line))
	at, n := 0, 0
	for i := 0; i < len(spans); i++ {
		sp := spans[i]
		if sp.s < at {
			sp.s = at
		}
		e := sp.e
		for i+1 < len(spans) && spans[i+1].s < e {
			e = max(e, spans[i+1].e)
			i++
		}
		if sp.s >= e || line[sp.s:e] == Marker {
			continue
		}
		b.WriteString(line[at:sp.s])
		b.WriteString(Marker)
		at = e
		if sp.kind != "" {
			n++
			if c != nil {
				c[sp.kind]++
			}
		}
	}
	b.WriteString(line[at:])
	return b.String(), n
}

// lineSpans returns the spans of one line (without its ending).
func lineSpans(line string, st *lineState, out []span) []span {
	if st.inPEM {
		var done bool
		if out, done = pemBodyLine(line, st, out); !done {
			return out
		}
	}
	if len(line) == 0 {
		return out
	}
	f := scanLine(line)
	if f&fPEM != 0 {
		out = pemSpans(line, st, out)
		if st.inPEM {
			return out
		}
	}
	out = tokenSpans(line, f, out)
	out = assignmentSpans(line, f, st, out)
	return out
}
