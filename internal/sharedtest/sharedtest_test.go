package sharedtest

import (
	"strings"
	"testing"
)

// TestSummary: no skip, no line; otherwise one line with the count and how
// to get ../shared, naming no absolute path.
func TestSummary(t *testing.T) {
	if s := Summary(0); s != "" {
		t.Errorf("Summary(0) = %q", s)
	}
	s := Summary(3)
	if !strings.HasPrefix(s, "shared material absent: 3 test(s) skipped. ../shared is") || strings.Contains(s, "\n") ||
		strings.Contains(s, "/work") || strings.Contains(s, "/home") {
		t.Errorf("Summary(3) = %q", s)
	}
	t.Run("skip", func(t *testing.T) { Skip(t, "../shared/corpus") })
	if Skipped() != 1 {
		t.Errorf("Skipped() = %d after one Skip", Skipped())
	}
}
