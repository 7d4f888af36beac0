//go:build !windows

package platform

import "os/exec"

// setCmdLine: a Unix program receives its arguments as a list; no raw
// command line to set.
func setCmdLine(*exec.Cmd, string) {}
