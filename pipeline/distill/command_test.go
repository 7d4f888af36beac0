package distill

import (
	"testing"
)

func TestAnalyzeCommand(t *testing.T) {
	cases := []struct {
		cmd, prog   string
		chain, enum bool
		filter      string
		firstArg    string
	}{
		{"go test ./...", "go", false, false, "", "test"},
		{"cd /src && go test ./...", "go", false, false, "", "test"},
		{"cd a; cd b && pytest -x", "pytest", false, false, "", "-x"},
		{"source .venv/bin/activate && python -m pytest tests/", "pytest", false, false, "", "tests/"},
		{"python3 -m unittest tests.test_x", "unittest", false, false, "", "tests.test_x"},
		{"python manage.py test app", "django-test", false, false, "", "app"},
		{"./tests/runtests.py expressions", "django-runtests", false, false, "", "expressions"},
		{"bin/test sympy/sets", "sympy-test", false, false, "", "sympy/sets"},
		{"FOO=1 BAR=2 cargo test", "cargo", false, false, "", "test"},
		{"env -u X FOO=1 npx --yes jest --ci", "jest", false, false, "", "--ci"},
		{"sudo -u dev time nice -n 5 timeout 60 make -j4", "make", false, false, "", "-j4"},
		{"uv run pytest -q", "pytest", false, false, "", "-q"},
		{"poetry run python -m pytest", "pytest", false, false, "", ""},
		{"bash -c 'cd x && go vet ./...'", "go", false, false, "", "vet"},
		{"node ./node_modules/.bin/jest", "jest", false, false, "", ""},
		{"git status && find . -name '*.go'", "", true, false, "", ""},
		{"./t.sh; echo \"exit=$?\"", "", true, false, "", ""},
		{"make || true", "make", false, false, "", ""},
		{"go test ./... 2>&1 | tail -50", "go", false, false, "truncate", "test"},
		{"go test ./... 2>&1 | grep -v '^ok'", "go", false, false, "reshape", "test"},
		{"pytest | tee log.txt", "pytest", false, false, "", ""},
		{"go test ./... > out.txt; cat out.txt", "cat", false, true, "", "out.txt"},
		{"grep -rn 'a\\|b' src/", "grep", false, true, "", "-rn"},
		{"for f in *; do echo $f; done", "", true, false, "", ""},
		{"(cd x && make)", "", true, false, "", ""},
		{"python3 <<'EOF'\nprint(1)\nEOF", "python", false, false, "", ""},
		{"kubectl get pods -n prod", "kubectl", false, true, "", "get"},
		{"git log --oneline -n 5", "git", false, true, "", "log"},
		{"git show HEAD:README.md", "git", false, true, "", "show"},
		{"docker ps -a", "docker", false, true, "", "ps"},
		{"env", "env", false, true, "", ""},
		{"echo \"a && b\" # c; d", "echo", false, true, "", "a && b"},
	}
	for _, c := range cases {
		ci := Analyze(c.cmd)
		first := ""
		if len(ci.Args) > 0 {
			first = ci.Args[0]
		}
		if ci.Program != c.prog || ci.Chain != c.chain || ci.Enumeration != c.enum || ci.Filter != c.filter || first != c.firstArg {
			t.Errorf("%q: prog=%q chain=%v enum=%v filter=%q first=%q", c.cmd, ci.Program, ci.Chain, ci.Enumeration, ci.Filter, first)
		}
	}
}
