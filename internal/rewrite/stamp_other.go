//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package rewrite

import (
	"fmt"
	"io/fs"
	"time"
)

// fileStamp returns what identifies one version of a file for the rules
// cache where the platform offers no change time through fs.FileInfo
// (size, mode and modification time in nanoseconds), and that
// modification time.
func fileStamp(fi fs.FileInfo) (string, time.Time) {
	return fmt.Sprintf("%d %o %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano()), fi.ModTime()
}
