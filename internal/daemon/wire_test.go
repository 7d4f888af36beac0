package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// TestWireCall: the thin client's one call reaches a listening store that
// serves the versioned method, carries the handler's error as ErrRemote,
// reports every way of not reaching a daemon of this protocol as
// ErrNoDaemon (no address file, another protocol, nothing serving the
// method), and a refused token as ErrUnhealthy (the caller backs off).
func TestWireCall(t *testing.T) {
	ctx := context.Background()
	st := openListening(t)
	if err := st.Serve(wire.Subject("echo"), func(ctx context.Context, req []byte) ([]byte, error) {
		if string(req) == "fail" {
			return nil, errors.New("it failed")
		}
		return append([]byte("echo "), req...), nil
	}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	writeAddr := func(ad wire.Addr) {
		b, _ := json.Marshal(ad)
		if err := os.WriteFile(filepath.Join(home, wire.AddrFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wire.Call(ctx, home, "echo", []byte("x")); !errors.Is(err, wire.ErrNoDaemon) {
		t.Fatalf("no address file: %v", err)
	}
	good := addrOf(st.Addr())
	good.PID = os.Getpid()
	writeAddr(good)
	if got, err := wire.Call(ctx, home, "echo", []byte("hi")); err != nil || string(got) != "echo hi" {
		t.Fatalf("call: %q %v", got, err)
	}
	if _, err := wire.Call(ctx, home, "echo", []byte("fail")); !errors.Is(err, wire.ErrRemote) || errors.Is(err, wire.ErrNoDaemon) {
		t.Fatalf("handler error: %v", err)
	}
	if _, err := wire.Call(ctx, home, "nothing", nil); !errors.Is(err, wire.ErrNoDaemon) {
		t.Fatalf("no responder: %v", err)
	}
	other := good
	other.Protocol = wire.Protocol + 1
	writeAddr(other)
	if _, err := wire.Call(ctx, home, "echo", nil); !errors.Is(err, wire.ErrNoDaemon) {
		t.Fatalf("another protocol: %v", err)
	}
	bad := good
	bad.Token = "wrong"
	writeAddr(bad)
	if _, err := wire.Call(ctx, home, "echo", nil); !errors.Is(err, wire.ErrUnhealthy) || !errors.Is(err, wire.ErrTokenRefused) {
		t.Fatalf("wrong token: %v, want ErrUnhealthy", err)
	}
}

// TestStoreNamesMatchWire: the store names its embedded server and its
// stream itself (events/jetstream imports nothing of the daemon); the wire
// client refuses a server of another name, and the backend identity in
// daemon.addr names the default stream, so both must be the store's.
func TestStoreNamesMatchWire(t *testing.T) {
	if jetstream.ServerName != wire.ServerName {
		t.Errorf("jetstream.ServerName %q, wire.ServerName %q: clients would refuse the daemon", jetstream.ServerName, wire.ServerName)
	}
	if jetstream.StreamName != wire.DefaultStream {
		t.Errorf("jetstream.StreamName %q, wire.DefaultStream %q: the backend identity in daemon.addr names the default stream", jetstream.StreamName, wire.DefaultStream)
	}
}
