package tokens

import (
	"os"
	"testing"

	"github.com/omnictx/omni/internal/sharedtest"
)

// TestMain prints one line when tests skipped for want of ../shared.
func TestMain(m *testing.M) { os.Exit(sharedtest.Main(m)) }
