package tokens

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/omnictx/omni/internal/bench/sample"
	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/tiktoken-go/tokenizer"
)

// The tests here hold Count to the count it had when every piece went to
// the library's encoder (libraryPieces: the reference, kept for tests
// only): over generated ASCII edge cases, the embedded sample, the shared
// corpus and fuzzed strings, for both families. The split and the merge
// are also checked on their own against the library's pattern (compiled
// here with the same engine) and the library's encoding.

// splitPatterns are the encodings' pre-split patterns, as the library's
// codec package compiles them (o200k_base.go, cl100k_base.go).
var splitPatterns = map[string]string{
	"o200k":  `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"cl100k": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

// libraryPieces is Count as it was before this package split and merged
// ASCII itself: text cut by pieceEnd, each piece counted by the library's
// codec alone, (len+3)/4 for a piece it fails on.
func libraryPieces(codec tokenizer.Codec, text string) int {
	n := 0
	for rest := text; rest != ""; {
		end := pieceEnd(rest)
		k, err := codec.Count(rest[:end])
		if err != nil {
			k = (end + 3) / 4
		}
		n += k
		rest = rest[end:]
	}
	return n
}

// family is one encoding under test: a Counter, the library's codec and
// the library's pre-split pattern.
type family struct {
	name  string
	c     *Counter
	codec tokenizer.Codec
	split *regexp2.Regexp
}

func families(t testing.TB) []family {
	t.Helper()
	var out []family
	for _, name := range Names() {
		c, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		c.load()
		<-c.built
		codec, err := tokenizer.Get(c.enc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, family{name, c, codec, regexp2.MustCompile(splitPatterns[name], regexp2.None)})
	}
	return out
}

// librarySplit returns the library pattern's matches over s, in order.
func (f family) librarySplit(t testing.TB, s string) []string {
	var out []string
	m, err := f.split.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = f.split.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ourSplit returns asciiPreToken's pre-tokens of s (ASCII), in order,
// skipping what it skips.
func (f family) ourSplit(s string) []string {
	var out []string
	for s != "" {
		k := asciiPreToken(s, f.c.cl100k)
		if k == 0 {
			s = s[1:]
			continue
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// checkText fails t when Count(text) differs from libraryPieces, or, for
// each ASCII piece, when the split differs from the library pattern's or a
// pre-token's merge from the library's encoding of it.
func (f family) checkText(t testing.TB, what, text string) {
	t.Helper()
	if got, want := f.c.Count(text), libraryPieces(f.codec, text); got != want {
		t.Fatalf("%s %s: Count = %d, library = %d for %q", f.name, what, got, want, clip(text))
	}
}

// checkPiece fails t when the ASCII piece p is split or merged other than
// the library splits and merges it: the split match for match, each
// pre-token's merge to as many tokens as the library's encoding of the
// piece gives it (tokens never cross a pre-token).
func (f family) checkPiece(t testing.TB, p string) {
	t.Helper()
	lib, ours := f.librarySplit(t, p), f.ourSplit(p)
	if strings.Join(lib, "\x00") != strings.Join(ours, "\x00") {
		t.Fatalf("%s: split of %q = %q, library %q", f.name, p, ours, lib)
	}
	_, toks, err := f.codec.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, pre := range lib {
		n, at := 0, 0
		for at < len(pre) && len(toks) > 0 {
			at += len(toks[0])
			toks = toks[1:]
			n++
		}
		if at != len(pre) {
			t.Fatalf("%s: a library token crosses the pre-token %q of %q", f.name, pre, p)
		}
		if got := f.c.ranks.Load().tokens(pre); got != n {
			t.Fatalf("%s: pre-token %q merges to %d tokens, library %d", f.name, pre, got, n)
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// edgeFragments are the ASCII fragments the edge cases are built of: every
// contraction in several cases, a lone and doubled apostrophe, letters in
// each case pattern, digit runs of 1 to 7, every ASCII whitespace alone and
// in runs, line endings, punctuation runs before \r, \n and /, and the
// bytes no class of the patterns holds (DEL) or only the negated ones do
// (NUL, US).
var edgeFragments = []string{
	"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "'r", "'l", "'v",
	"'", "''", "a", "ab", "Ab", "AB", "ABc", "aB", "x", "don", "DON", "I",
	"1", "12", "123", "1234", "12345", "123456", "1234567",
	" ", "  ", "   ", "\t", "\t\t", "\v", "\f", "\r", "\n", "\r\n", " \n", "\n ", " \t ", "\n\n",
	".", "...", "/", "//", ".\r\n", "!/", "-/\n", "->", "(", ")", "_", "=", "\"", "#",
	"\x7f", "\x00", "\x1f", "\x1c",
}

// edgeCases returns the edge cases: every fragment alone, every pair, and
// n seeded random runs of 2 to 9 fragments, plus the empty string.
func edgeCases(n int) []string {
	out := []string{""}
	for _, a := range edgeFragments {
		out = append(out, a)
		for _, b := range edgeFragments {
			out = append(out, a+b)
		}
	}
	r := rand.New(rand.NewPCG(7, 40))
	for range n {
		var sb strings.Builder
		for k := 2 + r.IntN(8); k > 0; k-- {
			sb.WriteString(edgeFragments[r.IntN(len(edgeFragments))])
		}
		out = append(out, sb.String())
	}
	return out
}

// TestCountMatchesLibraryOnEdgeCases: over the ASCII edge cases, Count
// equals libraryPieces, and each case's split and merges equal the
// library's, for both families. Red when a class, an alternative's order
// or a greedy loop's give-back differs from the library pattern's.
func TestCountMatchesLibraryOnEdgeCases(t *testing.T) {
	cases := edgeCases(4000)
	for _, f := range families(t) {
		for _, s := range cases {
			f.checkPiece(t, s)
			f.checkText(t, "edge case", s)
		}
	}
}

// longCases returns n seeded long ASCII strings (65 to 600 bytes, past
// maxScanMerge, so the heap merge runs): runs of one letter, of random
// lower-case letters, of letters and digits, of punctuation, of spaces and
// of base64, each also with a leading space.
func longCases(n int) []string {
	r := rand.New(rand.NewPCG(40, 7))
	alphabets := []string{"a", "z", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "=-", "=", "*/.", " ", " \t", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"}
	var out []string
	for i := range n {
		a := alphabets[i%len(alphabets)]
		b := make([]byte, 65+r.IntN(536))
		for j := range b {
			b[j] = a[r.IntN(len(a))]
		}
		out = append(out, string(b), " "+string(b))
	}
	return out
}

// TestLongPreTokensMatchLibrary: long pre-tokens (the heap merge's) split
// and merge as the library's, and count as libraryPieces counts them.
func TestLongPreTokensMatchLibrary(t *testing.T) {
	cases := longCases(60)
	for _, f := range families(t) {
		for _, s := range cases {
			f.checkPiece(t, s)
			f.checkText(t, "long case", s)
		}
	}
}

// TestMergeHeapMatchesScan: the two merges give the same count on every
// pre-token both can take (2 to maxScanMerge bytes), so the threshold
// between them moves nothing.
func TestMergeHeapMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range families(t) {
		rk := f.c.ranks.Load()
		for i := range 20000 {
			a := edgeFragments[i%len(edgeFragments)] + "abcdeeeeeffffllooooooorrssttt  =="
			b := make([]byte, 2+r.IntN(maxScanMerge-1))
			for j := range b {
				b[j] = a[r.IntN(len(a))]
			}
			if scan, heap := rk.mergeScan(string(b)), rk.mergeHeap(string(b)); scan != heap {
				t.Fatalf("%s: %q merges to %d tokens by scan, %d by heap", f.name, b, scan, heap)
			}
		}
	}
}

// TestASCIIClassesMatchLibrary: every ASCII byte between two letters, two
// digits, two spaces and at the start and end, splits and merges as the
// library does (the class table against the library's matcher, byte by
// byte).
func TestASCIIClassesMatchLibrary(t *testing.T) {
	for _, f := range families(t) {
		for b := 0; b < 128; b++ {
			c := string(rune(b))
			for _, s := range []string{c, "a" + c + "b", "A" + c + "B", "1" + c + "2", " " + c + " ", c + c + "x", "x" + c + c, "  " + c, c + "'s"} {
				f.checkPiece(t, s)
				f.checkText(t, "byte", s)
			}
		}
	}
}

// sampleOutputs returns the embedded sample's tool outputs and inputs.
func sampleOutputs(t testing.TB) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(sample.JSONL)))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct{ Input, Output string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Output, r.Input)
	}
	return out
}

// TestCountMatchesLibraryOnSample: every output and input of the embedded
// sample counts as libraryPieces counts it, on a fresh counter and again
// with its lines cached, for both families.
func TestCountMatchesLibraryOnSample(t *testing.T) {
	texts := sampleOutputs(t)
	for _, f := range families(t) {
		for round := range 3 {
			for i, s := range texts {
				f.checkText(t, "sample "+strconv.Itoa(round)+"/"+strconv.Itoa(i), s)
			}
		}
	}
}

// corpusOutputs returns the outputs of ../shared/corpus/*.jsonl, every
// every'th (1 for all), skipping the test when the corpus is absent.
func corpusOutputs(t testing.TB, every int) []string {
	files, _ := filepath.Glob("../../../shared/corpus/*.jsonl")
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	var out []string
	n := 0
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			n++
			if n%every != 0 {
				continue
			}
			var r struct{ Output string }
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Output)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// corpusEvery is the share of the corpus the corpus tests take by default
// (one output in corpusEvery, some 4 MB of 35): OMNI_TOKENS_CORPUS=all
// takes every output (about 13 s of CPU for the two tests).
func corpusEvery() int {
	if os.Getenv("OMNI_TOKENS_CORPUS") == "all" {
		return 1
	}
	return 9
}

// TestCountMatchesLibraryOnCorpus: the shared corpus's outputs count as
// libraryPieces counts them, for both families (a sample of them unless
// OMNI_TOKENS_CORPUS=all).
func TestCountMatchesLibraryOnCorpus(t *testing.T) {
	outs := corpusOutputs(t, corpusEvery())
	fams := families(t)
	for i, s := range outs {
		for _, f := range fams {
			if f.name != DefaultFamily && i%4 != 0 && corpusEvery() != 1 {
				continue // cl100k on a quarter of the sample
			}
			f.checkText(t, "corpus output "+strconv.Itoa(i), s)
		}
	}
	t.Logf("%d outputs checked", len(outs))
}

// TestPiecesMatchLibraryOnCorpus: every distinct ASCII piece of the shared
// corpus's outputs (a sample of them unless OMNI_TOKENS_CORPUS=all) splits
// as the library's pattern splits it and each pre-token merges to as many
// tokens as the library's encoding gives it, for o200k.
func TestPiecesMatchLibraryOnCorpus(t *testing.T) {
	every := corpusEvery()
	if every > 1 {
		every *= 3
	}
	outs := corpusOutputs(t, every)
	f := families(t)[slices.Index(Names(), DefaultFamily)]
	seen := make(map[string]bool)
	for _, s := range outs {
		for rest := s; rest != ""; {
			end := pieceEnd(rest)
			p := rest[:end]
			rest = rest[end:]
			if seen[p] || !isASCII(p) {
				continue
			}
			seen[p] = true
			f.checkPiece(t, p)
		}
	}
	t.Logf("%d distinct ASCII pieces checked", len(seen))
}

// FuzzCountMatchesLibrary: for any string, and for the same string with
// every byte's high bit cleared (so most inputs exercise the ASCII path),
// Count equals libraryPieces for both families.
func FuzzCountMatchesLibrary(f *testing.F) {
	for _, s := range edgeCases(0)[:200] {
		f.Add(s)
	}
	f.Add("héllo wörld\n\xff\xfe bad utf8 'S")
	f.Add("2026-12-02T06:01:01.123Z INFO server request id=3fa2 path=/api/v1/items/7 status=200 dur=0.123ms\n")
	fams := families(f)
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := range b {
			b[i] &= 0x7f
		}
		for _, fam := range fams {
			fam.checkText(t, "fuzz", s)
			fam.checkText(t, "fuzz ascii", string(b))
		}
	})
}

// TestCountConcurrentWhileBuilding: goroutines counting on a fresh counter
// (its rank table building meanwhile, so some pieces go to the library and
// some are counted here) all get libraryPieces' counts. Run under -race
// it also checks the table's hand-over.
func TestCountConcurrentWhileBuilding(t *testing.T) {
	texts := sampleOutputs(t)
	fam := families(t)
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = libraryPieces(fam[slices.Index(Names(), DefaultFamily)].codec, s)
	}
	c, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			for i := range texts {
				j := (i + g*37) % len(texts)
				if got := c.Count(texts[j]); got != want[j] {
					errs <- "text " + strconv.Itoa(j) + ": " + strconv.Itoa(got) + " != " + strconv.Itoa(want[j])
					return
				}
			}
			errs <- ""
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	<-c.built
	if c.ranks.Load() == nil {
		t.Fatal("the rank table did not build")
	}
}

// TestSplitMatchesLibraryQuirks: the two places where the library's
// compiled matcher departs from a textbook backtracking engine, spelled
// out: a whitespace run is given back to its first line end, and a DEL
// byte is matched by no alternative (skipped, uncounted). Red when either
// is "fixed" here, or when a library upgrade changes them (then the split
// must follow the library again).
func TestSplitMatchesLibraryQuirks(t *testing.T) {
	for _, f := range families(t) {
		for s, want := range map[string][]string{
			" \n \n":   {" \n", " \n"},
			"a \r\n\n": {"a", " \r\n\n"},
			"\t\n x":   {"\t\n", " x"},
			"a\x7fb":   {"a", "b"},
			"\x7f":     nil,
		} {
			if got := f.ourSplit(s); !slices.Equal(got, want) {
				t.Errorf("%s: split of %q = %q, want %q", f.name, s, got, want)
			}
			if lib := f.librarySplit(t, s); !slices.Equal(lib, want) {
				t.Errorf("%s: the library splits %q into %q, not %q: its matcher changed", f.name, s, lib, want)
			}
		}
	}
}
