//go:build !linux && !darwin

package main

import (
	"context"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// callDaemon sends one hook request to the daemon's TLS listener
// (wire.Call): this platform has no local socket with peer credentials.
// Stages are not timed.
func callDaemon(ctx context.Context, home string, req []byte, _ *stages) ([]byte, error) {
	return wire.Call(ctx, home, wire.MethodHook, req)
}
