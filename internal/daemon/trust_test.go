package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// recorder is a TCP listener on the daemon's address that records every
// byte a client sends it. greet is what it says on accept (a NATS INFO
// line, or nothing); with tlsCfg it answers the TLS handshake with its
// own certificate.
type recorder struct {
	ln     net.Listener
	mu     sync.Mutex
	got    bytes.Buffer
	greet  string
	tlsCfg *tls.Config
}

func newRecorder(t *testing.T, greet string, tlsCfg *tls.Config) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln, greet: greet, tlsCfg: tlsCfg}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(c)
		}
	}()
	return r
}

func (r *recorder) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if r.greet != "" {
		_, _ = c.Write([]byte(r.greet))
	}
	var conn net.Conn = c
	if r.tlsCfg != nil {
		tc := tls.Server(c, r.tlsCfg)
		if tc.Handshake() != nil {
			return
		}
		conn = tc
	}
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		r.mu.Lock()
		r.got.Write(buf[:n])
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.got.Bytes())
}

// TestImpostorGetsNothing: a listener on the address daemon.addr names that
// cannot prove the daemon's certificate (a plain NATS greeting, one that
// claims TLS, another TLS key) receives neither the token nor the payload,
// and no client returns anything it says; the address is retired.
func TestImpostorGetsNothing(t *testing.T) {
	other, err := wire.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	const payload = `{"hook_event_name":"PostToolUse","tool_response":{"stdout":"AKIA-secret-line"}}`
	info := func(tlsReq bool) string {
		return fmt.Sprintf("INFO {\"server_id\":\"X\",\"server_name\":\"omni\",\"version\":\"2.15.2\",\"proto\":1,\"headers\":true,\"auth_required\":true,\"tls_required\":%v,\"max_payload\":33554432}\r\n", tlsReq)
	}
	for _, tc := range []struct {
		name  string
		greet string
		tls   *tls.Config
	}{
		{"plain NATS", info(false), nil},
		{"NATS claiming TLS", info(true), nil},
		{"TLS with another key", info(true), other.Server},
		{"silent", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			rec := newRecorder(t, tc.greet, tc.tls)
			ad := addrOf(rec.ln.Addr().String())
			ad.Token = token
			ad.PID = 999999
			if err := writeAddr(home, ad); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req := append([]byte{0}, payload...)
			reply, err := wire.Call(ctx, home, MethodHook, req)
			if err == nil || len(reply) > 0 {
				t.Fatalf("wire.Call through an impostor: %q, %v", reply, err)
			}
			// The full client: no spawn (a listener stays on the address).
			c := clientOf(home)
			reply, err = c.callDaemon(ctx, MethodHook, req, false, 0)
			if err == nil || len(reply) > 0 {
				t.Fatalf("Client through an impostor: %q, %v", reply, err)
			}
			time.Sleep(50 * time.Millisecond)
			got := rec.bytes()
			for _, secret := range []string{token, "AKIA-secret-line", "CONNECT", "PUB"} {
				if bytes.Contains(got, []byte(secret)) {
					t.Fatalf("the impostor received %q: %q", secret, got)
				}
			}
			if tc.greet != "" && tc.name != "silent" {
				if _, err := wire.ReadAddr(home); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the impostor's address was not retired: %v", err)
				}
			}
		})
	}
}

// TestUnsafeHome: a home of ours that others can write is repaired to
// 0700, an address file of ours to 0600; a home owned by another user is
// refused with ErrUnsafeHome (clients fail open), and an address file of
// another user inside our home is removed, never read.
func TestUnsafeHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := writeAddr(home, addrOf("127.0.0.1:1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(addrPath(home), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := CheckHome(home); err != nil {
		t.Fatalf("CheckHome of our own 0777 home: %v", err)
	}
	for path, want := range map[string]os.FileMode{home: 0o700, addrPath(home): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the foreign-owner cases need root (chown)")
	}
	if err := os.Chown(addrPath(home), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.ReadAddr(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadAddr of a foreign address file: %v, want it removed", err)
	}
	if err := os.Chown(home, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := CheckHome(home); !errors.Is(err, ErrUnsafeHome) {
		t.Fatalf("CheckHome of a foreign home: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := clientOf(home).Hook(ctx, []byte{0, '{', '}'}); !errors.Is(err, ErrUnsafeHome) {
		t.Fatalf("Hook in a foreign home: %v, want ErrUnsafeHome", err)
	}
	if _, err := wire.Call(ctx, home, MethodHook, []byte{0, '{', '}'}); !errors.Is(err, wire.ErrUnsafeHome) {
		t.Fatalf("wire.Call in a foreign home: %v, want ErrUnsafeHome", err)
	}
}

// TestShortDeadlineStorm: 64 clients at once, each sending appending
// requests alternately with 1 ms and with 5 s of deadline: the 1 ms ones
// fail (ErrTooLate or their own deadline) without touching the store's
// health, every 5 s one is answered, and the daemon never exits (two
// appends that ran out of a caller's deadline used to make it decide its
// store was broken).
func TestShortDeadlineStorm(t *testing.T) {
	home := t.TempDir()
	r := startDaemon(t, home, time.Minute, &fakeDaemon{})
	ad, err := wire.ReadAddr(home)
	if err != nil {
		t.Fatal(err)
	}
	const n, rounds = 64, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed, tooLate := 0, 0
	for i := 0; i < n; i++ {
		wg.Go(func() {
			conn, err := wire.Dial(context.Background(), ad, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			for k := 0; k < rounds; k++ {
				short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				_, err := conn.Call(short, wire.Subject(MethodStats), nil)
				cancel()
				if err != nil && errors.Is(decode(err), ErrTooLate) {
					mu.Lock()
					tooLate++
					mu.Unlock()
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err = conn.Call(ctx, wire.Subject(MethodStats), nil)
				cancel()
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					t.Errorf("client %d round %d: %v", i, k, err)
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-r.done:
		t.Fatalf("the daemon exited during the storm: %v", r.err)
	default:
	}
	if cur, err := wire.ReadAddr(home); err != nil || cur.Token != ad.Token {
		t.Fatalf("the daemon changed: %+v %v", cur, err)
	}
	t.Logf("%d requests with 1 ms answered too late; %d of %d normal ones failed", tooLate, failed, n*rounds)
}
