// Package wire is the omni daemon's wire protocol and its only client,
// shared by the daemon (internal/daemon) and the thin hook client
// (cmd/omni-hook): the address file, the request subjects and headers, a
// connection that calls methods (Dial, Conn.Call) and the one-call client
// of the hook (Call). It imports nats.go and the standard library only,
// never the NATS server, so a process that links it starts fast: a binary
// with nats.go alone started in about 3.6–4.0 ms on the reference machine
// against 4.1–4.7 ms with the server linked, and an omni-hook call measured
// 3.8 ms against 5.2 ms for `omni hook` (2026-11-29).
//
// A request is one NATS request on "omni.rpc.v<Protocol>.<method>" with the
// request body as payload; the reply's payload is the reply body, or, when
// the handler failed, empty with the error in ErrorHeader (and its kind in
// CodeHeader).
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// The protocol.
const (
	// Protocol is the version of the request protocol between clients and
	// the daemon. Every request carries it in its subject
	// (omni.rpc.v2.<method>), so a daemon of another protocol does not
	// answer (no responders) and the client replaces it. Bump it on any
	// incompatible change of a method's request or reply. Version 2 added
	// CodeHeader, which the client needs to tell errors apart.
	Protocol = 2
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
	// AddrFile is the daemon's address file in $OMNI_HOME.
	AddrFile = "daemon.addr"
	// DialTimeout bounds a client's connect and handshake when Dial is
	// given 0: 500 ms, far above a loopback connect (well under 1 ms) and
	// well inside a hook's 4 s deadline.
	DialTimeout = 500 * time.Millisecond
	// DefaultCallTimeout bounds a Conn.Call whose context has no deadline.
	DefaultCallTimeout = time.Minute
	// MethodHook is the method of a hook payload: the request is one flags
	// byte (bit 0: passthrough) followed by the payload as the host sent
	// it; the reply is what the hook prints.
	MethodHook = "hook"
)

// Addr is the content of $OMNI_HOME/daemon.addr (JSON, written atomically
// by the daemon, mode 0600).
type Addr struct {
	Addr     string `json:"addr"`     // "127.0.0.1:port"
	Token    string `json:"token"`    // auth token, 32 hex digits
	PID      int    `json:"pid"`      // daemon process id
	Protocol int    `json:"protocol"` // Protocol of the daemon
	Version  string `json:"version"`  // omni version of the daemon binary
}

// Errors of Dial, Conn.Call and Call.
var (
	// ErrNoDaemon: no daemon of this protocol could be reached (no address
	// file, a stale address, a foreign server, another protocol, no
	// responder). The request was not handled. Returned (wrapped) by Call.
	ErrNoDaemon = errors.New("no omni daemon of this protocol reachable")
	// ErrRemote: the daemon's handler returned an error. Every
	// *RemoteError matches it with errors.Is.
	ErrRemote = errors.New("daemon error")
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

// Home returns $OMNI_HOME, else ~/.omni, else (HOME unset) ./.omni, as an
// absolute path (resolved against the working directory when relative; as
// given if that fails).
func Home() string {
	h := os.Getenv("OMNI_HOME")
	if h == "" {
		if u, err := os.UserHomeDir(); err == nil {
			h = filepath.Join(u, ".omni")
		} else {
			h = ".omni"
		}
	}
	if a, err := filepath.Abs(h); err == nil {
		return a
	}
	return h
}

// Subject returns the versioned RPC name of a daemon method ("v2.hook").
func Subject(method string) string {
	return "v" + strconv.Itoa(Protocol) + "." + method
}

// ReadAddr reads home's address file. Errors: the file's, a JSON error,
// or an empty address.
func ReadAddr(home string) (Addr, error) {
	var ad Addr
	b, err := os.ReadFile(filepath.Join(home, AddrFile))
	if err != nil {
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	if err := json.Unmarshal(b, &ad); err != nil {
		return ad, fmt.Errorf("daemon addr: %w", err)
	}
	if ad.Addr == "" {
		return ad, errors.New("daemon addr: empty address")
	}
	return ad, nil
}

// Conn is a TCP connection to the daemon's server, for Call. It never
// reconnects: once the connection is lost every Call fails with
// ErrConnClosed. It is safe for concurrent use.
type Conn struct {
	nc *nats.Conn
}

// Dial connects to a daemon's server at addr ("127.0.0.1:port", as in
// Addr) presenting token. timeout bounds the connect and handshake (0
// means DialTimeout, 500 ms); ctx's deadline shortens it. Errors
// (wrapped): ErrNotOmni when the server is not named ServerName; an
// authorization error for a wrong token; a connect error when nothing
// listens; ctx's error when it has ended.
func Dial(ctx context.Context, addr, token string, timeout time.Duration) (*Conn, error) {
	if err := ctx.Err(); err != nil {
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
	opts := []nats.Option{nats.NoReconnect(), nats.Timeout(timeout), nats.Name("omni-client")}
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	nc, err := nats.Connect("nats://"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if name := nc.ConnectedServerName(); name != ServerName {
		nc.Close()
		return nil, fmt.Errorf("dial %s: server %q: %w", addr, name, ErrNotOmni)
	}
	return &Conn{nc: nc}, nil
}

// CheckName validates an RPC name: one or more dot-separated tokens
// without spaces or the wildcards * and >.
func CheckName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.ContainsAny(name, " \t\r\n*>") {
		return fmt.Errorf("rpc method %q: invalid name", name)
	}
	return nil
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
// body: read the address file, Dial (DialTimeout, no reconnect, the
// server's name checked), Conn.Call with the remaining time of ctx. It
// never starts a daemon. Errors: ErrNoDaemon (wrapped) when the request
// could not reach a daemon of this protocol; a *RemoteError (matching
// ErrRemote, wrapped) when the handler failed; ctx's error (wrapped) when
// it ended first, in which case the request may have been handled.
func Call(ctx context.Context, home, method string, req []byte) ([]byte, error) {
	ad, err := ReadAddr(home)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	if ad.Protocol != Protocol {
		return nil, fmt.Errorf("%w: daemon pid %d speaks protocol %d", ErrNoDaemon, ad.PID, ad.Protocol)
	}
	c, err := Dial(ctx, ad.Addr, ad.Token, DialTimeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	defer c.Close()
	b, err := c.Call(ctx, Subject(method), req)
	var re *RemoteError
	switch {
	case errors.Is(err, ErrNoResponders):
		return nil, fmt.Errorf("%w: no responder for %s", ErrNoDaemon, method)
	case errors.As(err, &re):
		return nil, fmt.Errorf("%w: %s", ErrRemote, re.Msg)
	case err != nil:
		return nil, fmt.Errorf("daemon %s: %w", method, err)
	}
	return b, nil
}
