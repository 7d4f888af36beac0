//go:build windows

package platform

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/omnictx/omni/internal/fileowner"
)

// Windows is the Windows implementation: processes by handle, process
// groups by CREATE_NEW_PROCESS_GROUP, a command's tree ended by taskkill,
// GetDiskFreeSpaceEx, LockFileEx, and PowerShell or cmd where bash is
// absent.
type Windows struct{}

// native is the Windows implementation.
func native() OS { return Windows{} }

// Portable is the Windows implementation itself (it reads no /proc).
func Portable() OS { return Windows{} }

// Name is "windows".
func (Windows) Name() string { return "windows" }

// stillActive is GetExitCodeProcess's code for a running process.
const stillActive = 259

// Alive opens the process and checks that it has not exited.
func (Windows) Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// Stopped: Windows has no stopped state omni can see: false.
func (Windows) Stopped(int) bool { return false }

// Terminate ends the process at once: a detached process has no console
// a CTRL_BREAK could reach.
func (w Windows) Terminate(pid int) error { return w.Kill(pid) }

// Kill is TerminateProcess.
func (Windows) Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// LockHolder is the pid its holder recorded beside the lock, when the lock
// is held (LockFileEx probe of the byte gofrs/flock locks) and that
// process is alive.
func (w Windows) LockHolder(path string) int { return pidFileHolder(w, path, lockHeld) }

// lockHeld reports whether another handle holds the lock on the first byte
// of path (where gofrs/flock, which events/jetstream uses, locks).
func lockHeld(path string) bool {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		return errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING)
	}
	_ = windows.UnlockFileEx(h, 0, 1, 0, ol)
	return false
}

// Detach starts c in a new process group with no console, so closing the
// caller's window or job does not end it.
func (Windows) Detach(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS
	c.SysProcAttr.HideWindow = true
}

// Group starts c in a new process group.
func (Windows) Group(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// SignalGroup: os.Kill ends the tree (KillGroup); an interrupt is sent
// as CTRL_BREAK to the group; any other signal is not delivered.
func (w Windows) SignalGroup(pid int, sig os.Signal) error {
	switch sig {
	case os.Kill:
		return w.KillGroup(pid)
	case os.Interrupt:
		return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
	}
	return errors.New("platform: signal not delivered on Windows")
}

// KillGroup ends pid and every process it started (taskkill /T /F).
func (w Windows) KillGroup(pid int) error {
	c := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid))
	w.Detach(c)
	if err := c.Run(); err != nil {
		return w.Kill(pid)
	}
	return nil
}

// FreeBytes is GetDiskFreeSpaceEx's bytes available to this user.
func (Windows) FreeBytes(path string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, err
	}
	return free, nil
}

// OwnedByOther reads the owner SID of the file at path and compares it
// with this process's own (fileowner.OtherAccount). False when the owner
// cannot be read (a FAT or network volume without one, an error): the
// home's other checks still apply.
func (Windows) OwnedByOther(path string, _ fs.FileInfo) bool { return fileowner.OtherAccount(path) }

// Writable creates and removes a file in the directory at path (or opens
// the file at path for writing).
func (Windows) Writable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
		return err
	}
	if !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(path, ".omni-write-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Shell is ChooseShell's on Windows: Git Bash (never WSL's bash), else
// PowerShell, else cmd; with ShellFlag's flag.
func (Windows) Shell() (string, string) {
	p := ChooseShell("windows", systemFinder())
	return p, ShellFlag(p)
}

// setCmdLine gives c the command line Windows hands the program verbatim
// (cmd.exe reads it itself: ShellArgs).
func setCmdLine(c *exec.Cmd, raw string) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.CmdLine = raw
}

// PeakRSS is not read on Windows: 0.
func (Windows) PeakRSS(int) int64 { return 0 }

// TermSignal is the signal that asks a process group to stop: CTRL_BREAK
// (os.Interrupt, SignalGroup).
var TermSignal os.Signal = os.Interrupt
