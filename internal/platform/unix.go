//go:build unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Unix is the portable Unix implementation: nothing in it reads /proc, so
// it is what macOS and the BSDs run, and what Linux tests force with
// Use(Portable()).
type Unix struct{}

// Portable returns the implementation of this system family that needs no
// /proc (Unix), for tests of the paths other Unixes take.
func Portable() OS { return Unix{} }

// Name is "unix".
func (Unix) Name() string { return "unix" }

// Alive: kill(pid, 0) succeeds, or fails only for want of permission.
func (Unix) Alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Stopped cannot be told without /proc: false.
func (Unix) Stopped(int) bool { return false }

// Terminate sends SIGTERM.
func (Unix) Terminate(pid int) error { return unix.Kill(pid, unix.SIGTERM) }

// Kill sends SIGKILL.
func (Unix) Kill(pid int) error { return unix.Kill(pid, unix.SIGKILL) }

// LockHolder is the pid its holder recorded beside the lock, when the lock
// is held (flock(2) probe) and that process is alive.
func (u Unix) LockHolder(path string) int { return pidFileHolder(u, path, flockHeld) }

// flockHeld reports whether another open file description holds an
// exclusive or shared flock(2) lock on path (the probe takes it for an
// instant when it is free).
func flockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// Detach starts c in a new session (setsid).
func (Unix) Detach(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setsid = true
}

// Group starts c as the leader of a new process group (setpgid).
func (Unix) Group(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
}

// SignalGroup sends sig to the process group -pid.
func (Unix) SignalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return errors.New("platform: not a Unix signal")
	}
	return syscall.Kill(-pid, s)
}

// KillGroup sends SIGKILL to the process group -pid.
func (Unix) KillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// FreeBytes is statfs's f_bavail × f_bsize (freeBytes, per system).
func (Unix) FreeBytes(path string) (uint64, error) { return freeBytes(path) }

// OwnedByOther compares the file's owner (fi's) with this process's
// effective user.
func (Unix) OwnedByOther(_ string, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != os.Geteuid()
}

// Writable is access(2) with W_OK.
func (Unix) Writable(path string) error {
	err := unix.Access(path, unix.W_OK)
	if errors.Is(err, unix.ENOENT) {
		return fs.ErrNotExist
	}
	return err
}

// Shell is bash -c where bash is on PATH, else sh -c (ChooseShell).
func (Unix) Shell() (string, string) {
	return ChooseShell("linux", systemFinder()), "-c"
}

// PeakRSS cannot be read for another process without /proc: 0.
func (Unix) PeakRSS(int) int64 { return 0 }

// TermSignal is the signal that asks a process group to stop (SIGTERM).
var TermSignal os.Signal = syscall.SIGTERM
