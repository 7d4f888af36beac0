//go:build linux || darwin

package thin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Sockets reports whether this platform's clients use the daemon's local
// socket (true on Linux and macOS, where the kernel tells each end the
// other's credentials).
const Sockets = true

// connectLimit bounds a connect to the local socket: it completes at once
// unless the daemon's accept queue is full (a daemon that stopped
// accepting), which is then counted as unhealthy.
const connectLimit = time.Second

// Call sends one request to method on home's daemon over its local socket
// and returns the reply body: check the back-off, read the address file
// (CheckPrivate), check that the daemon is of this protocol, build and
// backend and has a socket in the home named for its pid, connect, check
// from the kernel that the peer runs as this user with the address file's
// pid, and only then send the token and req; ctx's deadline bounds it all
// and is passed to the handler. A daemon whose process is stopped
// (SIGSTOP) is not called. It never starts a daemon. Errors: ErrBackoff
// (wrapped) while a hard back-off stands; ErrUnsafeHome (wrapped);
// ReadCluster's; ErrNoDaemon (wrapped) when no daemon of this protocol
// listens, with ErrNoSocket when the daemon has no socket (the caller uses
// the TLS listener) and with ErrUntrusted when the socket's peer is not
// the daemon (nothing was sent; the address is retired); ErrUnhealthy
// (wrapped) when the daemon is stopped, took the whole deadline or
// refused the token (with ErrTokenRefused), and then the caller should
// StartBackoff; ErrRemote (wrapped) when the handler failed.
func Call(ctx context.Context, home, method string, req []byte) ([]byte, error) {
	return CallTimed(ctx, home, method, req, nil)
}

// CallTimed is Call that, when tm is not nil, fills tm with the time of
// each stage of the call, the daemon's own included (Request.Stages).
func CallTimed(ctx context.Context, home, method string, req []byte, tm *Timing) ([]byte, error) {
	t0 := time.Now()
	ad, err := callable(home)
	if err != nil {
		return nil, err
	}
	if ad.Sock == "" {
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, ErrNoSocket)
	}
	if !sockInHome(home, ad) {
		return nil, fmt.Errorf("%w: %w: socket %s is not the home's socket of pid %d", ErrNoDaemon, ErrUntrusted, ad.Sock, ad.PID)
	}
	if Stopped(ad.PID) {
		return nil, fmt.Errorf("daemon pid %d is stopped: %w", ad.PID, ErrUnhealthy)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultCallTimeout)
	}
	f, err := dialSock(ad, min(time.Until(deadline), connectLimit))
	if errors.Is(err, ErrUntrusted) {
		RetireAddr(home, ad.Token)
		return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t1 := time.Now()
	f.deadline = deadline
	h := Request{Token: ad.Token, Method: Subject(method), TimeoutMs: max(time.Until(deadline).Milliseconds(), 1), Stages: tm != nil}
	if err := WriteRequest(f, h, req); err != nil {
		return nil, sockErr(method, err)
	}
	t2 := time.Now()
	rh, body, err := ReadReply(f)
	if err != nil {
		return nil, sockErr(method, err)
	}
	if tm != nil {
		tm.Connect, tm.Send, tm.Wait = t1.Sub(t0), t2.Sub(t1), time.Since(t2)
		if rh.Stages != nil {
			tm.Daemon = *rh.Stages
		}
	}
	switch {
	case rh.Code == CodeTokenRefused:
		return nil, fmt.Errorf("daemon %s: %w: %w", method, ErrUnhealthy, ErrTokenRefused)
	case rh.Code == CodeNoMethod:
		return nil, fmt.Errorf("%w: no responder for %s", ErrNoDaemon, method)
	case rh.Error != "":
		return nil, fmt.Errorf("%w: %s", ErrRemote, rh.Error)
	}
	return body, nil
}

// sockInHome reports whether ad.Sock is the socket SockPath names for
// ad.PID in home, the directory CheckPrivate vouched for: the same path,
// or (a home reached by another spelling, a symbolic link) the same name
// in the same directory.
func sockInHome(home string, ad Addr) bool {
	want := SockPath(home, ad.PID)
	if ad.Sock == want {
		return true
	}
	if filepath.Base(ad.Sock) != filepath.Base(want) {
		return false
	}
	a, err := os.Stat(filepath.Dir(ad.Sock))
	if err != nil {
		return false
	}
	b, err := os.Stat(home)
	return err == nil && os.SameFile(a, b)
}

// sockErr names a failed exchange on the socket: ErrUnhealthy with
// context.DeadlineExceeded when the deadline passed.
func sockErr(method string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("daemon %s: %w: %w", method, ErrUnhealthy, context.DeadlineExceeded)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("daemon %s: the daemon closed the connection: %w", method, err)
	}
	return fmt.Errorf("daemon %s: %w", method, err)
}

// sockConn is a connected socket read and written with blocking system
// calls, each bounded by the time left until deadline (SO_RCVTIMEO,
// SO_SNDTIMEO): a hook process has one call to make, so it waits in the
// kernel rather than in the runtime's poller (no epoll registration, no
// goroutine parked and woken).
type sockConn struct {
	fd       int
	deadline time.Time
}

// timeout sets opt (SO_RCVTIMEO or SO_SNDTIMEO) to the time left, or
// reports os.ErrDeadlineExceeded when none is.
func (c *sockConn) timeout(opt int) error {
	left := time.Until(c.deadline)
	if c.deadline.IsZero() {
		left = DefaultCallTimeout
	}
	if left <= 0 {
		return os.ErrDeadlineExceeded
	}
	tv := unix.NsecToTimeval(max(left, time.Microsecond).Nanoseconds())
	return unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv)
}

// Read reads into p within the deadline. Errors: os.ErrDeadlineExceeded,
// io.EOF when the peer closed, the system call's.
func (c *sockConn) Read(p []byte) (int, error) {
	if err := c.timeout(unix.SO_RCVTIMEO); err != nil {
		return 0, err
	}
	for {
		n, err := unix.Read(c.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, os.ErrDeadlineExceeded
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes p whole within the deadline. Errors: os.ErrDeadlineExceeded,
// the system call's.
func (c *sockConn) Write(p []byte) (int, error) {
	if err := c.timeout(unix.SO_SNDTIMEO); err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		n, err := unix.Write(c.fd, p[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return done, os.ErrDeadlineExceeded
		case err != nil:
			return done, err
		}
		done += n
	}
	return done, nil
}

// Close closes the socket.
func (c *sockConn) Close() error { return unix.Close(c.fd) }

// dialSock connects to ad.Sock within limit and checks the peer from the
// kernel: it must run as this user with pid ad.PID. Errors: ErrNoDaemon
// (wrapped) when nothing listens; ErrUntrusted (wrapped) when the peer is
// another process or user; ErrUnhealthy (wrapped) when the connect did not
// complete within limit.
func dialSock(ad Addr, limit time.Duration) (*sockConn, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		return nil, fmt.Errorf("daemon socket: %w", err)
	}
	closeOnExec(fd)
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	// A blocking connect bounded by the send timeout: it returns at once
	// unless the accept queue is full.
	tv := unix.NsecToTimeval(max(limit, time.Millisecond).Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: ad.Sock})
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ECONNREFUSED):
		return nil, fmt.Errorf("%w: %s: %w", ErrNoDaemon, ad.Sock, err)
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINPROGRESS), errors.Is(err, unix.ETIMEDOUT):
		return nil, fmt.Errorf("daemon socket %s accepts no connection: %w: %w", ad.Sock, ErrUnhealthy, err)
	default:
		return nil, fmt.Errorf("%w: %s: %w", ErrNoDaemon, ad.Sock, err)
	}
	pid, uid, err := PeerOf(fd)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: peer credentials: %v", ErrUntrusted, ad.Sock, err)
	}
	if uid != os.Geteuid() || pid != ad.PID {
		return nil, fmt.Errorf("%w: %s is held by pid %d of uid %d, not by the daemon (pid %d of uid %d)", ErrUntrusted, ad.Sock, pid, uid, ad.PID, os.Geteuid())
	}
	ok = true
	return &sockConn{fd: fd}, nil
}
