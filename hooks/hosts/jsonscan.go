package hosts

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"

	"github.com/omnictx/omni/redact"
)

// The hook path reads a payload of up to MaxInput bytes several times
// (the host's shape, the payload, the tool's result, its stdout), and
// encoding/json validates the whole input before each decode: a 16 KB
// output was scanned some eight times per call (profiled with
// BenchmarkHookDaemonSide). The scanner below finds the members of an
// object by skipping its strings with a byte search, so a decision that
// needs only the object's keys, or its values as raw bytes, costs one fast
// pass. It is exact on valid JSON; on anything else its answer means
// nothing, so every caller uses it only where encoding/json would have
// led to the same result for such an input, or falls back to
// encoding/json.

// jsonMembers calls fn with the key (the bytes between its quotes, escapes
// as written) and the value (its bytes without the blanks around it) of
// each member of the JSON object b, in order, until fn returns false. It
// reports false when b does not scan as one object (blanks around it
// aside); true when fn stopped it early.
func jsonMembers(b []byte, fn func(key, val []byte) bool) bool {
	i := jsonBlanks(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonBlanks(b, i+1)
	if i < len(b) && b[i] == '}' {
		return jsonBlanks(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ke := jsonStringEnd(b, i)
		if ke < 0 {
			return false
		}
		key := b[i+1 : ke]
		if i = jsonBlanks(b, ke+1); i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonBlanks(b, i+1)
		ve := jsonValueEnd(b, i)
		if ve < 0 {
			return false
		}
		if !fn(key, b[i:ve]) {
			return true
		}
		if i = jsonBlanks(b, ve); i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return jsonBlanks(b, i+1) == len(b)
		case ',':
			i = jsonBlanks(b, i+1)
		default:
			return false
		}
	}
}

// jsonObject decodes the JSON object b as json.Unmarshal does into a
// map[string]json.RawMessage (keys unescaped, the last of a repeated key
// wins), its values aliasing b. ok is false when b does not scan as an
// object: the caller then uses encoding/json. b must be valid JSON (a
// json.RawMessage encoding/json produced).
func jsonObject(b []byte) (m map[string]json.RawMessage, ok bool) {
	m = map[string]json.RawMessage{}
	bad := false
	ok = jsonMembers(b, func(key, val []byte) bool {
		k, kok := jsonKey(key)
		if !kok {
			bad = true
			return false
		}
		m[k] = json.RawMessage(val)
		return true
	})
	if !ok || bad {
		return nil, false
	}
	return m, true
}

// decodeObject decodes the valid JSON value raw (a json.RawMessage
// encoding/json produced) as json.Unmarshal does into a
// map[string]json.RawMessage: in one pass when it is an object.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if m, ok := jsonObject(raw); ok {
		return m, nil
	}
	var m map[string]json.RawMessage
	err := json.Unmarshal(raw, &m)
	return m, err
}

// jsonKey decodes a key's bytes (between its quotes) as encoding/json
// does; ok is false when it is not a JSON string's content.
func jsonKey(key []byte) (string, bool) {
	if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
		return string(key), true
	}
	q := make([]byte, 0, len(key)+2)
	q = append(append(append(q, '"'), key...), '"')
	var s string
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

// mayHaveKey reports whether some top-level key of the JSON object b may
// be one encoding/json would read into a field named name (lowercase
// ASCII): it matches keys by case folding, Unicode's special cases
// included, and after unescaping, so a key with an escape or a byte over
// ASCII may match and counts. It is true too when b does not scan as an
// object (encoding/json decides then).
func mayHaveKey(b []byte, name string) bool {
	found := false
	ok := jsonMembers(b, func(key, _ []byte) bool {
		found = bytes.IndexByte(key, '\\') >= 0 || !isASCII(key) || bytes.EqualFold(key, []byte(name))
		return !found
	})
	return found || !ok
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsQuoted is bytes.Contains(b, `"`+w+`"`) for a w that holds no
// quote. In a payload whose output is full of escaped quotes, bytes.Index
// stops at every quote to compare; it searches for w and its closing quote
// instead (w's first byte is rarer) and checks the quote before each
// match: two to three times faster on BenchmarkHookDaemonSide's 16 KB
// payload (measured beside bytes.Contains).
func containsQuoted(b []byte, w string) bool {
	pat := make([]byte, 0, len(w)+1)
	pat = append(append(pat, w...), '"')
	for i := 0; ; {
		k := bytes.Index(b[i:], pat)
		if k < 0 {
			return false
		}
		if i+k > 0 && b[i+k-1] == '"' {
			return true
		}
		i += k + 1
	}
}

// jsonBlanks returns the index of the first byte at or after i that is not
// JSON whitespace.
func jsonBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// jsonStringEnd returns the index of the quote that closes the string
// opening at b[i] (the first one after an even run of backslashes), or -1.
func jsonStringEnd(b []byte, i int) int {
	e := i + 1
	for {
		k := bytes.IndexByte(b[e:], '"')
		if k < 0 {
			return -1
		}
		e += k
		n := 0
		for e-1-n > i && b[e-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return e
		}
		e++
	}
}

// jsonValueEnd returns the index just past the value starting at b[i], or
// -1.
func jsonValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		if e := jsonStringEnd(b, i); e >= 0 {
			return e + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := jsonStringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			break
		}
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// jsonText decodes the JSON value raw into a string as json.Unmarshal
// does (a string's text; "" and no error for null; an error for any
// other value), in one pass when raw is a well-formed string.
func jsonText(raw []byte) (string, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if s, ok := redact.DecodeString(raw[1 : n-1]); ok {
			return s, nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// payloadCutMin is the size from which a top-level value is validated
// and kept aside by DecodePayload instead of decoded by encoding/json;
// smaller ones cost less to decode than to cut.
const payloadCutMin = 512

// payloadCuts are the JSON names of Payload's json.RawMessage fields
// that can be large: DecodePayload validates their values itself (in one
// fast pass) and hands encoding/json the rest of the payload.
var payloadCuts = [...]string{"tool_input", "tool_response", "error"}

// DecodePayload is json.Unmarshal(b, p), the same result and the same
// errors, faster on a large payload: a tool_input, tool_response or error
// value of payloadCutMin bytes or more is validated by jsonValid (some ten
// times faster than encoding/json's scanner) and replaced by null in the
// copy encoding/json decodes, and its field then holds the value's bytes
// (aliasing b). Where that could read differently (a key with an escape
// or a byte over ASCII, which encoding/json may fold into a field name; a
// name given twice in any case; a value jsonValid cannot decide; anything
// encoding/json refuses) it decodes b whole.
func DecodePayload(b []byte, p *Payload) error {
	if len(b) >= payloadCutMin {
		if q, ok := decodeCut(b); ok {
			*p = q
			return nil
		}
	}
	return json.Unmarshal(b, p)
}

// decodeCut is DecodePayload's fast path; ok is false where it does not
// apply.
func decodeCut(b []byte) (p Payload, ok bool) {
	type cut struct{ s, e, field int }
	var cuts []cut
	var seen [len(payloadCuts)]int
	plain := true
	if !jsonMembers(b, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || !isASCII(key) {
			plain = false
			return false
		}
		for f, name := range payloadCuts {
			if !bytes.EqualFold(key, []byte(name)) {
				continue
			}
			if seen[f]++; len(val) >= payloadCutMin {
				s := cap(b) - cap(val) // val is b[s:…], a slice of b
				cuts = append(cuts, cut{s, s + len(val), f})
			}
		}
		return true
	}) || !plain || len(cuts) == 0 {
		return p, false
	}
	n := len(b)
	for _, c := range cuts {
		n -= c.e - c.s - len("null")
	}
	r := make([]byte, 0, n)
	at := 0
	for _, c := range cuts {
		if seen[c.field] != 1 {
			return p, false
		}
		if valid, known := jsonValid(b[c.s:c.e]); !valid || !known {
			return p, false
		}
		r = append(append(r, b[at:c.s]...), "null"...)
		at = c.e
	}
	r = append(r, b[at:]...)
	if json.Unmarshal(r, &p) != nil {
		return Payload{}, false
	}
	for _, c := range cuts {
		v := json.RawMessage(b[c.s:c.e:c.e])
		switch payloadCuts[c.field] {
		case "tool_input":
			p.ToolInput = v
		case "tool_response":
			p.ToolResponse = v
		case "error":
			p.Error = v
		}
	}
	return p, true
}

// jsonMaxDepth bounds the nesting jsonValid follows; deeper values are
// left to encoding/json (whose own bound is 10,000 levels).
const jsonMaxDepth = 1000

// jsonValid reports whether b is one JSON value (blanks around it
// allowed), by the grammar encoding/json checks (json.Valid): a string
// holds no byte under 0x20 and only the escapes \" \\ \/ \b \f \n \r \t
// and \u with four hex digits, any other byte as it is. known is false
// when b nests deeper than jsonMaxDepth: json.Valid decides then.
func jsonValid(b []byte) (valid, known bool) {
	v := jsonValidator{b: b}
	ok := v.value(0)
	if v.deep {
		return false, false
	}
	return ok && jsonBlanks(b, v.i) == len(b), true
}

type jsonValidator struct {
	b    []byte
	i    int
	deep bool
}

func (v *jsonValidator) value(depth int) bool {
	if depth > jsonMaxDepth {
		v.deep = true
		return false
	}
	b := v.b
	v.i = jsonBlanks(b, v.i)
	if v.i >= len(b) {
		return false
	}
	switch c := b[v.i]; {
	case c == '{':
		v.i = jsonBlanks(b, v.i+1)
		if v.i < len(b) && b[v.i] == '}' {
			v.i++
			return true
		}
		for {
			if v.i >= len(b) || b[v.i] != '"' || !v.str() {
				return false
			}
			if v.i = jsonBlanks(b, v.i); v.i >= len(b) || b[v.i] != ':' {
				return false
			}
			v.i++
			if !v.value(depth + 1) {
				return false
			}
			if v.i = jsonBlanks(b, v.i); v.i >= len(b) {
				return false
			}
			switch b[v.i] {
			case ',':
				v.i = jsonBlanks(b, v.i+1)
			case '}':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		v.i = jsonBlanks(b, v.i+1)
		if v.i < len(b) && b[v.i] == ']' {
			v.i++
			return true
		}
		for {
			if !v.value(depth + 1) {
				return false
			}
			if v.i = jsonBlanks(b, v.i); v.i >= len(b) {
				return false
			}
			switch b[v.i] {
			case ',':
				v.i++
			case ']':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return v.str()
	case c == '-' || c >= '0' && c <= '9':
		return v.num()
	case c == 't':
		return v.lit("true")
	case c == 'f':
		return v.lit("false")
	case c == 'n':
		return v.lit("null")
	}
	return false
}

// str reads the string at v.i (its opening quote).
func (v *jsonValidator) str() bool {
	b := v.b
	for i := v.i + 1; i < len(b); {
		// Eight bytes at a time while none is a quote, a backslash or
		// under 0x20 (most of an output is such bytes).
		for i+8 <= len(b) && !strSpecial8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return false
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
	return false
}

// strSpecial8 reports whether one of the eight bytes of x is '"', '\\' or
// under 0x20 (the bytes str stops at), by the bit tricks for a zero byte
// and a byte under n: (x - 0x01…01·n) &^ x & 0x80…80 is not zero exactly
// when some byte of x is under n (n ≤ 0x80).
func strSpecial8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	under := func(x uint64, n uint64) uint64 { return (x - ones*n) &^ x & highs }
	return under(x, 0x20)|under(x^(ones*'"'), 1)|under(x^(ones*'\\'), 1) != 0
}

// num reads a number at v.i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *jsonValidator) num() bool {
	b, i := v.b, v.i
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	v.i = i
	return true
}

// lit reads the literal w at v.i.
func (v *jsonValidator) lit(w string) bool {
	if !bytes.HasPrefix(v.b[v.i:], []byte(w)) {
		return false
	}
	v.i += len(w)
	return true
}
