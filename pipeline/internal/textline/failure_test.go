package textline

import (
	"strings"
	"testing"
)

type failureCase struct {
	line string
	want bool
}

// failureCases are the table cases (REFERENCE.md §3 first); the fuzz target
// starts from them too.
var failureCases = []failureCase{
	// REFERENCE.md §3 examples.
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
	{"make: *** [Makefile:3: all] Error 2", false}, // tool-specific; not in §3
	{"Traceback (most recent call last):", false},  // tool-specific; not in §3
	{"thread 'main' panicked at src/main.rs:2:5", false},

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
	{"2 failing", false}, // not the word fail/failed
	{"failsafe mode", false},
	{"mailfailed", false},
	{"tfail", false},
	{"✔ fail-safe defaults", false},
	{"✅ failed jobs are retried", false},
	{"ok  \texample.com/orders/internal/store\t0.003s", false},
	{"test tests::parse ... ok", false},

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
