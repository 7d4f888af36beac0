package tokens

import (
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests here hold Count to libraryPieces (the former implementation's
// count) on inputs built to break the split, the merge and the cache: every
// ASCII byte pair in context, triples of each class's representatives,
// long runs that reach the heap merge and the library's own, lines at the
// cache's length bound, mixed and invalid UTF-8, and a counter counting
// from many goroutines while its rank table builds.

// classReps holds bytes of every class and every contraction letter, in
// both cases where a case exists.
var classReps = []byte{'a', 'z', 'A', 'Z', 's', 'S', 't', 'T', 'r', 'R', 'e', 'E', 'v', 'V', 'm', 'M', 'l', 'L', 'd', 'D',
	'0', '9', ' ', '\t', '\n', '\r', '\v', '\f', '\'', '.', '/', '-', '_', 0x00, 0x1f, 0x7f}

// TestCountMatchesLibraryOnBytePairs: every pair of ASCII bytes, alone and
// between the contexts a pre-token can meet (a letter, a digit, a space,
// a line end, an apostrophe), counts as libraryPieces counts it.
func TestCountMatchesLibraryOnBytePairs(t *testing.T) {
	ctx := []string{"", "x", "X", "7", " ", "\n", "\r", "'", ".", " \t"}
	for _, f := range families(t) {
		var sb strings.Builder
		for a := 0; a < 128; a++ {
			for b := 0; b < 128; b++ {
				for i, l := range ctx {
					r := ctx[(i*3+a+b)%len(ctx)]
					s := l + string([]byte{byte(a), byte(b)}) + r
					f.checkText(t, "pair", s)
					sb.WriteString(s)
				}
			}
		}
		// All of them as one text: lines of many pieces, some cached.
		all := sb.String()
		f.checkText(t, "pairs joined", all)
		f.checkText(t, "pairs joined again", all)
	}
}

// TestCountMatchesLibraryOnClassTriples: every triple of classReps, alone,
// after a space and before a letter.
func TestCountMatchesLibraryOnClassTriples(t *testing.T) {
	for _, f := range families(t) {
		for _, a := range classReps {
			for _, b := range classReps {
				for _, c := range classReps {
					s := string([]byte{a, b, c})
					f.checkText(t, "triple", s)
					f.checkText(t, "triple in context", " "+s+"q")
				}
			}
		}
	}
}

// longRuns are texts of one character class run long: whitespace, digits,
// apostrophes, contractions, line ends and a long line without a line end.
func longRuns() map[string]string {
	r := rand.New(rand.NewPCG(41, 1))
	var mb strings.Builder
	words := []string{"alpha", "Beta", "GAMMA", "x9", "==", "->", "'s", "don't", "/usr/lib/", "0x7f", "\t", "__init__"}
	for mb.Len() < 1<<20 {
		mb.WriteString(words[r.IntN(len(words))])
		if r.IntN(3) == 0 {
			mb.WriteByte(' ')
		}
	}
	var rnd strings.Builder
	for rnd.Len() < 1<<16 {
		rnd.WriteByte(byte(r.IntN(128)))
	}
	return map[string]string{
		"10k spaces":                 strings.Repeat(" ", 10000),
		"10k spaces then a word":     strings.Repeat(" ", 10000) + "word",
		"10k tabs and a line end":    strings.Repeat("\t", 10000) + "\n",
		"100k digits":                strings.Repeat("1234567890", 10000),
		"10k apostrophes":            strings.Repeat("'", 10000),
		"10k 's":                     strings.Repeat("'s", 5000),
		"10k 'LL":                    strings.Repeat("a'LL", 2500),
		"10k CRs":                    strings.Repeat("\r", 10000),
		"CR-only line ends":          strings.Repeat("a line ended by CR only\r", 2000),
		"CR and space runs":          strings.Repeat(" \r \r", 2500) + "\n",
		"10k letters (heap merge)":   strings.Repeat("abcdefghij", 1000),
		"100k of one letter":         strings.Repeat("a", 100000),
		"100k upper then lower":      strings.Repeat("A", 50000) + strings.Repeat("b", 50000),
		"100k punctuation":           strings.Repeat("=-", 50000),
		"punctuation run and slash":  strings.Repeat(".", 5000) + strings.Repeat("\r/", 5000),
		"10k DEL":                    strings.Repeat("\x7f", 10000),
		"1 MB line without line end": mb.String(),
		"64 KiB random ASCII":        rnd.String(),
	}
}

// TestCountMatchesLibraryOnLongRuns: the long runs count as libraryPieces
// counts them, twice (the second time with what was cached).
func TestCountMatchesLibraryOnLongRuns(t *testing.T) {
	runs := longRuns()
	for _, f := range families(t) {
		for name, s := range runs {
			f.checkText(t, name, s)
			f.checkText(t, name+" again", s)
		}
	}
}

// TestCountMatchesLibraryAtCacheBounds: lines of maxCachedLine-1,
// maxCachedLine and maxCachedLine+1 bytes (ASCII, non-ASCII, one piece and
// many), counted three times each (new, seen, cached), and a text of
// such lines.
func TestCountMatchesLibraryAtCacheBounds(t *testing.T) {
	var lines []string
	for _, d := range []int{-1, 0, 1} {
		n := maxCachedLine + d
		one := strings.Repeat("z", n-1) + "\n"
		many := strings.Repeat("ab ", n/3+1)[:n-1] + "\n"
		uni := "é" + strings.Repeat("q w", n)[:n-3] + "\n"
		noEnd := strings.Repeat("k ", n)[:n]
		for _, l := range []string{one, many, uni, noEnd} {
			if len(l) != n {
				t.Fatalf("built a line of %d bytes, want %d", len(l), n)
			}
			lines = append(lines, l)
		}
	}
	for _, f := range families(t) {
		for round := range 3 {
			for i, l := range lines {
				f.checkText(t, "bound line "+strconv.Itoa(i)+" round "+strconv.Itoa(round), l)
			}
		}
		f.checkText(t, "bound lines joined", strings.Join(lines, ""))
	}
}

// TestCountMatchesLibraryOnMixedLines: lines mixing ASCII pieces with
// non-ASCII ones and invalid UTF-8 (a lone continuation byte, a truncated
// sequence, an over-long encoding, a surrogate), each counted three times.
func TestCountMatchesLibraryOnMixedLines(t *testing.T) {
	bad := []string{"\x80", "\xff", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é", "日本語", "😀", "\u00a0", "\u2028", "\u0301"}
	asc := []string{"word", " x", "'s", "123456", "  ", "\t", ".", "\r", "\n", "Ab'LL", "\x7f"}
	r := rand.New(rand.NewPCG(41, 2))
	var texts []string
	for range 3000 {
		var sb strings.Builder
		for k := 1 + r.IntN(10); k > 0; k-- {
			if r.IntN(3) == 0 {
				sb.WriteString(bad[r.IntN(len(bad))])
			} else {
				sb.WriteString(asc[r.IntN(len(asc))])
			}
		}
		texts = append(texts, sb.String())
	}
	for _, f := range families(t) {
		for round := range 3 {
			for _, s := range texts {
				f.checkText(t, "mixed round "+strconv.Itoa(round), s)
			}
		}
	}
}

// TestCountConcurrentManyGoroutines: 16 goroutines count the same texts
// (adversarial and sample) on fresh counters of both families from their
// first Count, so some count before the rank table is built and some
// after, and all get libraryPieces' counts. Run it under -race.
func TestCountConcurrentManyGoroutines(t *testing.T) {
	texts := append(sampleOutputs(t)[:200], edgeCases(300)...)
	for _, s := range longRuns() {
		if len(s) <= 1<<16 {
			texts = append(texts, s)
		}
	}
	for _, f := range families(t) {
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = libraryPieces(f.codec, s)
		}
		c, err := New(f.name)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range texts {
					j := (i*7 + g*131) % len(texts)
					if got := c.Count(texts[j]); got != want[j] {
						errs <- f.name + " text " + strconv.Itoa(j) + ": " + strconv.Itoa(got) + " != " + strconv.Itoa(want[j])
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestCacheHitComparesText: an entry stored under a line's hash but for
// another text (what a hash collision leaves) is never taken for the line,
// whether the line is looked up whole or as a piece; storing the line then
// replaces it. Red when a look-up trusts the hash alone.
func TestCacheHitComparesText(t *testing.T) {
	for _, f := range families(t) {
		for _, line := range []string{"ASCII line of several pieces\n", "línea con acentos y espacios\n", "ünïcode", "word"} {
			want := libraryPieces(f.codec, line)
			h := maphash.String(f.c.seed, line)
			f.c.mu.Lock()
			f.c.store(h, "another text of the same hash", want+1000)
			f.c.seen[h%seenSlots] = h // counted before: cached now
			f.c.mu.Unlock()
			for round := range 3 {
				if got := f.c.Count(line); got != want {
					t.Fatalf("%s round %d: Count(%q) = %d with a colliding entry cached, want %d", f.name, round, line, got, want)
				}
				if got := f.c.line(line); got != want {
					t.Fatalf("%s round %d: line(%q) = %d with a colliding entry cached, want %d", f.name, round, line, got, want)
				}
			}
		}
	}
}
