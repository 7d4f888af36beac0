// Package sharedtest is how tests that need the project's shared material
// (../shared beside the repository: the agent-session corpus, the output
// fixtures, the scenarios and the host captures) skip when it is absent:
// one message that says how to get it, and one summary line per package
// (Main) instead of a silent "ok". A clone of the repository alone has no
// ../shared, so these tests skip there; with it they run. Only tests
// import it.
package sharedtest

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

// Hint says what ../shared is and how to get it, with no machine's own
// path in it.
const Hint = "../shared is the project's shared material (corpus, fixtures, scenarios, host captures), kept beside the repository: check it out there (next to the directory that holds go.mod) to run these tests"

// skipped counts the tests of this test binary that Skip skipped.
var skipped atomic.Int64

// Skip skips t because what (a path under ../shared, as the test names it
// relative to the repository: "../shared/corpus") is absent, and counts
// the skip for Main's summary line.
func Skip(t testing.TB, what string) {
	t.Helper()
	skipped.Add(1)
	t.Skipf("%s is absent: %s", what, Hint)
}

// Skipped returns how many tests Skip skipped so far in this binary.
func Skipped() int64 { return skipped.Load() }

// Summary is the one line Main prints when n tests were skipped ("" when
// none were).
func Summary(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("shared material absent: %d test(s) skipped. %s", n, Hint)
}

// Main runs m and then prints Summary on stdout; it returns m.Run's exit
// code. go test shows a passing package's output with -v (the README's
// test command shows it on failure), so `go test -v ./... | grep
// '^shared material absent'` lists every package that skipped.
func Main(m *testing.M) int {
	code := m.Run()
	if s := Summary(Skipped()); s != "" {
		fmt.Fprintln(os.Stdout, s)
	}
	return code
}
