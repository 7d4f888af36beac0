package tokens

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestCountMemoryBounded: a counter that counts OMNI_TOKENS_MEMORY
// megabytes (skipped when unset; 1024 is the daemon-sized run) of
// distinct lines (ASCII, non-ASCII with several pieces, long non-ASCII
// pieces, lines over maxCachedLine) keeps its live heap under a bound
// that does not grow with what it counted: the cache's entries and bytes
// bounds, the seen table and the rank table. It logs the heap after every
// 64 MB.
func TestCountMemoryBounded(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("OMNI_TOKENS_MEMORY"))
	if mb <= 0 {
		t.Skip("set OMNI_TOKENS_MEMORY=<megabytes> to count that much distinct text and watch the heap")
	}
	c := built(t, "")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	var sb strings.Builder
	done, next, peak := 0, 64<<20, uint64(0)
	for i := 0; done < mb<<20; i++ {
		sb.Reset()
		for j := 0; sb.Len() < 16<<10; j++ {
			n := strconv.Itoa(i*1000 + j)
			switch j % 4 {
			case 0:
				sb.WriteString("INFO request id=" + n + " path=/api/v1/items/" + n + " status=200\n")
			case 1:
				sb.WriteString("héllo wörld " + n + " ünïcode " + n + "\n")
			case 2:
				sb.WriteString("日本語" + strings.Repeat(n, 40) + "é\n")
			default:
				sb.WriteString(strings.Repeat("x"+n+" ", 1200/(len(n)+2)+1) + "\n")
			}
		}
		c.Count(sb.String())
		done += sb.Len()
		if done >= next {
			h := heap()
			peak = max(peak, h)
			t.Logf("%4d MB counted: heap %6.1f MB (%d cache entries, %.1f MB of texts)", done>>20, float64(h)/(1<<20), len(c.cache), float64(c.cachedBytes)/(1<<20))
			next += 64 << 20
		}
	}
	if grown := int64(peak) - int64(base); grown > 160<<20 {
		t.Fatalf("the heap grew by %d MB counting %d MB", grown>>20, mb)
	}
}
