//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package rewrite

import (
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// fileStamp returns what identifies one version of a file for the rules
// cache (device, inode, size, mode, modification and change times in
// nanoseconds) and the later of its modification and change times. The
// change time moves on every write and cannot be set back by a program.
func fileStamp(_ string, fi fs.FileInfo) (string, time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d %o %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano()), fi.ModTime(), true
	}
	ctime := ctimeOf(st)
	changed := fi.ModTime()
	if ctime.After(changed) {
		changed = ctime
	}
	return fmt.Sprintf("%d %d %d %o %d %d", uint64(st.Dev), uint64(st.Ino), fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), ctime.UnixNano()), changed, true
}
