package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// daemonRun is one daemon command running in a goroutine: done is closed
// when it returned err.
type daemonRun struct {
	done chan struct{}
	err  error
}

// waitDone waits for the daemon command's result.
func waitDone(t *testing.T, r *daemonRun, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("daemon: %v", r.err)
		}
	case <-time.After(within):
		t.Fatalf("daemon still running after %s", within)
	}
}

// call sends one request to the daemon of home through the wire.
func call(t *testing.T, home, method, req string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := wire.Call(ctx, home, method, []byte(req))
	return string(b), err
}

// TestDaemonCmd drives the cobra command: serve with the default (no)
// handler, then --stop.
func TestDaemonCmd(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OMNI_HOME", home)
	t.Setenv("OMNI_DAEMON_IDLE", "1m")

	stopCmd := func() string {
		var stderr bytes.Buffer
		c := newDaemonCmd(nil)
		c.SilenceUsage = true
		c.SetArgs([]string{"--stop"})
		c.SetErr(&stderr)
		c.SetOut(&stderr)
		if err := c.Execute(); err != nil {
			t.Fatalf("daemon --stop: %v", err)
		}
		return strings.TrimSpace(stderr.String())
	}
	if got := stopCmd(); got != "no daemon running" {
		t.Fatalf("--stop with none printed %q", got)
	}

	r := &daemonRun{done: make(chan struct{})}
	var logs bytes.Buffer
	go func() {
		c := newDaemonCmd(nil)
		c.SetArgs([]string{"--idle", "1m"})
		c.SetErr(&syncWriter{w: &logs})
		r.err = c.Execute()
		close(r.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := call(t, home, "ping", ""); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon command not ready")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := call(t, home, "hook", "x"); !errors.Is(err, wire.ErrRemote) {
		t.Fatalf("hook without a handler: %v, want a remote error", err)
	}
	if got := stopCmd(); got != "stopped" {
		t.Fatalf("--stop printed %q", got)
	}
	waitDone(t, r, 5*time.Second)

	t.Setenv("OMNI_DAEMON_IDLE", "soon")
	c := newDaemonCmd(nil)
	c.SilenceUsage = true
	c.SetArgs(nil)
	c.SetErr(&bytes.Buffer{})
	if err := c.Execute(); err == nil {
		t.Fatal("bad OMNI_DAEMON_IDLE accepted")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
