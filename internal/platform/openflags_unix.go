//go:build unix

package platform

import "syscall"

// NoFollow is the open flag that makes opening a symbolic link fail, and
// NonBlock the one that keeps an open of a FIFO from waiting: 0 where the
// system has none.
const (
	NoFollow = syscall.O_NOFOLLOW
	NonBlock = syscall.O_NONBLOCK
)
