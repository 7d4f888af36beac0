//go:build !linux && !darwin

package thin

import (
	"context"
	"errors"
	"fmt"
)

// Sockets reports whether this platform's clients use the daemon's local
// socket: not here (no peer credentials from the kernel; Windows would
// want a named pipe and its ACL), so clients use the TLS listener.
const Sockets = false

// Call is not available here: ErrNoDaemon with ErrNoSocket, after the
// back-off and the address file were checked as on other platforms.
func Call(ctx context.Context, home, method string, req []byte) ([]byte, error) {
	return CallTimed(ctx, home, method, req, nil)
}

// CallTimed is Call.
func CallTimed(ctx context.Context, home, method string, req []byte, tm *Timing) ([]byte, error) {
	if _, err := callable(home); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", ErrNoDaemon, ErrNoSocket)
}

// PeerOf is not available here.
func PeerOf(fd int) (pid, uid int, err error) {
	return 0, 0, errors.New("no peer credentials on this platform")
}
