package hooks

import (
	"bytes"
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
