package rewrite

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// wrappedRe is the expression wrappedAt reads as (it was the code before:
// the hook client no longer links regexp).
var wrappedRe = regexp.MustCompile(` 2>&1 \| /[^ ]*/omni[^ /]* pipe --call [0-9a-f]{32}$`)

// TestWrappedAtAsTheRegexp: on command lines assembled from the pieces of
// a wrapped call and their near misses, wrappedAt finds the match the
// regular expression finds, at the same place.
func TestWrappedAtAsTheRegexp(t *testing.T) {
	pieces := []string{"go test ./...", " ", "  ", "2>&1", " 2>&1 | ", " 2>&1 |", "| ", "/", "//", "/usr/local/bin/",
		"omni", "omni-hook", "Omni", "om", "x", "/omni", "tmp/", " pipe --call ", " pipe --call", "pipe", "--call ",
		"0123456789abcdef0123456789abcdef", "0123456789abcdef", "0123456789ABCDEF", "g", "\t", "é", ";", "\n"}
	digits := []string{"0123456789abcdef0123456789abcdef", "0123456789abcdef", "0123456789abcdef0123456789abcdeg",
		"0123456789abcdef0123456789abcdeF", "g123456789abcdef0123456789abcdef", "/0123456789abcdef0123456789abcdef"}
	r := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for n := 0; n < 200000; n++ {
		var b strings.Builder
		for k := r.IntN(9); k >= 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(2) == 0 { // a wrapped call's tail, its path and digits drawn from pieces
			b.WriteString(" 2>&1 | ")
			for k := r.IntN(4); k >= 0; k-- {
				b.WriteString(pieces[7+r.IntN(10)])
			}
			b.WriteString(" pipe --call ")
			b.WriteString(digits[r.IntN(len(digits))])
			if r.IntN(4) == 0 {
				b.WriteString(digits[r.IntN(len(digits))])
			}
		}
		cmd := b.String()
		want := -1
		if m := wrappedRe.FindStringIndex(cmd); m != nil {
			want = m[0]
			hits++
		}
		if got := wrappedAt(cmd); got != want {
			t.Fatalf("wrappedAt(%q) = %d, the expression matched at %d", cmd, got, want)
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d of the lines matched: the generator misses the point", hits)
	}
}
