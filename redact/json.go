package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON redacts every string value of a JSON document b: a value under a
// credential-named key ("password": "…", "private_key": "…") is replaced
// whole when it is a credential, and any other string's text is redacted
// as Text does (a tool output inside a hook payload, a command in
// tool_input). Keys, numbers and the document's bytes outside changed
// strings are kept; a changed string is re-encoded (its escapes may be
// spelled differently, its meaning is the same but for the secret).
//
// fields counts the values replaced under each top-level key of an object
// ("tool_response": 2, "tool_input": 1; "" for a document that is not an
// object). kinds, when not nil, receives counts per rule kind. b is not
// changed; out is b itself when nothing was replaced. Input that is not
// JSON is scanned the same way (strings are found by their quotes), so
// JSON never fails and never panics.
func JSON(b []byte, kinds Counts) (out []byte, fields Counts) {
	w := jsonWalker{src: b, kinds: kinds, collect: true}
	w.walk()
	if w.printedLate {
		// tool_input.command came after the output it explains: walk
		// again knowing it.
		w = jsonWalker{src: b, kinds: kinds, collect: true, printed: true}
		w.walk()
	}
	if w.out == nil {
		return b, w.fields
	}
	w.out = append(w.out, b[w.at:]...)
	if len(w.found) == 0 {
		return w.out, w.fields
	}
	// A value masked in one string is masked wherever else it appears
	// (a token named in the command and echoed bare in the output, a
	// password printed again on stderr): a second walk over the result.
	w2 := jsonWalker{src: w.out, kinds: kinds, again: propagated(w.found)}
	w2.walk()
	if w2.out == nil {
		return w.out, w.fields
	}
	w2.out = append(w2.out, w.out[w2.at:]...)
	for k, n := range w2.fields {
		w.fields[k] += n
	}
	return w2.out, w.fields
}

// Total sums the counts.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

type jsonFrame struct {
	obj       bool
	expectKey bool
	key       string
	// st carries line state from one string element of an array to the
	// next (a private key or a name/value pair split over Glob's
	// filenames, one line each).
	st lineState
}

type jsonWalker struct {
	src    []byte
	out    []byte // nil until the first change
	at     int    // src bytes before at are in out
	kinds  Counts
	fields Counts
	stack  []jsonFrame
	top    string
	// With collect, found gathers the values the first walk masked;
	// again, on the second walk, lists them to mask wherever they recur.
	collect bool
	found   map[string]bool
	again   []string
	// printed: tool_input.command prints a credential (PrintsSecret), so
	// the output's generated-looking words are masked too. outputSeen: a
	// string of the output was walked; printedLate: the command was found
	// after it.
	printed, outputSeen, printedLate bool
}

func (w *jsonWalker) walk() {
	b := w.src
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			w.stack = append(w.stack, jsonFrame{obj: true, expectKey: true})
		case '[':
			key := ""
			if n := len(w.stack); n > 0 {
				key = w.stack[n-1].key
			}
			w.stack = append(w.stack, jsonFrame{key: key})
		case '}', ']':
			if n := len(w.stack); n > 0 {
				w.stack = w.stack[:n-1]
			}
		case ',':
			if n := len(w.stack); n > 0 && w.stack[n-1].obj {
				w.stack[n-1].expectKey = true
			}
		case ':':
			if n := len(w.stack); n > 0 && w.stack[n-1].obj {
				w.stack[n-1].expectKey = false
			}
		case '"':
			// The closing quote is the first one not escaped (preceded by
			// an even run of backslashes).
			e := i + 1
			for {
				k := bytes.IndexByte(b[e:], '"')
				if k < 0 {
					e = len(b)
					break
				}
				e += k
				n := 0
				for n < e-i-1 && b[e-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
				e++
			}
			esc := bytes.IndexByte(b[i+1:e], '\\') >= 0
			w.str(i, e, esc)
			i = e
		}
	}
}

// str handles the string b[s:e+1] (quotes included; e may be len(b) for an
// unterminated string).
func (w *jsonWalker) str(s, e int, esc bool) {
	n := len(w.stack)
	if n > 0 && w.stack[n-1].obj && w.stack[n-1].expectKey {
		key := w.decode(s, e, esc)
		w.stack[n-1].key = key
		if n == 1 {
			w.top = key
		}
		return
	}
	if e >= len(w.src) {
		return // unterminated: not a value we can rewrite in place
	}
	v := w.decode(s, e, esc)
	key := ""
	if n > 0 {
		key = w.stack[n-1].key
	}
	if n == 2 && w.top == "tool_input" && key == "command" && w.again == nil && !w.printed && PrintsSecret(v) {
		w.printed = true
		w.printedLate = w.outputSeen
	}
	output := w.top == "tool_response" || w.top == "error"
	if output {
		w.outputSeen = true
	}
	var red string
	cnt := 0
	if m, weak := matchName(key); m && key != "" && credentialValue(v, weak, ctxAssign, true) {
		red, cnt = Marker, 1
		if w.kinds != nil {
			w.kinds["json-field"]++
		}
	} else if w.again != nil {
		// Only the tool's result, where the model reads text, and never a
		// path or name that identifies what was read (a masked value that
		// recurs in a file path would change which source the ledger
		// sees).
		if w.top != "tool_response" || pathKey(key) {
			return
		}
		red, cnt = maskAgain(v, w.again, w.kinds)
	} else if w.printed && output && !pathKey(key) {
		red, cnt = printedText(v, w.kinds)
	} else if n > 0 && !w.stack[n-1].obj {
		red, cnt = textState(v, &w.stack[n-1].st, w.kinds)
	} else {
		red, cnt = text(v, w.kinds)
	}
	if red == v {
		return
	}
	if w.collect {
		if w.found == nil {
			w.found = map[string]bool{}
		}
		collectMasked(v, red, w.found)
	}
	if w.fields == nil {
		w.fields = Counts{}
	}
	w.fields[w.top] += cnt
	enc, err := encodeString(red)
	if err != nil {
		return
	}
	if w.out == nil {
		w.out = make([]byte, 0, len(w.src))
	}
	w.out = append(w.out, w.src[w.at:s]...)
	w.out = append(w.out, enc...)
	w.at = e + 1
}

// decode returns the text of the string b[s:e+1].
func (w *jsonWalker) decode(s, e int, esc bool) string {
	if e >= len(w.src) {
		return string(w.src[s+1:]) // unterminated
	}
	if !esc {
		return string(w.src[s+1 : e])
	}
	if v, ok := unquote(w.src[s+1 : e]); ok {
		return v
	}
	var v string
	if json.Unmarshal(w.src[s:e+1], &v) != nil {
		return string(w.src[s+1 : e])
	}
	return v
}

// DecodeString decodes the inside of a JSON string (the bytes between its
// quotes) as encoding/json does, for well-formed input; ok is false on
// anything else (a bad escape, a lone surrogate, invalid UTF-8, a control
// byte), which the caller hands to encoding/json. It is the decoder the
// redaction's walk reads every string with; the hook reads a tool's
// output with it too, in one pass where encoding/json takes two.
func DecodeString(b []byte) (s string, ok bool) { return unquote(b) }

// unquote decodes the inside of a JSON string with escapes, as
// encoding/json does, for well-formed input: ok is false on anything else
// (a bad escape, a lone surrogate, invalid UTF-8), which the caller hands
// to encoding/json.
func unquote(b []byte) (string, bool) {
	// Valid UTF-8 once for the whole input: an escape is ASCII, so a
	// split between runs never cuts a sequence that was whole.
	if !utf8.Valid(b) {
		return "", false
	}
	// A Builder grown once writes the text without zeroing it first and
	// hands it out without a copy.
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); {
		// A run without escapes is copied whole.
		if k := bytes.IndexByte(b[i:], '\\'); k != 0 {
			if k < 0 {
				k = len(b) - i
			}
			run := b[i : i+k]
			for _, c := range run {
				if c < 0x20 || c == '"' {
					return "", false
				}
			}
			out.Write(run)
			i += k
			continue
		}
		// b[i] is a backslash.
		if i+1 >= len(b) {
			return "", false
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out.WriteByte(b[i+1])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
					r2, ok = hex4(b, i+2)
				}
				dec := utf16.DecodeRune(r, r2)
				if !ok || dec == utf8.RuneError {
					return "", false
				}
				r = dec
				i += 6
			}
			out.WriteRune(r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return out.String(), true
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// encodeString returns the JSON encoding of v without HTML escaping.
func encodeString(v string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// pathKey reports a key whose string names a file or place rather than
// holding text the tool produced (Read's filePath, Glob's filenames).
func pathKey(k string) bool {
	switch k {
	case "filePath", "file_path", "path", "filenames", "url", "cwd", "persistedOutputPath":
		return true
	}
	return false
}
