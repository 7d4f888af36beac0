package daemon

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// listening opens a listening store with an echo and a failing method.
func listening(t *testing.T) *testServer {
	t.Helper()
	st := openListening(t)
	if st.Addr() == "" || !strings.HasPrefix(st.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr = %q", st.Addr())
	}
	if err := st.Serve("echo", func(ctx context.Context, req []byte) ([]byte, error) {
		return append([]byte("echo:"), req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Serve("v1.fail", func(ctx context.Context, req []byte) ([]byte, error) {
		return nil, errors.New("boom\nsecond line")
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

func dialT(t *testing.T, st *testServer) *wire.Conn {
	t.Helper()
	c, err := wire.Dial(context.Background(), addrOf(st.Addr()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestRPC(t *testing.T) {
	ctx := context.Background()
	st := listening(t)
	c := dialT(t, st)

	got, err := c.Call(ctx, "echo", []byte("hi"))
	if err != nil || string(got) != "echo:hi" {
		t.Fatalf("Call(echo) = %q, %v", got, err)
	}
	_, err = c.Call(ctx, "v1.fail", nil)
	var re *wire.RemoteError
	if !errors.As(err, &re) || re.Msg != "boom second line" || re.Method != "v1.fail" {
		t.Fatalf("Call(fail) err = %#v", err)
	}
	if _, err := c.Call(ctx, "nobody", nil); !errors.Is(err, wire.ErrNoResponders) {
		t.Fatalf("Call(nobody) err = %v, want ErrNoResponders", err)
	}
	if _, err := c.Call(ctx, "bad name", nil); err == nil {
		t.Fatal("Call with a bad name succeeded")
	}
	if err := st.Serve("a.*", nil); err == nil {
		t.Fatal("Serve with a wildcard succeeded")
	}

	// Wrong or missing token.
	for _, tok := range []string{"wrong", ""} {
		if c, err := wire.Dial(ctx, wire.Addr{Addr: st.Addr(), Token: tok, Cert: wire.CertString(testIdentity.Cert)}, time.Second); err == nil {
			c.Close()
			t.Fatalf("Dial with token %q succeeded", tok)
		}
	}
}

func TestRPCLargeRequest(t *testing.T) {
	ctx := context.Background()
	st := openListening(t)
	if err := st.Serve("big", func(ctx context.Context, req []byte) ([]byte, error) {
		return req, nil
	}); err != nil {
		t.Fatal(err)
	}
	c := dialT(t, st)
	req := bytes.Repeat([]byte{'x', 'y', 0, 0xff}, 5<<20) // 20 MiB
	got, err := c.Call(ctx, "big", req)
	if err != nil || !bytes.Equal(got, req) {
		t.Fatalf("20 MiB round trip: %d bytes, %v", len(got), err)
	}
	if _, err := c.Call(ctx, "big", make([]byte, 33<<20)); err == nil {
		t.Fatal("33 MiB request succeeded with the 32 MiB default")
	}
}

func TestRPCDeadlineAndStop(t *testing.T) {
	ctx := context.Background()
	st := openListening(t)
	handlerDone := make(chan error, 1)
	if err := st.Serve("hang", func(ctx context.Context, req []byte) ([]byte, error) {
		<-ctx.Done() // bounded by the caller's deadline (TimeoutHeader)
		select {
		case handlerDone <- ctx.Err():
		default:
		}
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	if err := st.Serve("slow", func(ctx context.Context, req []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return []byte("late"), nil
	}); err != nil {
		t.Fatal(err)
	}
	c := dialT(t, st)

	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	start := time.Now()
	_, err := c.Call(cctx, "hang", nil)
	cancel()
	var re *wire.RemoteError // the handler's deadline may fire first and reply
	if !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re)) || time.Since(start) > 2*time.Second {
		t.Fatalf("Call(hang) = %v after %s", err, time.Since(start))
	}
	select {
	case err := <-handlerDone:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("handler ctx err = %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("handler context was not bounded by the caller's deadline")
	}

	// A request in flight is answered across StopServing; new ones find no responders.
	reply := make(chan error, 1)
	go func() {
		got, err := c.Call(ctx, "slow", nil)
		if err == nil && string(got) != "late" {
			err = errors.New("bad reply " + string(got))
		}
		reply <- err
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- st.StopServing(ctx) }()
	for i := 0; ; i++ { // until the unsubscription has reached the server
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := c.Call(cctx, "hang", nil)
		cancel()
		if errors.Is(err, wire.ErrNoResponders) {
			break
		}
		if i == 100 {
			t.Fatalf("Call after StopServing: %v, want ErrNoResponders", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("StopServing returned (%v) while a handler runs", err)
	default:
	}
	close(release)
	if err := <-reply; err != nil {
		t.Fatalf("in-flight call: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("StopServing: %v", err)
	}
	if err := st.Serve("again", func(context.Context, []byte) ([]byte, error) { return nil, nil }); err == nil {
		t.Fatal("Serve after StopServing succeeded")
	}
}

func TestRPCServerGone(t *testing.T) {
	ctx := context.Background()
	st, err := jetstream.Open(ctx, listenOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	addr := st.Addr()
	c, err := wire.Dial(ctx, addrOf(addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "x", nil); !errors.Is(err, wire.ErrConnClosed) {
		t.Fatalf("Call after server Close: %v, want ErrConnClosed", err)
	}
	start := time.Now()
	if _, err := wire.Dial(ctx, addrOf(addr), time.Second); err == nil {
		t.Fatal("Dial of a closed store succeeded")
	}
	t.Logf("Dial of a closed port failed in %s", time.Since(start))
}

func TestDialForeign(t *testing.T) {
	ctx := context.Background()
	// A NATS server with another name.
	s, err := server.NewServer(&server.Options{ServerName: "other", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("server not ready")
	}
	if _, err := wire.Dial(ctx, addrOf(s.Addr().String()), time.Second); !errors.Is(err, wire.ErrUntrusted) {
		t.Fatalf("Dial(other NATS) = %v, want ErrUntrusted", err)
	}

	// A TCP listener that never speaks: Dial gives up after its timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	start := time.Now()
	if _, err := wire.Dial(ctx, addrOf(ln.Addr().String()), 100*time.Millisecond); err == nil {
		t.Fatal("Dial(silent TCP) succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Dial(silent TCP) took %s with a 100ms timeout", d)
	}
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := wire.Dial(dctx, addrOf(ln.Addr().String()), time.Second); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("Dial with a 50ms ctx: %v after %s", err, time.Since(start))
	}
}

// TestCallLatency reports the loopback Call round trip (p50, p99).
func TestCallLatency(t *testing.T) {
	ctx := context.Background()
	st := listening(t)
	c := dialT(t, st)
	const n = 500
	d := make([]time.Duration, n)
	req := bytes.Repeat([]byte("a"), 5<<10)
	for i := range d {
		start := time.Now()
		if _, err := c.Call(ctx, "echo", req); err != nil {
			t.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	t.Logf("Call (5 KiB, loopback): p50 %s, p99 %s over %d", d[n/2], d[n*99/100], n)
}

func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	js, err := jetstream.Open(ctx, listenOpts(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer js.Close()
	st := &testServer{Store: js, rpc: newRPCServer(js.Conn())}
	if err := st.Serve("echo", func(ctx context.Context, req []byte) ([]byte, error) { return req, nil }); err != nil {
		b.Fatal(err)
	}
	c, err := wire.Dial(ctx, addrOf(st.Addr()), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := bytes.Repeat([]byte("a"), 5<<10)
	for b.Loop() {
		if _, err := c.Call(ctx, "echo", req); err != nil {
			b.Fatal(err)
		}
	}
}

// testServer is a listening store with an RPC server on its connection.
type testServer struct {
	*jetstream.Store
	rpc *rpcServer
}

func (s *testServer) Serve(name string, h rpcHandler) error { return s.rpc.serve(name, h) }
func (s *testServer) StopServing(ctx context.Context) error { return s.rpc.stop(ctx) }

// testIdentity is the TLS identity of the tests' listening stores.
var testIdentity = func() wire.Identity {
	id, err := wire.NewIdentity()
	if err != nil {
		panic(err)
	}
	return id
}()

// listenOpts are the options of a listening test store (token "tok").
func listenOpts(dir string) jetstream.Options {
	return jetstream.Options{Dir: dir, Listen: true, Token: "tok", TLS: testIdentity.Server}
}

// addrOf is the address of a listening test store, as daemon.addr holds it.
func addrOf(addr string) wire.Addr {
	return wire.Addr{Addr: addr, Token: "tok", Protocol: wire.Protocol, Cert: wire.CertString(testIdentity.Cert)}
}

// openListening opens a listening store (token "tok") in a temporary
// directory, closed at the end of the test.
func openListening(t *testing.T) *testServer {
	t.Helper()
	st, err := jetstream.Open(context.Background(), listenOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{Store: st, rpc: newRPCServer(st.Conn())}
	t.Cleanup(func() {
		s.rpc.close()
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
