package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/platform"
)

var logMu sync.Mutex

// Logf returns a logger appending one line per call to <home>/omni.log:
// an RFC 3339 UTC time with nanoseconds, "pid=N", then the message. Write
// errors are ignored: logging must never break a hook.
func Logf(home string) func(string, ...any) {
	return func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		_ = os.MkdirAll(home, 0o700)
		f, err := AppendLog(filepath.Join(home, "omni.log"))
		if err != nil {
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%s pid=%d %s\n", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid(), fmt.Sprintf(format, args...))
	}
}

// AppendLog opens a log file of the home for appending (platform.AppendLog:
// never through a link, never onto anything but a regular file).
func AppendLog(path string) (*os.File, error) { return platform.AppendLog(path) }

// ProjectOf returns the repository top level of dir (the nearest ancestor
// holding .git, a directory or a worktree file), else dir itself: the
// project hooks record.
func ProjectOf(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir)
		}
		d = parent
	}
}

// BusyPath is the file a long command that holds the store writes
// (<home>/store/busy.json, {"pid","what"}), so other commands know not to
// wait for it.
func BusyPath(home string) string { return filepath.Join(home, "store", "busy.json") }

// MarkBusy records that this process (what, e.g. "omni bench") holds
// home's store for a long time; the returned func removes the record.
// While it stands, every Client request of another process fails at once
// with ErrStoreBusy.
func MarkBusy(home, what string) func() {
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "what": what})
	if writeFileAtomic(BusyPath(home), b) != nil {
		return func() {}
	}
	return func() { _ = os.Remove(BusyPath(home)) }
}

// StoreBusy reports a live process that marked home's store busy, as
// "omni bench (pid N)". A mark of this process, or of a process that is
// gone, does not count.
func StoreBusy(home string) (string, bool) {
	b, err := os.ReadFile(BusyPath(home))
	if err != nil {
		return "", false
	}
	var m struct {
		PID  int    `json:"pid"`
		What string `json:"what"`
	}
	if json.Unmarshal(b, &m) != nil || m.PID <= 0 || m.PID == os.Getpid() {
		return "", false
	}
	if !platform.Alive(m.PID) {
		return "", false // it died without clearing the mark
	}
	return fmt.Sprintf("%s (pid %d)", m.What, m.PID), true
}

// ErrReadOnlyHome: $OMNI_HOME or its store directory exists but this user
// cannot write it: the store cannot start (every call is recorded there),
// so commands say so at once instead of waiting out the start watch.
var ErrReadOnlyHome = errors.New("the omni home is not writable")

// CheckHome checks that no one else can write home, its store directory
// or its address file (wire.CheckPrivate: repaired where they are ours),
// and that this user can write home and its store directory where they
// exist (access(2), one call each). Errors: ErrUnsafeHome or
// ErrReadOnlyHome (wrapped), saying which path and how to fix it.
func CheckHome(home string) error {
	for _, p := range []string{home, storeDir(home), addrPath(home)} {
		if err := wire.CheckPrivate(p); err != nil {
			return err
		}
	}
	for _, p := range []string{home, storeDir(home)} {
		if err := platform.Writable(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s: %v (make it writable, or point OMNI_HOME elsewhere)", ErrReadOnlyHome, p, err)
		}
	}
	return nil
}
