package main

import (
	"os"
	"testing"

	"github.com/omnictx/omni/internal/testbin"
)

// TestMain removes the one build of omni the package's tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
