//go:build linux || darwin

package main

import (
	"context"

	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// callDaemon sends one hook request to the daemon's local socket
// (thin.CallTimed). A daemon without a socket is ErrNoDaemon, so the
// payload goes to `omni hook`, which speaks TLS.
func callDaemon(ctx context.Context, home string, req []byte, st *stages) ([]byte, error) {
	return thin.CallTimed(ctx, home, thin.MethodHook, req, st.timing())
}
