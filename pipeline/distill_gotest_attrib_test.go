package pipeline

import (
	"strings"
	"testing"
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
	r := Shorten(ShortenRequest{Command: "go test -v ./...", Text: b.String(), ExitCode: 1})
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
