//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package platform

import "golang.org/x/sys/unix"

// freeBytes is statfs's f_bavail × f_bsize.
func freeBytes(path string) (uint64, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return 0, err
	}
	return uint64(fs.Bavail) * uint64(fs.Bsize), nil
}
