package pipeline

import (
	"testing"

	"github.com/omnictx/omni/events"
)

// TestReasonsAreTheLogsWords: the reasons Decide returns are persisted as
// Emitted.Reason, and readers (bench, diff, the stats) look for them
// through the events constants; both spellings must stay one.
func TestReasonsAreTheLogsWords(t *testing.T) {
	for got, want := range map[string]events.Reason{
		reasonFailed:     events.ReasonFailed,
		reasonFloor:      events.ReasonFloor,
		reasonStructured: events.ReasonStructuredPrefix,
		reasonNoRun:      events.ReasonNoRun,
	} {
		if got != string(want) {
			t.Errorf("pipeline writes %q, events declares %q", got, want)
		}
	}
}
