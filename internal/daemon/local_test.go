//go:build linux || darwin

package daemon

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// sockRecorder is a Unix listener at path that records every byte a
// client sends it and never answers.
type sockRecorder struct {
	mu    sync.Mutex
	got   bytes.Buffer
	conns int
}

func newSockRecorder(t *testing.T, path string) *sockRecorder {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &sockRecorder{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					r.mu.Lock()
					r.got.Write(buf[:n])
					r.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return r
}

func (r *sockRecorder) seen() (int, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns, bytes.Clone(r.got.Bytes())
}

// TestLocalSocket: a daemon listens on <home>/daemon.<pid>.sock (mode
// 0600, named in daemon.addr) and answers the thin client there as on the
// TLS listener: the reply, a handler's error as ErrRemote, an unknown
// method as ErrNoDaemon, a wrong token as ErrUnhealthy and
// ErrTokenRefused; timed calls carry the daemon's stages; the socket is
// removed when the daemon stops.
func TestLocalSocket(t *testing.T) {
	home := t.TempDir()
	f := &fakeDaemon{}
	r := startDaemon(t, home, time.Minute, f)
	ad, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	if want := thin.SockPath(home, os.Getpid()); ad.Sock != want {
		t.Fatalf("daemon.addr names socket %q, want %q", ad.Sock, want)
	}
	if fi, err := os.Stat(ad.Sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %s: %v, %v; want a socket of mode 0600", ad.Sock, fi, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A killed daemon's socket is removed by the next daemon's start; a
	// live process's is kept.
	dead := thin.SockPath(home, 4194001)
	live := thin.SockPath(home, os.Getppid())
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeDeadSockets(home)
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead daemon's socket was kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("a live process's socket was removed: %v", err)
	}
	var tm thin.Timing
	got, err := thin.CallTimed(ctx, home, MethodHook, []byte("\x00{}"), &tm)
	if err != nil || string(got) != "hook:\x00{}" {
		t.Fatalf("hook over the socket: %q, %v", got, err)
	}
	// Stages travel in whole microseconds: this test's handler can take
	// less than one, the read of the request does not.
	if tm.Daemon.Read+tm.Daemon.Handle <= 0 || tm.Wait <= 0 {
		t.Fatalf("timed call without the daemon's stages: %+v", tm)
	}
	if _, err := thin.Call(ctx, home, MethodExplain, nil); !errors.Is(err, thin.ErrRemote) || errors.Is(err, thin.ErrNoDaemon) {
		t.Fatalf("handler error: %v", err)
	}
	if _, err := thin.Call(ctx, home, "nothing", nil); !errors.Is(err, thin.ErrNoDaemon) {
		t.Fatalf("unknown method: %v", err)
	}
	bad := ad
	bad.Token = "0123456789abcdef0123456789abcdef"
	if err := writeAddr(home, bad); err != nil {
		t.Fatal(err)
	}
	calls := f.calls.Load()
	if _, err := thin.Call(ctx, home, MethodHook, []byte("\x00{}")); !errors.Is(err, thin.ErrUnhealthy) || !errors.Is(err, thin.ErrTokenRefused) {
		t.Fatalf("wrong token: %v, want ErrUnhealthy and ErrTokenRefused", err)
	}
	if f.calls.Load() != calls {
		t.Fatal("a request with a wrong token reached the handler")
	}
	if err := writeAddr(home, ad); err != nil {
		t.Fatal(err)
	}
	if _, err := clientOf(home).Stop(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	<-r.done
	if _, err := os.Stat(ad.Sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after the daemon stopped: %v", err)
	}
}

// TestLocalSocketImpostor: the thin client sends nothing (no token, no
// payload) to a socket whose holder the kernel does not report as the
// address file's daemon, nor to a socket outside the home; it does not
// call a daemon whose process is stopped; a holder that never answers
// costs the caller's deadline and no more.
func TestLocalSocketImpostor(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	req := []byte("\x00{\"tool_response\":{\"stdout\":\"AKIA-secret-line\"}}")
	write := func(t *testing.T, home string, pid int, sock string) {
		t.Helper()
		ad := addrOf("127.0.0.1:1")
		ad.Token, ad.PID, ad.Sock = token, pid, sock
		if err := writeAddr(home, ad); err != nil {
			t.Fatal(err)
		}
	}
	noSecrets := func(t *testing.T, got []byte) {
		t.Helper()
		for _, s := range []string{token, "AKIA-secret-line"} {
			if bytes.Contains(got, []byte(s)) {
				t.Fatalf("the impostor received %q: %q", s, got)
			}
		}
	}
	t.Run("another process", func(t *testing.T) {
		home := t.TempDir()
		// The address names a pid that is not this process's; the socket
		// at its name is held by this process.
		pid := 4194000
		rec := newSockRecorder(t, thin.SockPath(home, pid))
		write(t, home, pid, thin.SockPath(home, pid))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		reply, err := thin.Call(ctx, home, MethodHook, req)
		if !errors.Is(err, thin.ErrNoDaemon) || !errors.Is(err, thin.ErrUntrusted) || len(reply) > 0 {
			t.Fatalf("call through an impostor: %q, %v; want ErrNoDaemon and ErrUntrusted", reply, err)
		}
		time.Sleep(50 * time.Millisecond)
		_, got := rec.seen()
		noSecrets(t, got)
		if len(got) > 0 {
			t.Fatalf("the impostor received %d bytes", len(got))
		}
		if _, err := wire.ReadAddr(home); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the impostor's address was not retired: %v", err)
		}
	})
	t.Run("outside the home", func(t *testing.T) {
		home := t.TempDir()
		other := thin.SockPath(t.TempDir(), os.Getpid())
		rec := newSockRecorder(t, other)
		write(t, home, os.Getpid(), other)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if reply, err := thin.Call(ctx, home, MethodHook, req); !errors.Is(err, thin.ErrUntrusted) || len(reply) > 0 {
			t.Fatalf("call to a socket outside the home: %q, %v; want ErrUntrusted", reply, err)
		}
		time.Sleep(50 * time.Millisecond)
		if n, got := rec.seen(); n > 0 || len(got) > 0 {
			t.Fatalf("the socket outside the home was connected %d times, got %q", n, got)
		}
	})
	t.Run("another name in the home", func(t *testing.T) {
		home := t.TempDir()
		other := filepath.Join(home, "other.sock")
		rec := newSockRecorder(t, other)
		write(t, home, os.Getpid(), other)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if reply, err := thin.Call(ctx, home, MethodHook, req); !errors.Is(err, thin.ErrUntrusted) || len(reply) > 0 {
			t.Fatalf("call to a socket of another name: %q, %v; want ErrUntrusted", reply, err)
		}
		time.Sleep(50 * time.Millisecond)
		if n, got := rec.seen(); n > 0 || len(got) > 0 {
			t.Fatalf("the socket of another name was connected %d times, got %q", n, got)
		}
	})
	t.Run("home by a symbolic link", func(t *testing.T) {
		// The same home reached by another spelling is the same home: its
		// socket is used, and the pid check still applies.
		real := t.TempDir()
		home := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(real, home); err != nil {
			t.Fatal(err)
		}
		rec := newSockRecorder(t, thin.SockPath(real, 4194000))
		write(t, real, 4194000, thin.SockPath(real, 4194000))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := thin.Call(ctx, home, MethodHook, req); !errors.Is(err, thin.ErrUntrusted) {
			t.Fatalf("call through a link: %v; want the pid check's ErrUntrusted", err)
		}
		for i := 0; i < 100; i++ {
			if n, _ := rec.seen(); n > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n, _ := rec.seen(); n != 1 {
			t.Fatalf("the socket behind the link was connected %d times, want 1 (then refused)", n)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		home := t.TempDir()
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Skip("no sleep to stop:", err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		if err := c.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100 && !thin.Stopped(c.Process.Pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !thin.Stopped(c.Process.Pid) {
			t.Skip("cannot tell a stopped process here")
		}
		write(t, home, c.Process.Pid, thin.SockPath(home, c.Process.Pid))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := thin.Call(ctx, home, MethodHook, req); !errors.Is(err, thin.ErrUnhealthy) || ctx.Err() != nil {
			t.Fatalf("call to a stopped daemon: %v (ctx %v); want ErrUnhealthy before the deadline", err, ctx.Err())
		}
	})
	t.Run("hung", func(t *testing.T) {
		home := t.TempDir()
		newSockRecorder(t, thin.SockPath(home, os.Getpid()))
		write(t, home, os.Getpid(), thin.SockPath(home, os.Getpid()))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := thin.Call(ctx, home, MethodHook, req)
		if !errors.Is(err, thin.ErrUnhealthy) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call to a daemon that never answers: %v; want ErrUnhealthy at the deadline", err)
		}
	})
}

// TestLocalSocketForeignUID: the daemon closes, unread, a connection whose
// peer the kernel reports under another uid; no handler runs.
func TestLocalSocketForeignUID(t *testing.T) {
	old := localUID
	localUID = func() int { return os.Geteuid() + 1 }
	t.Cleanup(func() { localUID = old })
	home := t.TempDir()
	f := &fakeDaemon{}
	startDaemon(t, home, time.Minute, f)
	calls := f.calls.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	reply, err := thin.Call(ctx, home, MethodHook, []byte("\x00{}"))
	if err == nil || len(reply) > 0 || errors.Is(err, thin.ErrUnhealthy) {
		t.Fatalf("call of another uid: %q, %v; want the connection closed", reply, err)
	}
	if f.calls.Load() != calls {
		t.Fatal("a request of another uid reached the handler")
	}
}

// BenchmarkHookTransport: one hook call of 16 KiB as a hook process makes
// it (read the address file, connect, authenticate, call, close) to a
// daemon whose handler echoes, over the TLS listener (wire.Call: a full
// TLS 1.3 handshake and the NATS CONNECT per call) and over the local
// socket (thin.Call: peer credentials from the kernel), side by side.
func BenchmarkHookTransport(b *testing.B) {
	home := b.TempDir()
	r := &daemonRun{done: make(chan struct{})}
	go func() {
		r.err = Run(context.Background(), Config{Home: home, Version: testVersion}, time.Minute, nil, (&fakeDaemon{}).factory)
		close(r.done)
	}()
	defer func() {
		_, _ = clientOf(home).Stop(context.Background(), 5*time.Second)
		<-r.done
	}()
	for i := 0; ; i++ {
		if ad, err := wire.ReadAddr(home); err == nil && ad.Sock != "" {
			break
		}
		if i > 1000 {
			b.Fatal("daemon not ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	req := append([]byte{0}, bytes.Repeat([]byte("a"), 16<<10)...)
	for _, tc := range []struct {
		name string
		call func(context.Context, string, string, []byte) ([]byte, error)
	}{{"tls", wire.Call}, {"socket", thin.Call}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := tc.call(ctx, home, MethodHook, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLocalSocketHeals: a socket file removed while the daemon runs is
// made again within a home check, and hooks reach the daemon on it again.
func TestLocalSocketHeals(t *testing.T) {
	old := homeCheck
	homeCheck = 50 * time.Millisecond
	t.Cleanup(func() { homeCheck = old })
	home := t.TempDir()
	startDaemon(t, home, time.Minute, &fakeDaemon{})
	ad, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ad.Sock); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		got, err := thin.Call(ctx, home, MethodHook, []byte("\x00{}"))
		if err == nil && string(got) == "hook:\x00{}" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the removed socket was not made again: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
