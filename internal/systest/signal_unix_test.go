//go:build unix

package systest

import "syscall"

// pauseProcess stops process pid (SIGSTOP); resumeProcess lets it run
// again (SIGCONT); termProcess asks it to stop (SIGTERM).
func pauseProcess(pid int) error  { return syscall.Kill(pid, syscall.SIGSTOP) }
func resumeProcess(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }
func termProcess(pid int) error   { return syscall.Kill(pid, syscall.SIGTERM) }
