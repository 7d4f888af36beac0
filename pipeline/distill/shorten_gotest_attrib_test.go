package distill_test

import (
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline"
)

// TestGoTestVerboseKeepsAttribution: a passing test's own log line keeps its
// "=== RUN" header, so it never reads as the next (failing) test's output.
func TestGoTestVerboseKeepsAttribution(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString("=== RUN   TestQuiet" + strings.Repeat("x", i%5) + "\n--- PASS: TestQuiet" + strings.Repeat("x", i%5) + " (0.00s)\n")
	}
	b.WriteString("=== RUN   TestOK2\n    a_test.go:4: some log line\n--- PASS: TestOK2 (0.00s)\n")
	b.WriteString("=== RUN   TestFail\n    a_test.go:9: expected 3, got 4\n--- FAIL: TestFail (0.00s)\nFAIL\nFAIL\texample.com/a\t0.003s\n")
	r := pipeline.Shorten(pipeline.ShortenRequest{Command: "go test ./...", Text: b.String(), ExitCode: 1}) // -v would keep every pass line (TestAskedVerbosityKeepsPassLines)
	if !r.Changed {
		t.Fatalf("not distilled: %s", r.Reason)
	}
	i := strings.Index(r.Text, "a_test.go:4: some log line")
	if i < 0 {
		t.Fatalf("log line lost:\n%s", r.Text)
	}
	before := r.Text[:i]
	if !strings.HasSuffix(strings.TrimRight(before, " "), "=== RUN   TestOK2\n") {
		t.Fatalf("TestOK2's log line lost its header:\n%s", r.Text)
	}
	for _, want := range []string{"--- FAIL: TestFail (0.00s)", "a_test.go:9: expected 3, got 4", "FAIL\texample.com/a\t0.003s"} {
		if !strings.Contains(r.Text, want) {
			t.Fatalf("missing %q:\n%s", want, r.Text)
		}
	}
	if strings.Contains(r.Text, "TestQuiet") {
		t.Fatalf("quiet passing tests kept:\n%s", r.Text)
	}
}

// TestAskedVerbosityKeepsPassLines: a verbosity the user asked for is kept
// as a class: go test -v, vitest --reporter=verbose, jest --verbose,
// python -m unittest -v and cargo test -- -v... keep their per-test pass
// lines, which the same runs without the flag drop. Red when dropPass
// drops regardless of askedVerbose, or askedVerbose misses a form.
func TestAskedVerbosityKeepsPassLines(t *testing.T) {
	var g strings.Builder
	for i := 0; i < 30; i++ {
		g.WriteString("=== RUN   TestQuiet" + strings.Repeat("x", i%5) + "\n--- PASS: TestQuiet" + strings.Repeat("x", i%5) + " (0.00s)\n")
	}
	g.WriteString("PASS\nok  \texample.com/a\t0.003s\n")
	var v strings.Builder
	for i := 0; i < 30; i++ {
		v.WriteString(" ✓ src/a.test.ts > suite > case number " + strings.Repeat("y", i%7) + " 2ms\n")
	}
	v.WriteString("\n Test Files  1 passed (1)\n      Tests  30 passed (30)\n")
	var u strings.Builder
	for i := 0; i < 30; i++ {
		u.WriteString("test_case_" + strings.Repeat("z", i%6) + " (tests.test_a.A.test_case) ... ok\n")
	}
	u.WriteString("\n----------------------------------------------------------------------\nRan 30 tests in 0.010s\n\nOK\n")
	for _, c := range []struct{ quiet, verbose, text, pass string }{
		{"go test ./...", "go test -v ./...", g.String(), "--- PASS: TestQuiet"},
		{"npx vitest run", "npx vitest run --reporter=verbose", v.String(), "✓ src/a.test.ts > suite > case number"},
		{"npx vitest run", "npx vitest run --reporter verbose", v.String(), "✓ src/a.test.ts > suite > case number"},
		{"python -m unittest", "python -m unittest -v", u.String(), "... ok"},
		{"python manage.py test", "python manage.py test --verbosity 2", u.String(), "... ok"},
	} {
		q := pipeline.Shorten(pipeline.ShortenRequest{Command: c.quiet, Text: c.text})
		if strings.Contains(q.Text, c.pass) {
			t.Errorf("%s: pass lines kept without verbosity:\n%s", c.quiet, q.Text)
		}
		r := pipeline.Shorten(pipeline.ShortenRequest{Command: c.verbose, Text: c.text})
		if strings.Count(r.Text, c.pass) != 30 {
			t.Errorf("%s: %d of 30 pass lines kept:\n%s", c.verbose, strings.Count(r.Text, c.pass), r.Text)
		}
	}
}
