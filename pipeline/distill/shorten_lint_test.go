package distill_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/pipeline/distill"
)

// dtoolDir holds the linter, scanner, cloud and go build cases: real
// outputs of the tools run here (eslint, tsc, prettier, mypy, flake8,
// golangci-lint, gosec, bandit, go vet/build/get/mod, helm, kubectl, aws,
// gcloud), and outputs assembled from a tool's documented text format where
// the tool cannot be installed here (ruff, trivy, semgrep, npm audit
// reports, a live cluster's kubectl and helm, az). Each case's meta.json
// says which in "source".
const dtoolDir = "testdata/tools"

// dtoolMeta is a tools case's meta.json: dgMeta plus the distiller that
// must claim the command, the family, and what Shorten must do with it.
type dtoolMeta struct {
	dgMeta
	Family    string `json:"family"`
	Distiller string `json:"distiller"`
	Source    string `json:"source"`
	// Expect is "delivered" (the distillation must be what the model
	// reads) or "any" (the distiller must recognise the output; Shorten
	// may still deliver it raw when the cut would not pay).
	Expect string `json:"expect"`
}

// TestDistillToolFixtures runs every tools case through its distiller
// directly and through Shorten: the command picks the named distiller, the
// distiller recognises the output, every must_keep line survives both, no
// count the tool printed is contradicted, Shorten's invariants hold, and
// the delivered text matches the golden (testdata/tools/<case>/
// golden.txt; refresh with -update after checking the diff). It logs bytes
// in and out per family.
func TestDistillToolFixtures(t *testing.T) {
	metas, _ := filepath.Glob(filepath.Join(dtoolDir, "*", "meta.json"))
	if len(metas) == 0 {
		t.Fatalf("no cases under %s", dtoolDir)
	}
	sort.Strings(metas)
	type agg struct{ cases, in, out, keep, kept int }
	fam := map[string]*agg{}
	for _, m := range metas {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var meta dtoolMeta
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		rawB, err := os.ReadFile(filepath.Join(dir, "output.txt"))
		if err != nil {
			t.Fatal(err)
		}
		raw := string(rawB)
		req := pipeline.ShortenRequest{Command: meta.Command, Text: raw, ExitCode: meta.ExitCode}
		res := pipeline.Shorten(req)
		a := fam[meta.Family]
		if a == nil {
			a = &agg{}
			fam[meta.Family] = a
		}
		a.cases++
		a.in += len(raw)
		a.out += len(res.Text)
		a.keep += len(meta.MustKeep)
		for _, k := range meta.MustKeep {
			if strings.Contains(res.Text, strings.TrimSpace(k)) {
				a.kept++
			}
		}
		t.Run(name, func(t *testing.T) {
			shCheck(t, req, res)
			ci := distill.Analyze(meta.Command)
			d := distill.Pick(ci)
			if d == nil || d.Name() != meta.Distiller {
				t.Fatalf("command %q picks %v, want %s", meta.Command, d, meta.Distiller)
			}
			// The distiller alone: it recognises the output and keeps
			// every must_keep line.
			lines := pipeline.SplitLines(nil, raw)
			out, _, ok := d.Run(raw, lines, meta.ExitCode, ci.Args)
			if !ok {
				t.Fatalf("%s did not recognise its own output", d.Name())
			}
			if !distill.FailuresPreserved(raw, lines, out) {
				t.Errorf("%s dropped a failure line", d.Name())
			}
			for _, v := range dgViolations(meta.dgMeta, raw, out) {
				t.Errorf("distiller: %s", v)
			}
			// The whole pipeline.
			if res.Distiller != meta.Distiller {
				t.Errorf("Shorten ran %q, want %q", res.Distiller, meta.Distiller)
			}
			switch res.Reason {
			case "unrecognised", "failed:unverified", "fidelity":
				t.Errorf("Shorten passed it raw: %s", res.Reason)
			}
			if meta.Expect == "delivered" && (res.Reason != "" || !res.Changed) {
				t.Errorf("the distillation was not delivered (reason %q)", res.Reason)
			}
			for _, v := range dgViolations(meta.dgMeta, raw, res.Text) {
				t.Errorf("Shorten: %s", v)
			}
			dgGoldenCheck(t, filepath.Join(dir, "golden.txt"), raw, res.Text)
		})
		t.Logf("%-30s %-8s %6d -> %6d bytes  reason=%q  (%s)", name, meta.Family, len(raw), len(res.Text), res.Reason, dtoolSourceKind(meta.Source))
	}
	names := make([]string, 0, len(fam))
	for k := range fam {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a := fam[k]
		t.Logf("family %-8s %2d cases  %6d -> %6d bytes (saved %4.1f%%)  must_keep %d/%d", k, a.cases, a.in, a.out,
			100*(1-float64(a.out)/float64(a.in)), a.kept, a.keep)
	}
}

// dtoolSourceKind shortens a case's source to "real" or "hand-built".
func dtoolSourceKind(s string) string {
	if strings.HasPrefix(s, "real") {
		return "real"
	}
	return "hand-built"
}

func TestLintDistillersDecline(t *testing.T) {
	cases := []dtCase{
		{name: "prettier without --check or --write prints code", cmd: "npx prettier src/x.js", exit: 0,
			in: dtRepeat("const a%d = 1;\n", 30), raw: true},
		{name: "tsc --version", cmd: "npx tsc --version", exit: 0, in: "Version 5.9.3\n", raw: true},
		{name: "eslint crash without its banner", cmd: "npx eslint .", exit: 2,
			in: dtRepeat("    at Module._compile (node:internal/modules/cjs/loader:%d:14)\n", 20), raw: true},
		{name: "eslint warnings only on a failing run", cmd: "npx eslint .", exit: 1,
			in: "\n/p/a.js\n" + dtRepeat("  %d:1  warning  Unexpected var  no-var\n", 12) + "\n✖ 12 problems (0 errors, 12 warnings)\n", raw: true},
		{name: "mypy crash", cmd: "mypy src", exit: 2,
			in: "Traceback (most recent call last):\n" + dtRepeat("  File \"/usr/lib/python3/dist-packages/mypy/x%d.py\", line 1, in f\n", 15), raw: true},
		{name: "flake8 version", cmd: "flake8 --version", exit: 0, in: "6.0.0 (mccabe: 0.7.0, pycodestyle: 2.10.0, pyflakes: 3.0.1) CPython 3.11.2 on\nLinux\n", raw: true},
		{name: "golangci-lint failing without issues", cmd: "golangci-lint run", exit: 3,
			in: dtRepeat("some unrelated line %d\n", 15), raw: true},
		{name: "ruff failing without a verdict", cmd: "ruff check .", exit: 2,
			in: dtRepeat("  | something %d\n", 15), raw: true},
	}
	for _, c := range cases {
		c.run(t)
	}
}

func TestLintDistillersDeliver(t *testing.T) {
	frame := func(i int) string {
		return "src/a.ts:" + itoa(i) + ":5 - error TS2322: Type 'number' is not assignable to type 'string'.\n\n" +
			itoa(i) + "   const s: string = compute(" + itoa(i) + ");\n        ~\n\n"
	}
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString(frame(i))
	}
	b.WriteString("\nFound 20 errors in the same file, starting at: src/a.ts:1\n\n")
	cases := []dtCase{
		{name: "tsc --pretty without colour", cmd: "npx tsc --pretty", exit: 2, in: b.String(), distiller: "tsc",
			keep: []string{"src/a.ts:7:5 - error TS2322", "src/a.ts:20:5 - error TS2322", "Found 20 errors in the same file"},
			gone: []string{"const s: string = compute(7);"}},
		{name: "prettier --write", cmd: "npx prettier --write .", exit: 0,
			in:        dtRepeat("src/unchanged%02d.ts 3ms (unchanged)\n", 30) + "src/changed.ts 12ms\n",
			distiller: "prettier", keep: []string{"src/changed.ts 12ms", "[OMNI: 30 unchanged files not shown]"},
			gone: []string{"src/unchanged07.ts"}},
		{name: "golangci-lint v1 without a tally", cmd: "golangci-lint run", exit: 1,
			in: dtRepeat("pkg/a.go:%d:2: Error return value of `f.Close` is not checked (errcheck)\n\tf.Close()\n\t^\n", 12) +
				"level=info msg=\"[runner] linters took 1.2s\"\n",
			distiller: "golangci-lint", keep: []string{"pkg/a.go:11:2: Error return value"}, gone: []string{"level=info"}},
	}
	for _, c := range cases {
		c.run(t)
	}
}

// itoa is strconv.Itoa for the tests' small numbers.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
