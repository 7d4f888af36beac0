package hostsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// A JSON (with comments) editor that keeps formatting.

// jnode is one parsed JSON value with its byte span in the source.
type jnode struct {
	kind       byte // '{' object, '[' array, '"' string, '0' other scalar
	start, end int
	members    []jmember
	elems      []*jnode
}

// jmember is one key of an object.
type jmember struct {
	key              string
	keyStart, keyEnd int
	val              *jnode
}

func (n *jnode) member(key string) *jmember {
	if i := n.index(key); i >= 0 {
		return &n.members[i]
	}
	return nil
}

func (n *jnode) index(key string) int {
	if n == nil {
		return -1
	}
	for i := range n.members {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

func (n *jnode) str(src []byte) string {
	var s string
	_ = json.Unmarshal(src[n.start:n.end], &s)
	return s
}

// DecodeJSONC decodes a JSON document that may hold // and /* */ comments
// (a host's settings file) into plain Go values, as encoding/json decodes
// into an any: map[string]any, []any, float64, string, bool or nil. The
// error names the line where the document stops being valid, or says it
// holds no value.
func DecodeJSONC(src []byte) (any, error) {
	n, err := parseJSONC(src)
	if err != nil {
		return nil, err
	}
	return n.value(src), nil
}

// value turns a parsed node into plain Go values.
func (n *jnode) value(src []byte) any {
	switch n.kind {
	case '{':
		m := map[string]any{}
		for _, x := range n.members {
			m[x.key] = x.val.value(src)
		}
		return m
	case '[':
		a := []any{}
		for _, e := range n.elems {
			a = append(a, e.value(src))
		}
		return a
	}
	var v any
	_ = json.Unmarshal(src[n.start:n.end], &v)
	return v
}

// errEmptyJSON: the source holds no JSON value.
var errEmptyJSON = errors.New("no JSON value")

type jparser struct {
	src []byte
	pos int
}

// parseJSONC parses one JSON value; // and /* */ comments count as blanks.
func parseJSONC(src []byte) (*jnode, error) {
	p := &jparser{src: src}
	if err := p.blank(); err != nil {
		return nil, err
	}
	if p.pos >= len(src) {
		return nil, errEmptyJSON
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.blank(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errf("text after the JSON value")
	}
	return n, nil
}

func (p *jparser) errf(format string, a ...any) error {
	line := 1 + bytes.Count(p.src[:min(p.pos, len(p.src))], []byte("\n"))
	return fmt.Errorf("not valid JSON at line %d: %s", line, fmt.Sprintf(format, a...))
}

func (p *jparser) blank() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			i := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errf("unterminated comment")
			}
			p.pos += i + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value(depth int) (*jnode, error) {
	if depth > 256 {
		return nil, p.errf("nested too deep")
	}
	if p.pos >= len(p.src) {
		return nil, p.errf("unexpected end")
	}
	n := &jnode{start: p.pos}
	switch p.src[p.pos] {
	case '{':
		n.kind = '{'
		p.pos++
		if err := p.blank(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				return nil, p.errf("expected a key")
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return nil, p.errf("expected ':'")
			}
			p.pos++
			if err := p.blank(); err != nil {
				return nil, err
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jmember{key: k.str(p.src), keyStart: k.start, keyEnd: k.end, val: v})
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) {
				return nil, p.errf("unexpected end")
			}
			switch p.src[p.pos] {
			case ',':
				p.pos++
			case '}':
				p.pos++
				n.end = p.pos
				return n, nil
			default:
				return nil, p.errf("expected ',' or '}'")
			}
		}
	case '[':
		n.kind = '['
		p.pos++
		if err := p.blank(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			if err := p.blank(); err != nil {
				return nil, err
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) {
				return nil, p.errf("unexpected end")
			}
			switch p.src[p.pos] {
			case ',':
				p.pos++
			case ']':
				p.pos++
				n.end = p.pos
				return n, nil
			default:
				return nil, p.errf("expected ',' or ']'")
			}
		}
	case '"':
		n.kind = '"'
		i := p.pos + 1
		for i < len(p.src) && p.src[i] != '"' {
			if p.src[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(p.src) {
			return nil, p.errf("unterminated string")
		}
		p.pos = i + 1
	default:
		n.kind = '0'
		for p.pos < len(p.src) && !strings.ContainsRune(",]}/ \t\r\n", rune(p.src[p.pos])) {
			p.pos++
		}
	}
	n.end = p.pos
	if !json.Valid(p.src[n.start:n.end]) {
		p.pos = n.start
		return nil, p.errf("bad value %.20q", p.src[n.start:n.end])
	}
	return n, nil
}

// kv and omap render objects with their keys in order.
type kv struct {
	k string
	v any
}

type omap []kv

// MarshalJSON renders the object with its keys in order.
func (m omap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := encodeJSON(e.k, "", "")
		if err != nil {
			return nil, err
		}
		v, err := encodeJSON(e.v, "", "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSON renders v without HTML escaping, indented when unit != "".
func encodeJSON(v any, prefix, unit string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// renderNew renders a new file: two-space indent, final newline.
func renderNew(v any) ([]byte, error) {
	b, err := encodeJSON(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// equalJSON reports whether raw holds the same JSON value as v.
func equalJSON(raw []byte, v any) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil {
		return false
	}
	enc, err := encodeJSON(v, "", "")
	if err != nil || json.Unmarshal(enc, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func splice(src []byte, a, b int, text string) []byte {
	out := make([]byte, 0, len(src)-(b-a)+len(text))
	out = append(out, src[:a]...)
	out = append(out, text...)
	return append(out, src[b:]...)
}

// lineIndent returns the blanks that start the line holding pos.
func lineIndent(src []byte, pos int) string {
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	e := ls
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[ls:e])
}

// indentUnit guesses one level of indentation: the blanks before the first
// key of the top-level object when it sits on its own line, else two spaces.
func indentUnit(src []byte) string {
	root, err := parseJSONC(src)
	if err == nil && root.kind == '{' && len(root.members) > 0 {
		k := root.members[0].keyStart
		if bytes.IndexByte(src[root.start:k], '\n') >= 0 {
			if ind := lineIndent(src, k); ind != "" {
				return ind
			}
		}
	}
	return "  "
}

// items returns the spans of an object's members or an array's elements.
func (n *jnode) items() [][2]int {
	var s [][2]int
	for _, m := range n.members {
		s = append(s, [2]int{m.keyStart, m.val.end})
	}
	for _, e := range n.elems {
		s = append(s, [2]int{e.start, e.end})
	}
	return s
}

// removeItem removes item i of an object or array with the comma and
// blanks that separate it from its neighbour.
func removeItem(src []byte, n *jnode, i int) []byte {
	it := n.items()
	switch {
	case len(it) == 1:
		return splice(src, n.start+1, n.end-1, "")
	case i < len(it)-1:
		return splice(src, it[i][0], it[i+1][0], "")
	default:
		return splice(src, it[i-1][1], it[i][1], "")
	}
}

// insertMember adds key: v at the end of object n, in the style of its
// neighbours (or of the file, for an empty object).
func insertMember(src []byte, n *jnode, key string, v any) []byte {
	k, _ := encodeJSON(key, "", "")
	return insertItem(src, n, string(k), v)
}

// appendElem adds v at the end of array n.
func appendElem(src []byte, n *jnode, v any) []byte {
	return insertItem(src, n, "", v)
}

func insertItem(src []byte, n *jnode, key string, v any) []byte {
	unit := indentUnit(src)
	colon := ": "
	if len(n.members) > 0 {
		m := n.members[0]
		if c := src[m.keyEnd:m.val.start]; !bytes.ContainsAny(c, "\n/") {
			colon = string(c)
		}
	}
	head := func() string {
		if key == "" {
			return ""
		}
		return key + colon
	}
	it := n.items()
	if len(it) > 0 {
		last := it[len(it)-1]
		if bytes.IndexByte(src[n.start:n.end], '\n') >= 0 {
			ind := lineIndent(src, last[0])
			val, _ := encodeJSON(v, ind, unit)
			return splice(src, last[1], last[1], ",\n"+ind+head()+string(val))
		}
		sep := ", "
		if len(it) > 1 {
			if s := src[it[0][1]:it[1][0]]; !bytes.ContainsAny(s, "\n/") {
				sep = string(s)
			}
		} else if colon == ":" {
			sep = ","
		}
		val, _ := encodeJSON(v, "", "")
		return splice(src, last[1], last[1], sep+head()+string(val))
	}
	if bytes.IndexByte(src, '\n') >= 0 && bytes.IndexByte(bytes.TrimSpace(src), '\n') >= 0 {
		pind := lineIndent(src, n.start)
		ind := pind + unit
		val, _ := encodeJSON(v, ind, unit)
		return splice(src, n.start+1, n.end-1, "\n"+ind+head()+string(val)+"\n"+pind)
	}
	val, _ := encodeJSON(v, "", "")
	if key != "" {
		return splice(src, n.start+1, n.end-1, key+":"+string(val))
	}
	return splice(src, n.start+1, n.end-1, string(val))
}
