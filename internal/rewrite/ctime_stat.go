//go:build linux || openbsd || dragonfly

package rewrite

import (
	"syscall"
	"time"
)

// ctimeOf returns a file's change time.
func ctimeOf(st *syscall.Stat_t) time.Time { return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)) }
