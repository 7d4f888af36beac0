// Package wire is the omni daemon's wire protocol and its clients,
// shared by the daemon (internal/daemon) and the thin hook client
// (cmd/omni-hook): the address file, the request subjects and headers, a
// connection over TLS that calls methods (Dial, Conn.Call) and a one-call
// client (Call). It imports nats.go, the standard library and its
// subpackage thin only, never the NATS server, so a process that links it
// starts fast. Subpackage thin holds the names that need neither net nor
// TLS (the address file, the home's checks, the back-off, the build
// identity, the cluster settings; this package re-exports them) and the
// local socket's client, which is all omni-hook links on Linux and macOS.
//
// A request over TLS is one NATS request on "omni.rpc.v<Protocol>.<method>"
// with the request body as payload; the reply's payload is the reply
// body, or, when the handler failed, empty with the error in ErrorHeader
// (and its kind in CodeHeader).
//
// Trust runs both ways and the client speaks second: the daemon's TLS
// listener has a key made at its start, whose certificate the address
// file carries (Addr.Cert); a client reads that file only from a home no
// one else can write (CheckPrivate), pins the certificate, and sends its
// CONNECT with the token only after the handshake proved the key. On the
// local socket the kernel's peer credentials do what the key does (see
// thin.Call). The daemon keeps requiring the token on both.
package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// The protocol.
const (
	// RPCPrefix is prepended to a method name to form its subject.
	RPCPrefix = "omni.rpc."
	// ErrorHeader is the reply header that carries a handler's error
	// message; a reply with it has an empty body.
	ErrorHeader = "Omni-Error"
	// CodeHeader is the reply header that names the kind of a handler's
	// error (such as "unknown-handle"), beside ErrorHeader, so that a
	// client can tell errors apart without reading their text. Absent when
	// the error has no known kind.
	CodeHeader = "Omni-Error-Code"
	// TimeoutHeader carries the caller's remaining time in milliseconds;
	// the handler's context is bounded by it.
	TimeoutHeader = "Omni-Timeout-Ms"
	// ServerName is the daemon's embedded server name; a client refuses a
	// server with any other name (a foreign process that took a stale
	// port after the daemon exited).
	ServerName = "omni"
	// DialTimeout bounds a client's connect and TLS handshake when Dial
	// is given 0: 1 s, far above a loopback handshake (2.6 ms of CPU for
	// both ends, 7 ms wall on a loaded 2-core machine, BenchmarkDial
	// 2026-12-01), room for a 64-way hook storm, and inside a hook's 4 s
	// deadline. Past it the daemon counts as hung (ErrUnhealthy).
	DialTimeout = time.Second
	// DefaultCallTimeout bounds a Conn.Call whose context has no deadline.
	DefaultCallTimeout = time.Minute
)

// Errors of Dial, Conn.Call and Call.
var (
	// ErrNoResponders is returned (wrapped) by Conn.Call when nothing
	// serves the method: no daemon, a daemon that is shutting down, or a
	// daemon that speaks another protocol version.
	ErrNoResponders = errors.New("jetstream: no responders")
	// ErrConnClosed is returned (wrapped) by Conn.Call when the connection
	// to the server is closed or was lost (the server exited).
	ErrConnClosed = errors.New("jetstream: connection closed")
	// ErrNotOmni is returned (wrapped) by Dial when the address answers but
	// is not an omni server (a foreign process on a stale port).
	ErrNotOmni = errors.New("jetstream: server is not omni")
)

// RemoteError is the error Conn.Call returns when the handler on the
// server returned an error (the reply carried ErrorHeader).
type RemoteError struct {
	// Method is the name passed to Call ("v2.retrieve").
	Method string
	// Code is the error's kind from CodeHeader ("" when it has none).
	Code string
	// Msg is the handler's error message (newlines folded to spaces, at
	// most 8 KiB).
	Msg string
}

// Error renders the error as "<method>: remote: <msg>".
func (e *RemoteError) Error() string { return e.Method + ": remote: " + e.Msg }

// Is reports whether target is ErrRemote.
func (e *RemoteError) Is(target error) bool { return target == ErrRemote }

// Conn is a TCP connection to the daemon's server, for Call. It never
// reconnects: once the connection is lost every Call fails with
// ErrConnClosed. It is safe for concurrent use.
type Conn struct {
	nc *nats.Conn
}

// Dial connects to the daemon of ad: TCP to ad.Addr, the TLS handshake
// against the pinned certificate ad.Cert, and only then CONNECT with
// ad.Token. timeout bounds the connect and handshake (0 means
// DialTimeout, 500 ms); ctx's deadline shortens it. Errors (wrapped):
// ErrUntrusted when the listener does not prove the certificate's key (no
// token was sent); ErrUnhealthy when the daemon refused the token or did
// not finish the handshake in time; ErrNoDaemon when nothing listens;
// ctx's error when it has ended.
func Dial(ctx context.Context, ad Addr, timeout time.Duration) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tc, err := clientTLS(ad)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DialTimeout
	}
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return nil, context.DeadlineExceeded
		}
		timeout = min(timeout, left)
	}
	opts := []nats.Option{nats.NoReconnect(), nats.Timeout(timeout), nats.Name("omni-client"), nats.Secure(tc)}
	if ad.Token != "" {
		opts = append(opts, nats.Token(ad.Token))
	}
	nc, err := nats.Connect("nats://"+ad.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", ad.Addr, classifyDial(err))
	}
	if name := nc.ConnectedServerName(); name != ServerName {
		nc.Close()
		return nil, fmt.Errorf("dial %s: server %q: %w: %w", ad.Addr, name, ErrUntrusted, ErrNotOmni)
	}
	return &Conn{nc: nc}, nil
}

// DialTries is how many times DialPatient dials a daemon whose process
// runs but did not finish the handshake within DialTimeout.
const DialTries = 3

// DialPatient is Dial with DialTimeout, tried again (up to DialTries in
// all, while ctx leaves room for another) when the handshake timed out but
// the daemon's process (ad.PID) is not stopped: a loaded machine slows a
// handshake, a stopped daemon never finishes one. Errors: Dial's.
func DialPatient(ctx context.Context, ad Addr) (*Conn, error) {
	for try := 1; ; try++ {
		c, err := Dial(ctx, ad, DialTimeout)
		if err == nil || try >= DialTries || !errors.Is(err, ErrUnhealthy) || errors.Is(err, ErrTokenRefused) || Stopped(ad.PID) {
			return c, err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < DialTimeout {
			return c, err
		}
	}
}

// classifyDial names the kind of a connect error: ErrUnhealthy for a
// refused token or a timeout, ErrUntrusted for a failed handshake or a
// listener that does not speak NATS over TLS, ErrNoDaemon when nothing
// listens.
func classifyDial(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, nats.ErrAuthorization):
		return fmt.Errorf("%w: %w: %w", ErrUnhealthy, ErrTokenRefused, err)
	case errors.Is(err, nats.ErrTLS), errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("%w: %w", ErrUntrusted, err)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, nats.ErrNoServers):
		return fmt.Errorf("%w: %w", ErrNoDaemon, err)
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %w", ErrUnhealthy, err)
	}
	// A listener that answered something other than NATS over TLS.
	return fmt.Errorf("%w: %w", ErrUntrusted, err)
}

// Call sends req to the RPC name ("omni.rpc.<name>"; name is Subject(m)
// for a versioned method, or "ping"/"stop") and returns the reply body.
// ctx bounds the call (DefaultCallTimeout, 1 min, without a deadline) and
// its remaining time is passed to the handler in TimeoutHeader. Errors:
// *RemoteError when the handler failed; ErrNoResponders (wrapped) when
// nothing serves name; ErrConnClosed (wrapped) when the connection is
// closed or lost; ctx's error (wrapped) when it ends first; a wrapped
// payload error when req exceeds the server's maximum payload.
func (c *Conn) Call(ctx context.Context, name string, req []byte) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	msg := nats.NewMsg(RPCPrefix + name)
	msg.Data = req
	if d, ok := ctx.Deadline(); ok {
		msg.Header.Set(TimeoutHeader, strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10))
	}
	m, err := c.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return nil, fmt.Errorf("call %s: %w", name, ErrNoResponders)
		case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrDisconnected),
			errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrInvalidConnection),
			errors.Is(err, nats.ErrStaleConnection):
			return nil, fmt.Errorf("call %s: %w: %w", name, ErrConnClosed, err)
		}
		return nil, fmt.Errorf("call %s: %w", name, err)
	}
	if e := m.Header.Get(ErrorHeader); e != "" {
		return nil, &RemoteError{Method: name, Code: m.Header.Get(CodeHeader), Msg: e}
	}
	return m.Data, nil
}

// Close closes the connection. Calls after Close fail with ErrConnClosed.
func (c *Conn) Close() { c.nc.Close() }

// Call sends one request to method on home's daemon and returns the reply
// body: check the back-off, read the address file (CheckPrivate), Dial
// (DialTimeout, no reconnect, the certificate pinned), Conn.Call with the
// remaining time of ctx. A daemon whose Addr.Backend differs from the
// backend home's settings name (ReadCluster with the environment) is not
// called: ErrNoDaemon, so the caller's fallback replaces it. It never
// starts a daemon. Errors: ReadCluster's; ErrBackoff
// (wrapped) while a hard back-off stands, nothing sent; ErrUnsafeHome (wrapped)
// for a home others can write; ErrNoDaemon (wrapped) when the request
// could not reach a daemon of this protocol (an address whose listener
// did not prove itself is retired first); ErrUnhealthy (wrapped) when the
// daemon took the whole deadline or refused the token, and then the caller
// should StartBackoff; a *RemoteError (matching ErrRemote, wrapped) when
// the handler failed.
func Call(ctx context.Context, home, method string, req []byte) ([]byte, error) {
	if b, on := ReadBackoff(home); on && b.Hard {
		return nil, thin.BackoffError(b)
	}
	ad, err := ReadAddr(home)
	if errors.Is(err, ErrUnsafeHome) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	if ad.Protocol != Protocol {
		return nil, fmt.Errorf("%w: daemon pid %d speaks protocol %d", ErrNoDaemon, ad.PID, ad.Protocol)
	}
	if why := ad.Stale(); why != "" {
		return nil, fmt.Errorf("%w: daemon pid %d: %s", ErrNoDaemon, ad.PID, why)
	}
	want, err := ReadCluster(home, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if why := ad.BackendMismatch(want.Backend()); why != "" {
		return nil, fmt.Errorf("%w: daemon pid %d: %s", ErrNoDaemon, ad.PID, why)
	}
	c, err := DialPatient(ctx, ad)
	if errors.Is(err, ErrUntrusted) {
		RetireAddr(home, ad.Token)
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	if err != nil {
		if !errors.Is(err, ErrUnhealthy) {
			err = fmt.Errorf("%w: %w", ErrNoDaemon, err)
		}
		return nil, err
	}
	defer c.Close()
	b, err := c.Call(ctx, Subject(method), req)
	var re *RemoteError
	switch {
	case errors.Is(err, ErrNoResponders):
		return nil, fmt.Errorf("%w: no responder for %s", ErrNoDaemon, method)
	case errors.As(err, &re):
		return nil, fmt.Errorf("%w: %s", ErrRemote, re.Msg)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("daemon %s: %w: %w", method, ErrUnhealthy, err)
	case err != nil:
		return nil, fmt.Errorf("daemon %s: %w", method, err)
	}
	return b, nil
}
