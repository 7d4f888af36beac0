// Package platform is every difference between the operating systems omni
// runs on (Linux, macOS and the other Unixes, Windows) behind one small
// interface, OS, with one implementation per build-tagged file:
//
//   - unix.go: the portable Unix implementation (kill(2), setsid and
//     process groups, statfs, access(2), the file's owner), used as is on
//     macOS and the BSDs;
//   - linux.go: the portable one plus what only /proc can tell (a stopped
//     process, the holder of a lock, a process's peak memory); no other
//     file of the module reads /proc;
//   - windows.go: processes by handle, a new process group and
//     DETACHED_PROCESS for the daemon, taskkill for a command's tree,
//     GetDiskFreeSpaceEx, a file's owner SID, and PowerShell or cmd where
//     bash is absent.
//
// Current is the implementation of the running system; tests on Linux
// run the portable Unix one too (Use(Portable())), so the paths macOS
// takes are tested where there is no Mac. It imports the standard library
// and golang.org/x/sys only.
package platform

import (
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
)

// OS is what omni needs from the operating system where the systems
// differ. Every method is safe for concurrent use and never panics; "when
// it cannot tell" answers are the safe ones (a process is not known to
// be stopped, a lock has no known holder).
type OS interface {
	// Name names the implementation ("linux", "unix", "windows").
	Name() string
	// Alive reports whether process pid exists (a process of another
	// user counts).
	Alive(pid int) bool
	// Stopped reports whether process pid is stopped (SIGSTOP, or
	// traced): it cannot answer, and waiting for it is pointless. False
	// when it cannot tell.
	Stopped(pid int) bool
	// Terminate asks process pid to stop (SIGTERM; on Windows, where a
	// detached process has no console to signal, it ends it at once).
	Terminate(pid int) error
	// Kill ends process pid at once (SIGKILL, TerminateProcess).
	Kill(pid int) error
	// LockHolder returns the process that holds the exclusive lock on the
	// file at path (a store lock taken by events/jetstream, which records
	// its pid beside it in path+".pid"), or 0 when none does or it cannot
	// tell.
	LockHolder(path string) int
	// Detach makes c start in a session (Unix) or process group and
	// console (Windows) of its own, so it outlives the caller and the
	// caller's terminal or job.
	Detach(c *exec.Cmd)
	// Group makes c the leader of a new process group, so SignalGroup and
	// KillGroup reach the processes it starts too.
	Group(c *exec.Cmd)
	// SignalGroup sends sig to the process group that Group gave the
	// process pid (on Windows only os.Kill reaches the group, as
	// KillGroup; other signals go to pid alone).
	SignalGroup(pid int, sig os.Signal) error
	// KillGroup ends the process group of pid at once.
	KillGroup(pid int) error
	// FreeBytes returns the bytes this user may still write on the file
	// system holding path.
	FreeBytes(path string) (uint64, error)
	// OwnedByOther reports whether the file at path (fi, its os.Stat)
	// belongs to another user than this process's: on Unix its owner uid
	// is not the effective uid; on Windows its owner SID is neither the
	// process token's user nor the token's default owner (the
	// Administrators group, for an elevated process). False when the
	// system does not say (a file system without owners, an error).
	OwnedByOther(path string, fi fs.FileInfo) bool
	// Writable returns nil when this user may create files in the
	// directory at path (or write the file there), fs.ErrNotExist when it
	// does not exist, and another error otherwise.
	Writable(path string) error
	// Shell returns the shell omni exec and omni_run run a command line
	// with, and its flag (ShellFlag): ChooseShell's for this system, bash
	// where found, else sh on Unix; on Windows Git Bash (never WSL's),
	// else PowerShell, else cmd. ShellCommand runs a line with it.
	Shell() (path string, flag string)
	// PeakRSS returns the peak resident memory of process pid in bytes,
	// 0 when it cannot tell.
	PeakRSS(pid int) int64
}

// current is the implementation a test set with Use; nil means the
// running system's (native), so loading the package runs no code.
var current atomic.Pointer[OS]

// Current returns the implementation in use: the running system's, or the
// one a test set with Use.
func Current() OS {
	if o := current.Load(); o != nil {
		return *o
	}
	return native()
}

// Use makes o the implementation in use and returns the function that
// restores the previous one (tests).
func Use(o OS) (restore func()) {
	prev := current.Swap(&o)
	return func() { current.Store(prev) }
}

// The functions below call Current's method of the same name.

// Alive reports whether process pid exists (OS.Alive).
func Alive(pid int) bool { return pid > 0 && Current().Alive(pid) }

// Stopped reports whether process pid is stopped (OS.Stopped).
func Stopped(pid int) bool { return pid > 0 && Current().Stopped(pid) }

// Terminate asks process pid to stop (OS.Terminate).
func Terminate(pid int) error { return Current().Terminate(pid) }

// Kill ends process pid at once (OS.Kill).
func Kill(pid int) error { return Current().Kill(pid) }

// LockHolder returns the holder of the lock on path (OS.LockHolder).
func LockHolder(path string) int { return Current().LockHolder(path) }

// Detach starts c detached from the caller (OS.Detach).
func Detach(c *exec.Cmd) { Current().Detach(c) }

// Group starts c as a process group leader (OS.Group).
func Group(c *exec.Cmd) { Current().Group(c) }

// SignalGroup signals the process group of pid (OS.SignalGroup).
func SignalGroup(pid int, sig os.Signal) error { return Current().SignalGroup(pid, sig) }

// KillGroup ends the process group of pid (OS.KillGroup).
func KillGroup(pid int) error { return Current().KillGroup(pid) }

// FreeBytes returns the space left for this user under path (OS.FreeBytes).
func FreeBytes(path string) (uint64, error) { return Current().FreeBytes(path) }

// OwnedByOther reports a file of another user (OS.OwnedByOther).
func OwnedByOther(path string, fi fs.FileInfo) bool { return Current().OwnedByOther(path, fi) }

// Writable checks that this user may write at path (OS.Writable).
func Writable(path string) error { return Current().Writable(path) }

// Shell returns the shell and its flag (OS.Shell).
func Shell() (path string, flag string) { return Current().Shell() }

// ShellFlag returns the flag that makes the shell at path run one command
// line: /C for cmd, -Command for PowerShell, -c for every other (a shell
// of either system's path, any case). ShellCommand is how omni runs one.
func ShellFlag(path string) string {
	switch shellKind(path) {
	case "cmd":
		return "/C"
	case "powershell":
		return "-Command"
	}
	return "-c"
}

// systemFinder is ShellFinder on this system.
func systemFinder() ShellFinder {
	return ShellFinder{Getenv: os.Getenv, LookPath: exec.LookPath, Exists: func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}}
}

// PeakRSS returns process pid's peak resident memory (OS.PeakRSS).
func PeakRSS(pid int) int64 { return Current().PeakRSS(pid) }

// PIDFile is the file beside a lock file at path where the holder records
// its pid (WriteHolder), for the systems where the lock itself does not
// say who holds it.
func PIDFile(path string) string { return path + ".pid" }

// WriteHolder records this process as the holder of the lock on path, in
// PIDFile(path). Errors: the file's.
func WriteHolder(path string) error {
	return os.WriteFile(PIDFile(path), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// pidFileHolder is the portable LockHolder: the pid recorded in
// PIDFile(path), when the lock is held now (locked) and that process is
// alive. A holder that died released its lock with it, so a stale file
// names no one.
func pidFileHolder(o OS, path string, locked func(string) bool) int {
	b, err := os.ReadFile(PIDFile(path))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !o.Alive(pid) || !locked(path) {
		return 0
	}
	return pid
}
