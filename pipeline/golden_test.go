package pipeline

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/decide/*.txtar")

// Golden cases: testdata/decide/*.txtar, each a real output from
// ../shared/fixtures or ../shared/corpus and what the ledger delivers for it.
//
// The comment (before the first section) says where the case comes from.
// Sections:
//
//	-- seen --     the lines this reader (or project) was already delivered,
//	               one per line; blank lines are ignored (they never fold).
//	               A line is   [project:|session:]TEXT[<TAB>@SOURCE]
//	               "project:" puts the line in the project scope (delivered
//	               in this project, not to this reader); "session:" (the
//	               default) in the reader's own scope, and escapes a TEXT
//	               that starts with "project:". A line in both counts as
//	               session. SOURCE, after a tab and "@", is the command or
//	               path that first delivered the line ("" when absent); a
//	               SOURCE starting with '"' is a Go-quoted string (for
//	               commands spanning several lines). The first source of a
//	               line wins, as in the ledger.
//	-- request --  "key: value" lines: source (Go-quoted if it starts with
//	               '"'), read (true|false), failed (true|false), empty
//	               (true|false; default: true when no seen line is in the
//	               session scope), owed (a handle the reader retrieved; may
//	               repeat), final-newline (false: the input has no final
//	               newline; the want section's last "\n" is dropped too).
//	-- input --    the text the host would show the model.
//	-- want --     exactly what the model reads (go test -run TestGolden
//	               -update rewrites it).

// txtarFile and txtarArchive are the txtar format of
// golang.org/x/tools/txtar (not a dependency of omni): a comment, then
// files each introduced by a "-- name --" line.
type txtarFile struct {
	Name string
	Data []byte
}

type txtarArchive struct {
	Comment []byte
	Files   []txtarFile
}

func txtarMarker(line []byte) (string, bool) {
	line = bytes.TrimRight(line, "\r\n")
	if !bytes.HasPrefix(line, []byte("-- ")) || !bytes.HasSuffix(line, []byte(" --")) || len(line) < 6 {
		return "", false
	}
	return strings.TrimSpace(string(line[3 : len(line)-3])), true
}

func parseTxtar(data []byte) *txtarArchive {
	a := &txtarArchive{}
	var cur *[]byte = &a.Comment
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data
		if i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if name, ok := txtarMarker(line); ok {
			a.Files = append(a.Files, txtarFile{Name: name})
			cur = &a.Files[len(a.Files)-1].Data
			continue
		}
		*cur = append(*cur, line...)
	}
	return a
}

func formatTxtar(a *txtarArchive) []byte {
	var b bytes.Buffer
	b.Write(fixNL(a.Comment))
	for _, f := range a.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(fixNL(f.Data))
	}
	return b.Bytes()
}

func fixNL(d []byte) []byte {
	if len(d) == 0 || d[len(d)-1] == '\n' {
		return d
	}
	return append(append([]byte(nil), d...), '\n')
}

type goldenCase struct {
	arch    *txtarArchive
	req     Request
	view    *fakeView
	want    string
	hasWant bool
	noFinal bool
}

func (c *goldenCase) section(name string) ([]byte, bool) {
	for _, f := range c.arch.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

func unquoteMaybe(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// parseGolden reads one golden case.
func parseGolden(data []byte) (*goldenCase, error) {
	c := &goldenCase{arch: parseTxtar(data), view: newFakeView()}
	req, ok := c.section("request")
	if !ok {
		return nil, fmt.Errorf("no request section")
	}
	emptySet := false
	for _, line := range strings.Split(string(req), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("request line %q is not key: value", line)
		}
		val = strings.TrimSpace(val)
		var err error
		switch strings.TrimSpace(k) {
		case "source":
			c.req.Source, err = unquoteMaybe(val)
		case "read":
			c.req.Read, err = strconv.ParseBool(val)
		case "failed":
			c.req.Failed, err = strconv.ParseBool(val)
		case "empty":
			c.view.empty, err = strconv.ParseBool(val)
			emptySet = true
		case "owed":
			c.view.owed[val] = true
		case "final-newline":
			var b bool
			b, err = strconv.ParseBool(val)
			c.noFinal = !b
		default:
			err = fmt.Errorf("unknown request key %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("request %q: %v", line, err)
		}
	}
	seen, _ := c.section("seen")
	session := false
	for _, line := range strings.SplitAfter(string(seen), "\n") {
		line = strings.TrimSuffix(line, "\n")
		scope := ScopeSession
		switch {
		case strings.HasPrefix(line, "project:"):
			scope, line = ScopeProject, strings.TrimPrefix(line, "project:")
		case strings.HasPrefix(line, "session:"):
			line = strings.TrimPrefix(line, "session:")
		}
		src := ""
		if i := strings.LastIndex(line, "\t@"); i >= 0 {
			s, err := unquoteMaybe(line[i+2:])
			if err != nil {
				return nil, fmt.Errorf("seen source %q: %v", line[i+2:], err)
			}
			line, src = line[:i], s
		}
		if textline.KeyOf(line) == 0 {
			continue
		}
		session = session || scope == ScopeSession
		c.view.see(scope, src, line)
	}
	if !emptySet {
		c.view.empty = !session
	}
	in, ok := c.section("input")
	if !ok {
		return nil, fmt.Errorf("no input section")
	}
	c.req.Text = string(in)
	var want []byte
	want, c.hasWant = c.section("want")
	c.want = string(want)
	if c.noFinal {
		c.req.Text = strings.TrimSuffix(c.req.Text, "\n")
		c.want = strings.TrimSuffix(c.want, "\n")
	}
	return c, nil
}

// TestGolden decides every case of testdata/decide and compares the
// delivered text with its want section (-update rewrites it).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "decide", "*.txtar"))
	if err != nil || len(files) < 12 {
		t.Fatalf("want at least 12 golden cases, found %d (%v)", len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseGolden(data)
			if err != nil {
				t.Fatal(err)
			}
			d := Decide(c.req, c.view)
			checkDecision(t, c.req, c.view, d)
			if *update {
				out := d.Text
				if c.noFinal {
					out += "\n"
				}
				found := false
				for i := range c.arch.Files {
					if c.arch.Files[i].Name == "want" {
						c.arch.Files[i].Data, found = []byte(out), true
					}
				}
				if !found {
					c.arch.Files = append(c.arch.Files, txtarFile{Name: "want", Data: []byte(out)})
				}
				if err := os.WriteFile(file, formatTxtar(c.arch), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !c.hasWant {
				t.Fatal("no want section (run with -update)")
			}
			if d.Text != c.want {
				t.Errorf("delivered text differs from want (%d folds, reason %q):\n--- got ---\n%s\n--- want ---\n%s",
					len(d.Folds), d.Reason, d.Text, c.want)
			}
		})
	}
}

// TestTxtarRoundTrip: the golden files' own format survives parse and
// format byte for byte (so -update changes only the want sections).
func TestTxtarRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "decide", "*.txtar"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatTxtar(parseTxtar(data)); !bytes.Equal(got, data) {
			t.Errorf("%s: parse+format changes the file", file)
		}
	}
}
