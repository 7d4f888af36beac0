//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package rewrite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"time"
)

// fileStamp returns what identifies one version of the file at p for the
// rules cache where fs.FileInfo offers no change time and no file index
// (Windows): size, mode, modification time in nanoseconds and the SHA-256
// of the bytes, since a program can set a modification time back; and
// that modification time. The file is read but not parsed. ok is false
// when it cannot be read (then nothing is cached).
func fileStamp(p string, fi fs.FileInfo) (stamp string, changed time.Time, ok bool) {
	b, err := readSettings(p)
	if err != nil {
		return "", time.Time{}, false
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%d %o %d %s", fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), hex.EncodeToString(sum[:16])), fi.ModTime(), true
}
