//go:build unix

package rewrite

import "syscall"

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// nonBlock makes an open return at once on a FIFO with no writer.
const nonBlock = syscall.O_NONBLOCK
