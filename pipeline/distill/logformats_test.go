package distill

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// TestCollapseCommonLogFormats: logs of Go's log package, syslog, an
// access log and docker compose (levelled or not) collapse their routine
// runs, keeping the first and last line of each run, every warning, error
// and failure entry, and every 4xx/5xx request. Red when plainLogEntry
// recognises none of them (nothing collapses), or when it treats an
// alarming entry as routine (the error line is folded).
func TestCollapseCommonLogFormats(t *testing.T) {
	gen := func(n int, line func(i int) string, alarm string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i == n/2 {
				b.WriteString(alarm + "\n")
			}
			b.WriteString(line(i) + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name, text, keep string
	}{
		{"go log", gen(60, func(i int) string {
			return fmt.Sprintf("2026/12/01 10:41:%02d handled request id=%d in %dms", i%60, i, i%7)
		}, "2026/12/01 10:41:30 upstream connect error: connection refused"), "upstream connect error: connection refused"},
		{"go log, no level, failure word", gen(60, func(i int) string {
			return fmt.Sprintf("2026/12/01 10:41:%02d.123456 main.go:42: cache refreshed %d keys", i%60, i)
		}, "2026/12/01 10:41:30.000001 main.go:50: sync of shard 3 failed"), "sync of shard 3 failed"},
		{"syslog", gen(60, func(i int) string {
			return fmt.Sprintf("Dec  1 10:41:%02d web1 nginx[812]: worker %d started", i%60, i)
		}, "Dec  1 10:41:30 web1 kernel: Out of memory: Killed process 812 (nginx)"), "Out of memory: Killed process 812"},
		{"access log", gen(60, func(i int) string {
			return fmt.Sprintf(`10.0.0.%d - - [01/Dec/2026:10:41:%02d +0000] "GET /api/items/%d HTTP/1.1" 200 512 "-" "curl/8.5"`, i%9, i%60, i)
		}, `10.0.0.7 - - [01/Dec/2026:10:41:30 +0000] "POST /api/items HTTP/1.1" 500 87 "-" "curl/8.5"`), `"POST /api/items HTTP/1.1" 500 87`},
		{"compose python", gen(60, func(i int) string {
			return fmt.Sprintf("api-1  | 2026-12-01 10:41:%02d,884 - app.worker - INFO - job %d done", i%60, i)
		}, "api-1  | 2026-12-01 10:41:30,884 - app.worker - WARNING - job queue is 90% full"), "WARNING - job queue is 90% full"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := textline.SplitLines(nil, c.text)
			out, folded, ok := Collapse(c.text, lines)
			if !ok || folded < 50 {
				t.Fatalf("collapsed %v, %d lines folded:\n%s", ok, folded, out)
			}
			if !strings.Contains(out, c.keep) {
				t.Fatalf("the alarming entry was folded:\n%s", out)
			}
			first := c.text[:strings.IndexByte(c.text, '\n')+1]
			last := c.text[strings.LastIndexByte(strings.TrimSuffix(c.text, "\n"), '\n')+1:]
			if !strings.HasPrefix(out, first) || !strings.HasSuffix(out, last) {
				t.Fatalf("first or last line lost:\n%s", out)
			}
			if !strings.Contains(out, " log lines collapsed: ") {
				t.Fatalf("no log marker:\n%s", out)
			}
		})
	}
	// A plain line with a date is no log entry of these formats.
	for _, l := range []string{"2026/12/01 is the release date", "Dec 1 2026 release", `x [a] "b" 200`} {
		if plainLogEntry(l) != "" {
			t.Errorf("%q read as a log entry", l)
		}
	}
}
