package hosts

import (
	"errors"
	"io"
	"os"
)

// errNotRegular is openRegular's answer for anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens the file a host keeps outside its payload for
// reading, without waiting: the open itself does not block (nonBlock, so
// a FIFO nobody writes answers at once instead of holding the call until
// the hook's deadline), and anything that is not a regular file once
// open (FIFO, device, directory) is closed and refused with
// errNotRegular. Errors: os.OpenFile's, errNotRegular.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}

// readRegular returns the whole of the regular file at path when it holds
// at most max bytes. Errors: openRegular's, io.ErrUnexpectedEOF for a
// file over max or one that changed size while read.
func readRegular(path string, max int64) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, io.ErrUnexpectedEOF
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}
