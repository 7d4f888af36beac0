package tokens

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// libraryCounter is Count as it was before ASCII pieces were split and
// merged here: every piece not cached goes to the library's encoder, and
// every piece and line counted is cached (same bounds as Counter's). The
// benchmarks run it beside Counter.
type libraryCounter struct {
	codec  tokenizer.Codec
	mu     sync.Mutex
	cache  map[string]int
	cached int
}

func newLibraryCounter(tb testing.TB, enc tokenizer.Encoding) *libraryCounter {
	codec, err := tokenizer.Get(enc)
	if err != nil {
		tb.Fatal(err)
	}
	return &libraryCounter{codec: codec, cache: make(map[string]int, 1024)}
}

func (c *libraryCounter) Count(text string) int {
	n := 0
	c.mu.Lock()
	for len(text) > 0 {
		le := strings.IndexByte(text, '\n') + 1
		if le == 0 {
			le = len(text)
		}
		line := text[:le]
		text = text[le:]
		if k, ok := c.cache[line]; ok {
			n += k
			continue
		}
		ln, pieces := 0, 0
		for rest := line; len(rest) > 0; pieces++ {
			end := pieceEnd(rest)
			piece := rest[:end]
			rest = rest[end:]
			k, ok := c.cache[piece]
			if !ok {
				c.mu.Unlock()
				k, _ = c.codec.Count(piece)
				c.mu.Lock()
				c.store(piece, k)
			}
			ln += k
		}
		if pieces > 1 && len(line) <= maxCachedLine {
			c.store(line, ln)
		}
		n += ln
	}
	c.mu.Unlock()
	return n
}

func (c *libraryCounter) store(l string, k int) {
	if len(c.cache) >= maxCached || c.cached+len(l) > maxCachedBytes {
		clear(c.cache)
		c.cached = 0
	}
	c.cache[strings.Clone(l)] = k
	c.cached += len(l)
}

// logLines returns about size bytes of new log-like lines (a timestamp, a
// level, a request id and path, a duration) from r: every call's text is
// new, while words like "INFO" and "status=200" repeat across calls, as a
// service's log does.
func logLines(r *rand.Rand, size int) string {
	var sb strings.Builder
	for j := 0; sb.Len() < size; j++ {
		fmt.Fprintf(&sb, "2026-12-02T06:%02d:%02d.123Z INFO server request id=%x path=/api/v1/items/%d status=200 dur=%.3fms\n",
			j%60, j%60, r.Uint64()>>24, j, r.Float64())
	}
	return sb.String()
}

// sampleText returns about size bytes of the embedded sample's outputs,
// whole lines, starting at the skip'th line (wrapping around).
func sampleText(tb testing.TB, skip, size int) string {
	var lines []string
	for _, s := range sampleOutputs(tb) {
		lines = append(lines, strings.SplitAfter(s, "\n")...)
	}
	var sb strings.Builder
	for i := skip; sb.Len() < size; i++ {
		sb.WriteString(lines[i%len(lines)])
	}
	return sb.String()
}

// BenchmarkCountLibraryVsOurs counts 16 KB texts with the library's
// encoder on every piece (library) and with Count (ours), side by side, in
// three cases: new-log-lines, each call 16 KB of log lines never seen
// before (the daemon's usual case: an agent's tool outputs are mostly new);
// repeated, the same 16 KB each call (every line cached after the first);
// sample-cold, 16 KB of the embedded sample's real outputs on an empty
// cache each call (the counter's tables loaded).
func BenchmarkCountLibraryVsOurs(b *testing.B) {
	const size = 16 << 10
	type counter interface{ Count(string) int }
	lib := newLibraryCounter(b, tokenizer.O200kBase)
	ours, _ := New("")
	ours.load()
	<-ours.built
	// make returns a counter of the implementation with an empty cache,
	// its tables loaded.
	impls := []struct {
		name string
		make func() counter
	}{
		{"library", func() counter { return &libraryCounter{codec: lib.codec, cache: make(map[string]int, 1024)} }},
		{"ours", func() counter {
			c := &Counter{enc: ours.enc, codec: ours.codec, cache: make(map[uint64]cached, 1024),
				seed: ours.seed, seen: new([seenSlots]uint64)}
			c.ranks.Store(ours.ranks.Load())
			c.once.Do(func() {})
			return c
		}},
	}
	for _, impl := range impls {
		b.Run("new-log-lines/"+impl.name, func(b *testing.B) {
			c := impl.make()
			r := rand.New(rand.NewPCG(1, 2))
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				text := logLines(r, size)
				b.StartTimer()
				c.Count(text)
			}
		})
	}
	for _, impl := range impls {
		b.Run("repeated/"+impl.name, func(b *testing.B) {
			c := impl.make()
			text := logLines(rand.New(rand.NewPCG(1, 2)), size)
			c.Count(text)
			c.Count(text)
			b.SetBytes(size)
			for b.Loop() {
				c.Count(text)
			}
		})
	}
	text := sampleText(b, 0, size)
	for _, impl := range impls {
		b.Run("sample-cold/"+impl.name, func(b *testing.B) {
			c := impl.make()
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				c = impl.make()
				b.StartTimer()
				c.Count(text)
			}
		})
	}
	for _, impl := range impls {
		b.Run("sample-warm/"+impl.name, func(b *testing.B) {
			c := impl.make()
			c.Count(text)
			c.Count(text)
			b.SetBytes(size)
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

// BenchmarkLoadRanks measures the ASCII rank table's one-time build per
// family (the library's own vocabulary is loaded once per process before
// it, and not counted): time per build, and the heap the table keeps
// (retained-B/op, measured after a collection).
func BenchmarkLoadRanks(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			codec, err := tokenizer.Get(Families[name])
			if err != nil {
				b.Fatal(err)
			}
			codec.Count("load the vocabulary")
			var r *ranks
			var before, after runtime.MemStats
			for b.Loop() {
				b.StopTimer()
				r = nil
				codec, _ = tokenizer.Get(Families[name]) // a fresh reverse vocabulary too
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				r = loadRanks(codec)
				b.StopTimer()
				codec = nil
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.StartTimer()
			}
			b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "retained-B/op")
			b.ReportMetric(float64(r.long.n), "long-tokens")
		})
	}
}
