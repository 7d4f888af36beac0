//go:build !linux && !darwin

package daemon

// serveLocal: no local socket on this platform (thin.Sockets is false);
// clients use the TLS listener.
func (st *rpcServer) serveLocal(home, token string, handlers map[string]rpcHandler, logf func(string, ...any)) string {
	return ""
}
