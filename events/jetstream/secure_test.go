package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// TestClusterTLSAndCreds: a server that speaks TLS with a private CA and
// authenticates users by JWT (operator mode) takes a store with the right
// .creds file and CA, and refuses, with an error that names the cause,
// wrong credentials, none, a CA that did not sign its certificate, and a
// client not set up for TLS at all (a plain nats:// URL and no CA).
func TestClusterTLSAndCreds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	ctx := context.Background()
	sec := jstest.NewSecurity(t, jstest.Want{TLS: true, Creds: true})
	c := jstest.StartWith(t, 1, jstest.Options{Security: sec})
	url := c.URL()
	if !strings.HasPrefix(url, "nats://") {
		t.Fatalf("URL %q", url)
	}
	st := openT(t, Options{URL: url, Dir: t.TempDir(), Remote: Remote{Creds: sec.Creds, CA: sec.CA, Stream: "SECURE"}})
	if _, err := st.Append(ctx, []events.Event{ev(1)}); err != nil {
		t.Fatalf("append with the right creds and CA: %v", err)
	}
	if cs, err := ProbeCluster(ctx, url, Remote{Creds: sec.Creds, CA: sec.CA, Stream: "SECURE"}); err != nil || cs.Replicas != 1 || cs.Error != "" {
		t.Fatalf("ProbeCluster with the right settings: %+v, %v", cs, err)
	}
	for _, tc := range []struct {
		name string
		r    Remote
		want string // in the error
	}{
		{"wrong creds", Remote{Creds: sec.OtherCreds, CA: sec.CA}, "authorization violation"},
		{"no creds", Remote{CA: sec.CA}, "authorization violation"},
		{"wrong CA", Remote{Creds: sec.Creds, CA: sec.OtherCA}, "certificate signed by unknown authority"},
		{"no TLS settings", Remote{Creds: sec.Creds}, "certificate signed by unknown authority"},
	} {
		tc.r.Stream = "SECURE"
		st, err := Open(ctx, Options{URL: url, Dir: t.TempDir(), Remote: tc.r})
		if err == nil {
			st.Close()
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
		if !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: Open: %v is not ErrUnreachable", tc.name, err)
		}
		if msg := strings.ToLower(err.Error()); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "connect nats://127.0.0.1:") {
			t.Errorf("%s: Open: %v; want it to name the server and %q", tc.name, err, tc.want)
		}
		if _, err := ProbeCluster(ctx, url, tc.r); err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.want) {
			t.Errorf("%s: ProbeCluster: %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestClusterMutualTLS: a server that verifies clients takes a store that
// presents a certificate signed by its CA (Remote.Cert and Key) and
// refuses one that presents none.
func TestClusterMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	ctx := context.Background()
	sec := jstest.NewSecurity(t, jstest.Want{TLS: true, MutualTLS: true})
	c := jstest.StartWith(t, 1, jstest.Options{Security: sec})
	st := openT(t, Options{URL: c.URL(), Dir: t.TempDir(), Remote: Remote{CA: sec.CA, Cert: sec.ClientCert, Key: sec.ClientKey}})
	if _, err := st.Append(ctx, []events.Event{ev(1)}); err != nil {
		t.Fatalf("append with a client certificate: %v", err)
	}
	if st, err := Open(ctx, Options{URL: c.URL(), Dir: t.TempDir(), Remote: Remote{CA: sec.CA}}); err == nil {
		st.Close()
		t.Fatal("a store without a client certificate was let in")
	} else if !strings.Contains(err.Error(), "tls") {
		// TLS 1.3: the client may see the server close the connection
		// after the handshake rather than the server's alert.
		t.Fatalf("without a client certificate: %v; want the TLS refusal", err)
	}
}
