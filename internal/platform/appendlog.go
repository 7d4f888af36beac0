package platform

import (
	"fmt"
	"os"
)

// AppendLog opens the log file path (omni.log, daemon.log) for appending,
// creating it with mode 0600, never through a link (NoFollow: a home
// another user made first may hold a link to a file of yours) and never
// onto anything but a regular file (a FIFO would block the writer).
// Errors: the open's, or one naming a path that is not a regular file.
func AppendLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|NoFollow|NonBlock, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}
