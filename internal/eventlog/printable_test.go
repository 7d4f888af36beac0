package eventlog

import (
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// TestSummaryPrintable: a session or agent id holding a newline or an
// escape sequence prints as one line without control bytes.
func TestSummaryPrintable(t *testing.T) {
	e := Entry{Event: events.Event{Seq: 3, Kind: events.KindEmitted, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Session: "s1\n4.0 2026-01-01T00:00:00Z emitted forged", Agent: "a\x1b]52;c;ZWNobyBwd24=\a\x1b[2J",
		Emitted: &events.Emitted{Tool: "Bash", Source: "ls\x1b[31m"}}}
	got := Summary(e)
	if strings.ContainsAny(got, "\n\r\x1b\a") {
		t.Errorf("Summary holds control bytes: %q", got)
	}
	if !strings.Contains(got, `s1\n4.0`) || !strings.Contains(got, `\x1b]52`) {
		t.Errorf("Summary does not show the escaped id: %q", got)
	}
}
