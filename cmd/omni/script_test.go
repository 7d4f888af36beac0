package main

// End-to-end tests of the omni command as txtar scripts (testscript):
// testdata/script/*.txtar, run with omni, built once by the
// test, first on $PATH. Each script sets OMNI_HOME=$WORK/home; most
// set OMNI_NO_DAEMON=1 (in-process store, hermetic), one goes through the
// daemon and stops it at the end.
//
// Run with -update to rewrite the golden files (the second argument of a
// failing `cmp`) inside the scripts.
//
// Custom commands, for the checks that the stock ones cannot make:
//
//	jsoncheck FILE PATH TYPE [VALUE]      the JSON value at PATH has TYPE (and VALUE)
//	jsoneq FILE1 PATH1 FILE2 PATH2 [KEY...] the two values are equal; with KEYs,
//	                                      both are objects with the same keys
//	                                      and equal values except at KEYs
//	jsonget FILE PATH OUT                 write the value at PATH to OUT (a string raw)
//	jsonset IN PATH SRC OUT               copy IN to OUT with the string at PATH set
//	                                      to the content of file SRC
//	capture FILE REGEXP VAR               set $VAR to REGEXP's first group in FILE
//	lines FILE N                          FILE holds N lines (a final newline opens none)
//	mkfile FILE BYTES [PREFIX]            write BYTES bytes of distinct 64-byte lines ("PREFIX line N")
//	expand FILE OUT                       write FILE to OUT with each marker line
//	                                      replaced by `omni retrieve` of its handle
//	                                      and the "⋮" filler after it dropped
//	status CODE PROG [ARG...]             run PROG; its exit status must be CODE
//	unescape IN OUT                       copy IN to OUT with each \xNN made one byte
//
// FILE may be stdout or stderr (the last command's). PATH is dotted: object
// keys, and decimal indexes into arrays; "." is the whole document. TYPE is
// string, bool, number, null, object, array or absent; VALUE is the string,
// true/false, the number, or the length of an object or array.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/testfixture"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/omnictx/omni/internal/testbin"
)

func init() {
	// Registered only if no other test file of this package owns -update.
	// (Package-level flag vars of every file are created before any init.)
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
}

func updateFlag() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// buildOmni returns a directory holding a real omni binary (one build per
// test process, internal/testbin): the daemon a command spawns is
// os.Executable, which must be the omni users run, not this test binary.
func buildOmni(t *testing.T) string {
	t.Helper()
	return testbin.Dir(t, false)
}

func TestScript(t *testing.T) {
	bin := buildOmni(t)
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: updateFlag(),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(filepath.ListSeparator)+env.Getenv("PATH"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsoncheck": cmdJSONCheck,
			"jsoneq":    cmdJSONEq,
			"jsonget":   cmdJSONGet,
			"jsonset":   cmdJSONSet,
			"capture":   cmdCapture,
			"lines":     cmdLines,
			"mkfile":    cmdMkfile,
			"status":    cmdStatus,
			"expand":    cmdExpand,
			"unescape":  cmdUnescape,
			"damage":    cmdDamage,
		},
	})
}

// decodeJSON parses the whole of s as one JSON value, numbers kept exact.
func decodeJSON(ts *testscript.TestScript, name, s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s is not JSON: %v", name, err)
	}
	if dec.More() {
		ts.Fatalf("%s holds more than one JSON value", name)
	}
	return v
}

// lookupJSON walks a dotted path; ok is false when a step is missing.
func lookupJSON(v any, path string) (any, bool) { return testfixture.JSONPath(v, path) }

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func cmdJSONCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: jsoncheck FILE PATH TYPE [VALUE]")
	}
	doc := decodeJSON(ts, args[0], ts.ReadFile(args[0]))
	v, ok := lookupJSON(doc, args[1])
	err := func() error {
		if args[2] == "absent" {
			if ok {
				return fmt.Errorf("%s is present (%s)", args[1], jsonType(v))
			}
			return nil
		}
		if !ok {
			return fmt.Errorf("%s is absent", args[1])
		}
		if got := jsonType(v); got != args[2] {
			return fmt.Errorf("%s is a %s, want %s", args[1], got, args[2])
		}
		if len(args) == 3 {
			return nil
		}
		want := args[3]
		var got string
		switch x := v.(type) {
		case string:
			got = x
		case bool:
			got = strconv.FormatBool(x)
		case json.Number:
			g, err1 := strconv.ParseFloat(x.String(), 64)
			w, err2 := strconv.ParseFloat(want, 64)
			if err1 == nil && err2 == nil && g == w {
				return nil
			}
			got = x.String()
		case []any:
			got = strconv.Itoa(len(x))
		case map[string]any:
			got = strconv.Itoa(len(x))
		case nil:
			got = "null"
		}
		if got != want {
			return fmt.Errorf("%s = %q, want %q", args[1], got, want)
		}
		return nil
	}()
	switch {
	case err != nil && !neg:
		ts.Fatalf("jsoncheck %s: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("jsoncheck %s: %s unexpectedly matches %s", args[0], args[1], strings.Join(args[2:], " "))
	}
}

func cmdJSONEq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 {
		ts.Fatalf("usage: jsoneq FILE1 PATH1 FILE2 PATH2 [KEY...]")
	}
	get := func(file, path string) any {
		v, ok := lookupJSON(decodeJSON(ts, file, ts.ReadFile(file)), path)
		if !ok {
			ts.Fatalf("jsoneq: %s has no %s", file, path)
		}
		return v
	}
	a, b := get(args[0], args[1]), get(args[2], args[3])
	except := args[4:]
	err := func() error {
		if len(except) == 0 {
			if !reflect.DeepEqual(a, b) {
				return fmt.Errorf("%s %s differs from %s %s", args[0], args[1], args[2], args[3])
			}
			return nil
		}
		ma, oka := a.(map[string]any)
		mb, okb := b.(map[string]any)
		if !oka || !okb {
			return fmt.Errorf("with KEYs both values must be objects")
		}
		var diffs []string
		for k, va := range ma {
			vb, ok := mb[k]
			switch {
			case !ok:
				diffs = append(diffs, "key "+k+" only in "+args[0])
			case !contains(except, k) && !reflect.DeepEqual(va, vb):
				diffs = append(diffs, fmt.Sprintf("key %s: %v != %v", k, va, vb))
			}
		}
		for k := range mb {
			if _, ok := ma[k]; !ok {
				diffs = append(diffs, "key "+k+" only in "+args[2])
			}
		}
		if len(diffs) > 0 {
			return errors.New(strings.Join(diffs, "; "))
		}
		return nil
	}()
	switch {
	case err != nil && !neg:
		ts.Fatalf("jsoneq: %v", err)
	case err == nil && neg:
		ts.Fatalf("jsoneq: values are equal")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget FILE PATH OUT")
	}
	v, ok := lookupJSON(decodeJSON(ts, args[0], ts.ReadFile(args[0])), args[1])
	if !ok {
		ts.Fatalf("jsonget: %s has no %s", args[0], args[1])
	}
	var out []byte
	if s, isStr := v.(string); isStr {
		out = []byte(s)
	} else {
		var err error
		out, err = json.Marshal(v)
		ts.Check(err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), out, 0o666))
}

func cmdJSONSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: jsonset IN PATH SRC OUT")
	}
	doc := decodeJSON(ts, args[0], ts.ReadFile(args[0]))
	val := ts.ReadFile(args[2])
	i := strings.LastIndex(args[1], ".")
	parent, key := ".", args[1]
	if i >= 0 {
		parent, key = args[1][:i], args[1][i+1:]
	}
	p, ok := lookupJSON(doc, parent)
	m, isObj := p.(map[string]any)
	if !ok || !isObj {
		ts.Fatalf("jsonset: %s has no object at %s", args[0], parent)
	}
	m[key] = val
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	ts.Check(enc.Encode(doc))
	ts.Check(os.WriteFile(ts.MkAbs(args[3]), b.Bytes(), 0o666))
}

func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: capture FILE REGEXP VAR")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile(args[0]))
	if m == nil {
		ts.Fatalf("capture: no match for %q in %s", args[1], args[0])
	}
	v := m[0]
	if len(m) > 1 {
		v = m[1]
	}
	ts.Setenv(args[2], v)
}

func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	s := ts.ReadFile(args[0])
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	switch {
	case n != want && !neg:
		ts.Fatalf("lines: %s holds %d lines, want %d", args[0], n, want)
	case n == want && neg:
		ts.Fatalf("lines: %s holds %d lines", args[0], n)
	}
}

func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: mkfile FILE BYTES [PREFIX]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	prefix := "generated"
	if len(args) == 3 {
		prefix = args[2]
	}
	var b bytes.Buffer
	b.Grow(n + 64)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%-63s\n", fmt.Sprintf("%s line %09d", prefix, i))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes()[:n], 0o666))
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("status: %s exited %d, want %d", args[1], got, want)
	}
}

// markerLine matches a whole marker line and captures its handle.
var markerLine = regexp.MustCompile(`^\[OMNI: [^\]]*omni retrieve ([0-9a-f]{16})[^\]]*\]$`)

// cmdExpand undoes every fold of FILE with `omni retrieve` (which records
// Retrieved events and leaves its own output as stdout).
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand FILE OUT")
	}
	var out strings.Builder
	filler := false
	for _, line := range strings.SplitAfter(ts.ReadFile(args[0]), "\n") {
		body := strings.TrimRight(line, "\r\n")
		if m := markerLine.FindStringSubmatch(body); m != nil {
			if err := ts.Exec("omni", "retrieve", m[1]); err != nil {
				ts.Fatalf("expand: omni retrieve %s: %v", m[1], err)
			}
			out.WriteString(ts.ReadFile("stdout"))
			filler = true
			continue
		}
		if filler && body == "⋮" {
			continue
		}
		filler = false
		out.WriteString(line)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out.String()), 0o666))
}

var hexEscape = regexp.MustCompile(`\\x([0-9a-fA-F]{2})`)

// cmdUnescape writes bytes a txtar file should not hold (invalid UTF-8).
func cmdUnescape(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unescape IN OUT")
	}
	out := hexEscape.ReplaceAllFunc([]byte(ts.ReadFile(args[0])), func(m []byte) []byte {
		b, _ := strconv.ParseUint(string(m[2:]), 16, 8)
		return []byte{byte(b)}
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o666))
}

// cmdDamage: damage [-rebuild] STOREDIR SEQ flips 16 bytes in the middle
// of the record of batch SEQ in the JetStream message blocks under STOREDIR
// (a damaged disk, for the store-repair scripts); -rebuild also removes the
// blocks' index, so the server rebuilds it on open and drops everything
// from the damaged record on (a truncated log). Records are the server's
// file format: total length (4 bytes, high bit = has headers), sequence (8),
// timestamp (8), subject length (2), ... hash (8). The store must not be
// open.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	rebuild := len(args) > 0 && args[0] == "-rebuild"
	if rebuild {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: damage [-rebuild] STOREDIR SEQ")
	}
	if rebuild { // no index: the server rebuilds the block on open
		idx, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "js", "jetstream", "*", "streams", "*", "msgs", "index.db"))
		for _, f := range idx {
			ts.Check(os.Remove(f))
		}
	}
	want, err := strconv.ParseUint(args[1], 10, 64)
	ts.Check(err)
	blks, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "js", "jetstream", "*", "streams", "*", "msgs", "*.blk"))
	for _, blk := range blks {
		b, err := os.ReadFile(blk)
		ts.Check(err)
		for off := 0; off+22 <= len(b); {
			rl := int(binary.LittleEndian.Uint32(b[off:]) &^ (1 << 31))
			seq := binary.LittleEndian.Uint64(b[off+4:]) &^ (1 << 63)
			if rl < 22 || off+rl > len(b) {
				break
			}
			if seq == want {
				if rl < 80 {
					ts.Fatalf("damage: record %d has only %d bytes", want, rl)
				}
				for i := off + rl/2; i < off+rl/2+16; i++ {
					b[i] ^= 0xff
				}
				ts.Check(os.WriteFile(blk, b, 0o600))
				return
			}
			off += rl
		}
	}
	ts.Fatalf("damage: no record of batch %d under %s", want, args[0])
}
