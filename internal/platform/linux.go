//go:build linux

package platform

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Linux is the portable Unix implementation plus what /proc tells: a
// stopped process (/proc/PID/stat), the holder of a lock (/proc/locks and
// the process's open files), a process's peak memory (VmHWM).
type Linux struct{ Unix }

// native is the Linux implementation.
func native() OS { return Linux{} }

// Name is "linux".
func (Linux) Name() string { return "linux" }

// Stopped: state T or t in /proc/PID/stat.
func (Linux) Stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
}

// LockHolder matches the lock file's inode in /proc/locks (FLOCK entries)
// and checks that the process has the file open; without /proc/locks it
// falls back to the portable answer.
func (l Linux) LockHolder(path string) int {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return l.Unix.LockHolder(path)
	}
	defer f.Close()
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF"
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.HasSuffix(fields[5], ino) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		if holdsOpen(pid, path) {
			return pid
		}
	}
	return 0
}

// holdsOpen reports whether process pid has path open.
func holdsOpen(pid int, path string) bool {
	fds, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			return true
		}
	}
	return false
}

// PeakRSS is VmHWM in /proc/PID/status.
func (Linux) PeakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
