//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"syscall"
)

// keepDrained starts a detached copy of omni (`omni pipe --drain`) that
// reads in to its end and drops it, so a process the runner left behind,
// still writing to the pipe after the filter printed its text, never
// meets a broken pipe. A failure to start it is only logged.
func keepDrained(in io.Reader) {
	f, ok := in.(*os.File)
	if !ok {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	c := exec.Command(self, "pipe", drainArg)
	c.Stdin = f
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		homeLogf(omniHome())("pipe: drain: %v", err)
		return
	}
	_ = c.Process.Release()
}
