package shellcmd

import (
	"slices"
	"testing"
)

func TestLeadingWords(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		n    int
		want []string
	}{
		{"FOO=1 omni retrieve abc", 8, []string{"FOO=1", "omni", "retrieve", "abc"}},
		{"cat 'a b' \"c d\"", 8, []string{"cat", "a b", "c d"}},
		{"git status && ls", 8, []string{"git", "status"}},
		{"a|b", 8, []string{"a"}},
		{"a; b", 8, []string{"a"}},
		{"one two three", 2, []string{"one", "two"}},
		{"x\ty\nz", 8, []string{"x", "y"}},
		{"echo 'open", 8, []string{"echo", "open"}},
		{`echo a\ b`, 8, []string{"echo", `a\`, "b"}},
		{"   ", 8, nil},
		{"", 8, nil},
	} {
		if got := LeadingWords(c.cmd, c.n); !slices.Equal(got, c.want) {
			t.Errorf("LeadingWords(%q, %d) = %q, want %q", c.cmd, c.n, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []string
	}{
		{`omni hook --host codex`, []string{"omni", "hook", "--host", "codex"}},
		{`'/a b/omni' "x \"y\"" z\ w`, []string{"/a b/omni", `x "y"`, "z w"}},
		{"a && b\n c", []string{"a", "&&", "b", "c"}},
		{`''`, []string{""}},
		{"", nil},
	} {
		if got := Split(c.s); !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "''",
		"/usr/local/bin/omni": "/usr/local/bin/omni",
		"a b":                 "'a b'",
		"it's":                `'it'\''s'`,
		"$(rm -rf /)":         "'$(rm -rf /)'",
		"k=v,w+x@y%z:1":       "k=v,w+x@y%z:1",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzQuoteSplit: whatever Quote writes, Split reads back word for word.
func FuzzQuoteSplit(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", `"\`, "x\ny", "$HOME"} {
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Split(Quote(a) + " " + Quote(b))
		if !slices.Equal(got, []string{a, b}) {
			t.Fatalf("Split(Quote(%q) Quote(%q)) = %q", a, b, got)
		}
	})
}

func TestIsAssignment(t *testing.T) {
	for w, want := range map[string]bool{
		"FOO=bar": true, "_x=": true, "a1=2": true, "OMNI_PASSTHROUGH=1": true,
		"=x": false, "1A=x": false, "A-B=x": false, "--flag=x": false, "plain": false, "": false,
	} {
		if got := IsAssignment(w); got != want {
			t.Errorf("IsAssignment(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestBaseAndProgramName(t *testing.T) {
	if got := Base("/usr/bin/Git"); got != "Git" {
		t.Errorf("Base = %q", got)
	}
	if got := Base("omni"); got != "omni" {
		t.Errorf("Base = %q", got)
	}
	if got := ProgramName(`C:/Tools/Python3.EXE`); got != "python3" {
		t.Errorf("ProgramName = %q", got)
	}
}

func TestProgram(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		prog string
		args []string
	}{
		{"go test ./...", "go", []string{"test", "./..."}},
		{"FOO=1 BAR=2 cargo test", "cargo", []string{"test"}},
		{"env -u X FOO=1 npx --yes jest --ci", "jest", []string{"--ci"}},
		{"sudo -u dev time nice -n 5 timeout 60 make -j4", "make", []string{"-j4"}},
		{"uv run pytest -q", "pytest", []string{"-q"}},
		{"conda run -n base python -m pytest -x", "pytest", []string{"-x"}},
		{"python manage.py test app", "django-test", []string{"app"}},
		{"python3 script.py a", "python", []string{"script.py", "a"}},
		{"./tests/runtests.py expressions", "django-runtests", []string{"expressions"}},
		{"bin/test sympy/sets", "sympy-test", []string{"sympy/sets"}},
		{"node ./node_modules/.bin/jest x", "jest", []string{"x"}},
		{"py.test -k a", "pytest", []string{"-k", "a"}},
		{"/usr/bin/GIT.exe log", "git", []string{"log"}},
		{"env", "env", nil},
		{"FOO=1", "", nil},
	} {
		prog, args := Program(Split(c.cmd))
		if prog != c.prog || !slices.Equal(args, c.args) {
			t.Errorf("Program(%q) = %q %q, want %q %q", c.cmd, prog, args, c.prog, c.args)
		}
	}
}

func TestParse(t *testing.T) {
	type cmd = Command
	for _, c := range []struct {
		line    string
		want    [][]Command
		complex bool
	}{
		{"cd x && go test ./... 2>&1 | tail -5", [][]Command{
			{cmd{Words: []string{"cd", "x"}}},
			{cmd{Words: []string{"go", "test", "./..."}}, cmd{Words: []string{"tail", "-5"}}},
		}, false},
		{"make > log.txt; cat log.txt", [][]Command{
			{cmd{Words: []string{"make"}, StdoutAway: true}},
			{cmd{Words: []string{"cat", "log.txt"}}},
		}, false},
		{"echo hi >&2", [][]Command{{cmd{Words: []string{"echo", "hi"}}}}, false},
		{"echo \"a && b\" # c; d", [][]Command{{cmd{Words: []string{"echo", "a && b"}}}}, false},
		{"python3 <<'EOF'\nprint(1)\nEOF\nls", [][]Command{
			{cmd{Words: []string{"python3"}}},
			{cmd{Words: []string{"ls"}}},
		}, false},
		{"echo $(date) `id`", [][]Command{{cmd{Words: []string{"echo", "$(date)", "`id`"}}}}, false},
		{"a \\\n b", [][]Command{{cmd{Words: []string{"a", "b"}}}}, false},
		{"(cd x && make)", nil, true},
		{"for f in *; do echo $f; done", nil, true},
	} {
		got, complex := Parse(c.line)
		if complex != c.complex {
			t.Errorf("Parse(%q) complex = %v, want %v", c.line, complex, c.complex)
			continue
		}
		if complex {
			continue
		}
		if !slices.EqualFunc(got, c.want, func(a, b []Command) bool {
			return slices.EqualFunc(a, b, func(x, y Command) bool {
				return x.StdoutAway == y.StdoutAway && slices.Equal(x.Words, y.Words)
			})
		}) {
			t.Errorf("Parse(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
}
