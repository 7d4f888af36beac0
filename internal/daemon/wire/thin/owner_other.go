//go:build !unix

package thin

import "io/fs"

// ownerOf: files have no owner uid here (Windows guards a profile's files
// with ACLs); only the mode bits are checked.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// fileID: no device and inode here; a file's stamp is its size and
// modification time.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
