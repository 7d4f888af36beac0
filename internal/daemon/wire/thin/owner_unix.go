//go:build unix

package thin

import (
	"io/fs"
	"syscall"
)

// ownerOf returns the uid that owns fi's file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

// ownedByOtherAccount: the owner uid (ownerOf) says it all on Unix.
func ownedByOtherAccount(string) bool { return false }

// fileID returns the device and inode of fi's file.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
