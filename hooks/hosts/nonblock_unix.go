//go:build unix

package hosts

import "syscall"

// nonBlock makes an open return at once on a FIFO with no writer.
const nonBlock = syscall.O_NONBLOCK
