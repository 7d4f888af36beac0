//go:build !unix && !windows

package thin

import "io/fs"

// ownerOf: files have no owner uid here; only the mode bits are checked.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// ownedByOtherAccount: no owner to read here.
func ownedByOtherAccount(string) bool { return false }

// fileID: no device and inode here; a file's stamp is its size and
// modification time.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
