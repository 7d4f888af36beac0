//go:build unix && !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package platform

import "errors"

// freeBytes is unknown here: the callers treat the error as "cannot tell"
// and keep recording.
func freeBytes(string) (uint64, error) {
	return 0, errors.New("platform: free space is not read on this system")
}
