//go:build darwin || freebsd || netbsd

package rewrite

import (
	"syscall"
	"time"
)

// ctimeOf returns a file's change time.
func ctimeOf(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
}
