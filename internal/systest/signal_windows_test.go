//go:build windows

package systest

import (
	"errors"

	"github.com/omnictx/omni/internal/platform"
)

// Windows has no stopped state to put a process in.
var errNoPause = errors.New("a process cannot be paused on Windows")

func pauseProcess(int) error    { return errNoPause }
func resumeProcess(int) error   { return errNoPause }
func termProcess(pid int) error { return platform.Terminate(pid) }
