//go:build linux

package pipefilter

import (
	"os"
	"strconv"
	"strings"
)

// WriterGoneFunc returns a WriterGone for a filter that is the last
// command of a shell pipeline: the other commands of the pipeline are its
// parent shell's other children, read from
// /proc/PPID/task/PPID/children; once no child but this process is alive
// (gone or a zombie), the runner's side is done. nil when the kernel does
// not list children (the filter then waits for end of input).
func WriterGoneFunc() func() bool {
	ppid, self := os.Getppid(), os.Getpid()
	path := "/proc/" + strconv.Itoa(ppid) + "/task/" + strconv.Itoa(ppid) + "/children"
	if _, err := os.ReadFile(path); err != nil || ppid <= 1 {
		return nil
	}
	return func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid == self {
				continue
			}
			st, err := os.ReadFile("/proc/" + f + "/stat")
			if err != nil {
				continue // gone
			}
			if i := strings.LastIndexByte(string(st), ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue // exited, not yet reaped
			}
			return false
		}
		return true
	}
}
