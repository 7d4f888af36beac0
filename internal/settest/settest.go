// Package settest checks a set written as a function (a switch statement,
// which runs no code when its package loads) against the map literal it
// replaced, for tests.
package settest

import (
	"strings"
	"testing"
)

// AnswersAsMap fails t unless f(s) == m[s] for the empty string, every key
// of m and each key's near misses (upper and lower case, a byte more or
// less at either end). name labels the failures.
func AnswersAsMap(t testing.TB, name string, f func(string) bool, m map[string]bool) {
	t.Helper()
	probe := func(s string) {
		if got := f(s); got != m[s] {
			t.Errorf("%s(%q) = %v, the map said %v", name, s, got, m[s])
		}
	}
	probe("")
	for k := range m {
		for _, s := range []string{k, strings.ToUpper(k), strings.ToLower(k), k + "s", k + " ", " " + k, k[1:], k[:len(k)-1]} {
			probe(s)
		}
	}
}
