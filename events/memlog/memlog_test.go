package memlog_test

import (
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/eventstest"
	"github.com/omnictx/omni/events/memlog"
)

func TestConformance(t *testing.T) {
	eventstest.Run(t, func(t *testing.T) events.Log { return memlog.New() })
}
