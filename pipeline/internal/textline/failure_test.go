package textline

import (
	"strings"
	"testing"
)

type failureCase struct {
	line string
	want bool
}

// failureCases are the table cases (the classic examples
// first); the fuzz target
// starts from them too.
var failureCases = []failureCase{
	// Classic examples: an exception line counts, a stack
	// frame does not.
	{"TypeError: x is undefined", true},
	{"    at Object.<anonymous> (file.js:3:9)", false},
	{"preserves_failed_lines", false},
	{"failed_to_parse", false},
	{"0 failed", false},
	{"3 failed", true},
	{"FAILED tests/test_a.py::test_x", true},
	{"--- FAIL: TestX", true},
	{"✓ failed login is rejected", false},
	{"test result: ok. 5 passed; 0 failed", false},
	{"error[E0308]: mismatched types", true},
	{"# fail 0", false},
	{"failed: 0", false},

	// Rule 1: fail glyphs at the start (after trimming).
	{"✗ login rejects a bad password", true},
	{"  ✘ upload", true},
	{"❌ deploy", true},
	{"status ✗", false},

	// Rule 2: substrings, any case.
	{"fatal: not a git repository", true},
	{"panic: runtime error: index out of range [3] with length 3", true},
	{"java.lang.IllegalStateException: boom", true},
	{"BUILD FAILED in 3s", true},
	{"Build failed with 2 errors", true},
	{"rebuild failed", true},
	{"    --- FAIL: TestFormat/-2.50 (0.00s)", true},
	{"Error: in prepare, no such table: order_items", true},
	{"error loading config", true},
	{"ERROR connection refused", true},
	{"src/level.c:11:1: error: expected ';'", true},
	{"✓ error: handled and reported", true}, // the pass glyph only mutes rule 3
	{"errors: 0", false},
	{"no errors found", false},
	{"error", false},
	{"Errorf is a function", false},
	{"make: *** [Makefile:3: all] Error 2", true},
	{"Traceback (most recent call last):", true},
	{"thread 'main' panicked at src/main.rs:2:5", true},

	// Rule 3: fail/failed as a verdict.
	{"FAIL", true},
	{"FAIL\texample.com/orders/internal/money\t0.004s", true},
	{"fail", true},
	{"Failed to connect to db", true},
	{"test result: FAILED. 490 passed; 10 failed; 0 ignored", true},
	{"Tests:       1 failed, 13 passed, 14 total", true},
	{"========== 3 failed, 42 passed in 3.15s ==========", true},
	{" 2 fail", true},
	{"# fail 2", true},
	{"failed: 3", true},
	{"2 failed 0 skipped", true},
	{"1,000 failed", true},
	{"10 failed", true},
	{"v0 failed", true}, // "v0" is not a count
	{"job (failed)", true},
	{"0 fail", false},
	{"Tests: 0 failed, 5 passed", false},
	{"passed: 3 failed: 0", false},
	{"failed=0", false},
	{"FAILED: 0", false},
	{"0.0 failed", false},
	{"100% tests passed, 0 tests failed out of 12", false},
	{"failures: 0", false},
	{"2 failing", true},
	{"0 failing", false},
	{"Failing that, the default is used", false},
	{"failsafe mode", false},
	{"mailfailed", false},
	{"tfail", false},
	{"✔ fail-safe defaults", false},
	{"✅ failed jobs are retried", false},
	{"ok  \texample.com/orders/internal/store\t0.003s", false},
	{"test tests::parse ... ok", false},

	// The vocabulary table, both directions.
	{"FAILURE: Squashed migration is still marked as applied!", true},
	{"FAILURE: Serialization is incorrect.", true},
	{"Failures: 2", true},
	{"Tests run: 5, Failures: 1, Errors: 0", true},
	{"Tests run: 5, Failures: 0, Errors: 0", false},
	{"OK (0 failures)", false},
	{"0 failures", false},
	{"Ran 12 tests: 0 failures, 0 errors", false},
	{"failure_count=0", false},
	{"failure_count=3", false}, // an identifier, not a verdict
	{"go test --fail-fast ./...", false},
	{"pytest --maxfail=1 -x", false},
	{"fail-safe defaults", true}, // a hyphen inside a name does not glue
	{"result_images/test_image/mask_image_pdf-failed-diff.png", true},
	{"diff-cover --fail-under=100 --compare-branch=origin/master", false},
	{"go test -failfast ./...", false},
	{"tox -e py --fail-fast", false},
	{"onFailure handler registered", false},
	{"FAIL src/app.test.js", true},
	{"✖ 3 problems (3 errors, 0 warnings)", true},
	{"  ✖ renders the header", true},
	{"× adds two numbers 4ms", true},
	{"✕ renders without crashing (12 ms)", true},
	{"  File \"x.py\", line 3, in <module>", false},
	{"npm ERR! code ELIFECYCLE", true},
	{"E   AssertionError", true},
	{"AssertionError", true},
	{"Exception in thread \"main\" java.lang.NullPointerException", true},
	{"error[E0308]: mismatched types", true},
	{"Segmentation fault (core dumped)", true},
	{"bash: foo: command not found", true},
	{"cat: missing.txt: No such file or directory", true},
	{"ls: cannot open directory '/root': Permission denied", true},
	{"main.c:(.text+0x5): undefined reference to `foo'", true},
	{"make: *** No rule to make target 'x'.  Stop.", true},
	{"1 error generated.", true},
	{"Found 2 errors in 1 file.", true},
	{"Found 0 errors. Watching for file changes.", false},
	{"errors", false},
	{"3 errorsome things", false},
	{"handles errors gracefully", false},

	// Line endings and indentation do not matter.
	{"3 failed\n", true},
	{"3 failed\r\n", true},
	{"\t  FAILED x\r\n", true},
	{"", false},
	{"\n", false},
	{"   ", false},
	{"ＥＲＲＯＲ: fullwidth", false},
	{"\xff\xfeerror:", true},
}

func TestIsFailureLineTable(t *testing.T) {
	for _, c := range failureCases {
		if got := IsFailureLine(c.line); got != c.want {
			t.Errorf("IsFailureLine(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

func FuzzIsFailureLine(f *testing.F) {
	for _, c := range failureCases {
		f.Add(c.line)
	}
	f.Add("0 tests failed")
	f.Add("failed 0.")
	f.Fuzz(func(t *testing.T, line string) {
		got := IsFailureLine(line)
		if again := IsFailureLine(line); again != got {
			t.Fatalf("not deterministic on %q", line)
		}
		// Only the trimmed text counts: an ending or indentation changes
		// nothing.
		for _, v := range []string{line + "\n", line + "\r\n", "  " + line, "\t" + line + " "} {
			if IsFailureLine(v) != got {
				t.Fatalf("IsFailureLine(%q) = %v but IsFailureLine(%q) = %v", line, got, v, !got)
			}
		}
		// The check ignores ASCII case.
		if IsFailureLine(strings.ToUpper(line)) != got && isASCII(line) {
			t.Fatalf("case changed the verdict on %q", line)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestFailuresPluralNeedsACount: the plural "failures" states failures
// only with a count, a label or alone as a header; inside a commit subject
// or prose it names them. Red when "failures" is a bare verdict word again.
func TestFailuresPluralNeedsACount(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"3 failures", true},
		{"Tests run: 5, Failures: 1, Errors: 0", true},
		{"=================================== FAILURES ===================================", true},
		{"FAILURES: test_a, test_b", true},
		{"Failures: 0", false},
		{"9c1d2e3 collapse: never group failures (#400)", false},
		{"- **Impact**: Breaking changes will cause silent failures", false},
		{"Use when facing independent failures that can be investigated", false},
	} {
		if got := IsFailureLine(c.line); got != c.want {
			t.Errorf("%q: %v, want %v", c.line, got, c.want)
		}
	}
}

// TestFailureVocabularyEntries: every entry of the table has a source and
// makes a line a failure line on its own; its negated forms do not.
func TestFailureVocabularyEntries(t *testing.T) {
	for _, m := range FailureVocabulary {
		if strings.TrimSpace(m.Source) == "" {
			t.Errorf("%q has no source", m.Text)
		}
		if m.At != FailPrefix && (len(m.Text) < 2 || !isASCII(m.Text) || strings.ToLower(m.Text) != m.Text) {
			t.Errorf("%q: a word the byte scan finds must be lowercase ASCII of two bytes or more", m.Text)
		}
		var yes, no []string
		switch m.At {
		case FailPrefix:
			yes = []string{m.Text + "x", "  " + m.Text + " y"}
			no = []string{"a " + m.Text + "x"}
		case FailAnywhere:
			yes = []string{m.Text, "x " + strings.ToUpper(m.Text) + " y"}
		case FailVerdict:
			yes = []string{"3 " + m.Text, strings.ToUpper(m.Text) + ": x", m.Text + ": 2"}
			no = []string{"0 " + m.Text, m.Text + ": 0", m.Text + "_count=1", "x --" + m.Text + "-fast", "-" + m.Text, "✓ " + m.Text}
		case FailCounted:
			yes = []string{"2 " + m.Text, "found 1 " + m.Text + "."}
			no = []string{m.Text, "0 " + m.Text, "no " + m.Text + " found", m.Text + "s1 2"}
		}
		for _, l := range yes {
			if !IsFailureLine(l) {
				t.Errorf("%q (entry %q) is not a failure line", l, m.Text)
			}
		}
		for _, l := range no {
			if IsFailureLine(l) {
				t.Errorf("%q (entry %q) is a failure line", l, m.Text)
			}
		}
	}
}

// isFailureLineRef is IsFailureLine without the pair filter (failPairs):
// every position of the line is tried. The filter only skips positions,
// so the two must agree on every line (FuzzIsFailureLinePairs).
func isFailureLineRef(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	for _, p := range failPrefixes {
		if failHasAt(t, 0, p) {
			return true
		}
	}
	verdicts := !(strings.HasPrefix(t, "✓") || strings.HasPrefix(t, "✔") || strings.HasPrefix(t, "✅"))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		for _, p := range failIndex[c] {
			if failHasAt(t, i, p) {
				return true
			}
		}
		if c == 'f' && verdicts && failHasAt(t, i, "fail") && failIsVerdict(t, i) {
			return true
		}
		if failCountedFirst[c] && failIsCounted(t, i) {
			return true
		}
	}
	return false
}

// FuzzIsFailureLinePairs: the pair filter never changes a verdict (red if
// a word's first two bytes were missing from failPairs).
func FuzzIsFailureLinePairs(f *testing.F) {
	for _, c := range failureCases {
		f.Add(c.line)
	}
	for _, m := range FailureVocabulary {
		f.Add("2 " + strings.ToUpper(m.Text) + " x")
	}
	f.Fuzz(func(t *testing.T, line string) {
		if got, want := IsFailureLine(line), isFailureLineRef(line); got != want {
			t.Fatalf("IsFailureLine(%q) = %v, without the pair filter %v", line, got, want)
		}
	})
}
