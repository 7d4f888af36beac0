package tokens

import (
	"hash/maphash"
	"strconv"
	"strings"
	"testing"
)

// TestCountSumsLines: a text counts as the sum of its pieces (cut at line
// ends and before space-led words), a cached piece counts the same again,
// and an unknown family is refused by name. Red when Count drops the last
// piece without an ending, or counts bytes instead of tokens.
func TestCountSumsLines(t *testing.T) {
	c, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "o200k_base" {
		t.Fatalf("default encoding %q", c.Name())
	}
	a, b := "hello world\n", "  return nil, err"
	text := a + b
	want := c.line("hello") + c.line(" world\n") + c.line("  return") + c.line(" nil,") + c.line(" err")
	if got := c.Count(text); got != want || got == 0 || got >= len(text) {
		t.Fatalf("Count = %d, want %d (lines), under %d bytes", got, want, len(text))
	}
	if got := c.Count(text); got != want {
		t.Fatalf("cached Count = %d, want %d", got, want)
	}
	if c.Count("") != 0 {
		t.Fatal("empty text counts tokens")
	}
	if _, err := New("claude-9"); err == nil || !strings.Contains(err.Error(), "o200k") {
		t.Fatalf("unknown family: %v", err)
	}
	cl, err := New("cl100k")
	if err != nil || cl.Name() != "cl100k_base" {
		t.Fatalf("cl100k: %v %v", cl, err)
	}
}

// BenchmarkCount measures a 16 KB output counted cold and then warm (every
// line cached), side by side. Cold is a new Counter's first Count and its
// rank table's build, waited for (the library's vocabulary loads once per
// process, so after the first iteration it is the codec's setup, the
// count and the build).
func BenchmarkCount(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 16<<10; i++ {
		sb.WriteString("=== RUN   TestLedgerFold/case_")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString(" --- PASS (0.00s) ok github.com/omnictx/omni/pipeline\n")
	}
	text := sb.String()
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, _ := New("")
			c.Count(text)
			<-c.built
		}
	})
	b.Run("warm", func(b *testing.B) {
		c, _ := New("")
		c.Count(text)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c.Count(text)
		}
	})
}

// TestCountCachedLines: a text counts the same whether its lines are
// cached whole or not: on a fresh counter, again with its lines cached,
// and against the sum of its pieces on another counter. Red when a cached
// line is stored as anything but its pieces' sum, or a piece is mistaken
// for a line.
func TestCountCachedLines(t *testing.T) {
	long := strings.Repeat("word ", maxCachedLine/4) + "\n"
	text := "go test ./...\nok  \tpkg/a\t0.01s\nok  \tpkg/a\t0.01s\n\n  indented  line\nok\nok  \tpkg/a\t0.01s" + "\n" + long + long + "ok  \tpkg/a"
	ref := built(t, "")
	want := 0
	for rest := text; rest != ""; {
		end := pieceEnd(rest)
		want += ref.line(rest[:end])
		rest = rest[end:]
	}
	c := built(t, "")
	for round := range 3 {
		if got := c.Count(text); got != want {
			t.Fatalf("round %d: Count = %d, want %d (its pieces)", round, got, want)
		}
		if got := c.Count("ok  \tpkg/a\t0.01s\n"); got != ref.Count("ok  \tpkg/a\t0.01s\n") {
			t.Fatalf("round %d: a cached line alone = %d", round, got)
		}
	}
	if _, cached := c.lookup(maphash.String(c.seed, "ok  \tpkg/a\t0.01s\n"), "ok  \tpkg/a\t0.01s\n"); !cached {
		t.Fatal("a repeated line of several pieces is not cached whole")
	}
	if _, cached := c.lookup(maphash.String(c.seed, long), long); cached {
		t.Fatal("a line over maxCachedLine is cached whole")
	}
}

// TestCacheBytesBounded: the cache's keys never hold more than
// maxCachedBytes, however many distinct long entries are stored.
func TestCacheBytesBounded(t *testing.T) {
	c, _ := New("")
	line := strings.Repeat("x", maxCachedLine) + "\n"
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < 3*maxCachedBytes/len(line); i++ {
		l := strconv.Itoa(i) + line
		c.store(maphash.String(c.seed, l), l, 1)
		if c.cachedBytes > maxCachedBytes {
			t.Fatalf("after %d entries the cache holds %d bytes, over %d", i+1, c.cachedBytes, maxCachedBytes)
		}
	}
	sum := 0
	for _, e := range c.cache {
		sum += len(e.text)
	}
	if sum != c.cachedBytes || sum == 0 {
		t.Fatalf("cachedBytes = %d, the texts hold %d bytes", c.cachedBytes, sum)
	}
}

// built returns the Counter of family with its rank table built.
func built(t testing.TB, family string) *Counter {
	t.Helper()
	c, err := New(family)
	if err != nil {
		t.Fatal(err)
	}
	c.load()
	<-c.built
	if c.ranks.Load() == nil {
		t.Fatal("the rank table did not build")
	}
	return c
}

// TestCacheBytesBoundedByOneText: one text longer than maxCachedBytes (a
// line of a minified bundle with a byte over 0x7f and no space, counted
// by the library as one piece) is not kept, so the cache's texts stay
// within their bound; shorter ones still are.
func TestCacheBytesBoundedByOneText(t *testing.T) {
	c, _ := New("")
	c.mu.Lock()
	defer c.mu.Unlock()
	small := "é small piece"
	c.store(maphash.String(c.seed, small), small, 3)
	big := strings.Repeat("é", maxCachedBytes/2+1)
	c.store(maphash.String(c.seed, big), big, 7)
	if c.cachedBytes > maxCachedBytes {
		t.Fatalf("after a text of %d bytes the cache holds %d bytes, over %d", len(big), c.cachedBytes, maxCachedBytes)
	}
	if _, ok := c.lookup(maphash.String(c.seed, small), small); !ok {
		t.Fatal("storing a text too long to keep emptied the cache")
	}
}
