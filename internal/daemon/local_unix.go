//go:build linux || darwin

package daemon

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// localIO bounds how long the daemon waits for a local client to send its
// request or take its reply: far above a hook payload's transfer on one
// machine, and it frees the goroutine of a client that stalls.
const localIO = 10 * time.Second

// localUID is the uid a local client must run as: the daemon's own. A
// variable for tests.
var localUID = os.Geteuid

// serveLocal answers requests on the daemon's local socket,
// thin.SockPath(home, this pid), with handlers by name (the names served
// on the NATS listener), until stop. The socket lives in the home, which
// only this user can enter (CheckHome), is made mode 0600, and every
// connection is checked from the kernel: a peer of another uid is closed
// unread, a request without token is refused (thin.CodeTokenRefused), a
// method not in handlers, or any after stop, is thin.CodeNoMethod. A
// socket file that is removed or replaced while the daemon runs is made
// again at the next healLocal (every homeCheck). It returns the socket's
// path, or "" when the daemon has none (the path is over
// thin.MaxSockPath, or the listen failed: logged), and then clients use
// the TLS listener.
func (st *rpcServer) serveLocal(home, token string, handlers map[string]rpcHandler, logf func(string, ...any)) string {
	path := thin.SockPath(home, os.Getpid())
	if len(path) > thin.MaxSockPath {
		logf("daemon %d: no local socket: %s is over %d bytes (hooks use the TLS listener)", os.Getpid(), path, thin.MaxSockPath)
		return ""
	}
	removeDeadSockets(home)
	uid := localUID()
	var ln *net.UnixListener
	var bound os.FileInfo
	listen := func() error {
		// A file of this name is no other daemon's: it is named for this
		// process, and this process holds the store lock.
		_ = os.Remove(path)
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err == nil {
			err = os.Chmod(path, 0o600)
		}
		if err != nil {
			l.Close()
			return err
		}
		st.mu.Lock()
		if !st.serving {
			st.mu.Unlock()
			l.Close()
			return errServerStopped
		}
		ln, bound, st.local = l, fi, l
		st.mu.Unlock()
		go func() {
			for {
				c, err := l.AcceptUnix()
				if err != nil {
					if errors.Is(err, net.ErrClosed) {
						return
					}
					time.Sleep(5 * time.Millisecond) // EMFILE and the like
					continue
				}
				st.flight.add()
				go func() {
					defer st.flight.done()
					st.handleLocal(c, uid, token, handlers, logf)
				}()
			}
		}()
		return nil
	}
	if err := listen(); err != nil {
		logf("daemon %d: no local socket: %v (hooks use the TLS listener)", os.Getpid(), err)
		return ""
	}
	heal := func() {
		if cur, err := os.Lstat(path); err == nil && os.SameFile(cur, bound) {
			return
		}
		st.mu.Lock()
		old, serving := ln, st.serving
		st.mu.Unlock()
		if !serving {
			return
		}
		old.SetUnlinkOnClose(false) // the file at path is not this listener's any more
		old.Close()
		if err := listen(); err != nil {
			logf("daemon %d: local socket %s was removed or replaced and cannot be made again: %v (hooks use the TLS listener)", os.Getpid(), path, err)
			return
		}
		logf("daemon %d: local socket %s was removed or replaced: made it again", os.Getpid(), path)
	}
	st.mu.Lock()
	st.localHeal = heal
	st.mu.Unlock()
	return path
}

// handleLocal answers one connection of serveLocal.
func (st *rpcServer) handleLocal(c *net.UnixConn, uid int, token string, handlers map[string]rpcHandler, logf func(string, ...any)) {
	defer c.Close()
	t0 := time.Now()
	var puid, ppid int
	var perr error
	if rc, err := c.SyscallConn(); err != nil {
		perr = err
	} else if err := rc.Control(func(fd uintptr) { ppid, puid, perr = thin.PeerOf(int(fd)) }); err != nil {
		perr = err
	}
	if perr != nil || puid != uid {
		logf("daemon %d: local socket: refused a client (pid %d, uid %d; this daemon runs as uid %d): %v", os.Getpid(), ppid, puid, uid, perr)
		return
	}
	_ = c.SetDeadline(time.Now().Add(localIO))
	h, body, err := thin.ReadRequest(c)
	if err != nil {
		return
	}
	read := time.Since(t0)
	reply := func(rh thin.Reply, out []byte) {
		_ = c.SetWriteDeadline(time.Now().Add(localIO))
		_ = thin.WriteReply(c, rh, out)
	}
	if subtle.ConstantTimeCompare([]byte(h.Token), []byte(token)) != 1 {
		reply(thin.Reply{Error: "token refused", Code: thin.CodeTokenRefused}, nil)
		return
	}
	hd, ok := handlers[h.Method]
	st.mu.Lock()
	serving := st.serving
	st.mu.Unlock()
	if !ok || !serving {
		reply(thin.Reply{Error: fmt.Sprintf("no responder for %s", h.Method), Code: thin.CodeNoMethod}, nil)
		return
	}
	ctx, cancel := st.baseCtx, context.CancelFunc(func() {})
	if h.TimeoutMs > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(h.TimeoutMs)*time.Millisecond)
	}
	defer cancel()
	var sg *thin.Stages
	var tm hooks.Timing
	if h.Stages {
		sg = &thin.Stages{Read: read.Microseconds()}
		ctx = hooks.WithTiming(ctx, &tm)
	}
	t1 := time.Now()
	resp, err := callHandler(ctx, hd, body)
	if sg != nil {
		sg.Handle = time.Since(t1).Microseconds()
		sg.Redact, sg.Decide, sg.Append = tm.Redact.Microseconds(), tm.Decide.Microseconds(), tm.Append.Microseconds()
	}
	if err != nil {
		reply(thin.Reply{Error: headerValue(err.Error()), Code: codeOf(err), Stages: sg}, nil)
		return
	}
	reply(thin.Reply{Stages: sg}, resp)
}

// removeDeadSockets removes the sockets of daemons that exited without
// removing theirs (killed): daemon.<pid>.sock files in home whose process
// no longer exists.
func removeDeadSockets(home string) {
	names, _ := filepath.Glob(filepath.Join(home, "daemon.*.sock"))
	for _, name := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "daemon."), ".sock"))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.Remove(name)
		}
	}
}
