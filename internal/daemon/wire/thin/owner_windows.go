//go:build windows

package thin

import (
	"io/fs"

	"github.com/omnictx/omni/internal/fileowner"
)

// ownerOf: Windows files have no owner uid; their owner is a SID
// (ownedByOtherAccount).
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// fileID: no device and inode here; a file's stamp is its size and
// modification time.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// ownedByOtherAccount is fileowner.OtherAccount.
func ownedByOtherAccount(path string) bool { return fileowner.OtherAccount(path) }
