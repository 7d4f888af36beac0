package daemon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/events/jetstream/jstest"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// noEnv is a lookup of an environment without cluster variables.
func noEnv(string) (string, bool) { return "", false }

// TestSecureCluster: on a three-node cluster that speaks TLS with a
// private CA and authenticates users by .creds (operator mode), omni init
// refuses wrong credentials and writes nothing, records the right ones,
// and a daemon started from that record serves hooks on an R3 stream. A
// home with wrong credentials, a wrong CA, or no TLS settings gets a
// daemon that exits naming the cause; its hooks fail open, the first
// after one attempt and the next ones at once, without spawning.
func TestSecureCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	sec := jstest.NewSecurity(t, jstest.Want{TLS: true, Creds: true})
	c := jstest.StartWith(t, 3, jstest.Options{Security: sec})
	ctx := context.Background()
	home := t.TempDir()

	// omni init --nats-url with the wrong creds: refused, nothing written.
	var out bytes.Buffer
	bad := ClusterSetup{Set: true, Settings: wire.ClusterConfig{URL: c.URL(), Creds: sec.OtherCreds, CA: sec.CA, Stream: "SECURE"}}
	if err := SetupCluster(ctx, &out, home, bad, noEnv); !errors.Is(err, ErrClusterSetup) || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("init with wrong creds: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ClusterFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("init with wrong creds wrote %s: %v", ClusterFile, err)
	}
	// The right ones, given relative: checked, recorded with absolute paths.
	t.Chdir(filepath.Dir(sec.Creds))
	good := ClusterSetup{Set: true, Settings: wire.ClusterConfig{URL: c.URL(), Creds: filepath.Base(sec.Creds), CA: filepath.Base(sec.CA), Stream: "SECURE"}}
	out.Reset()
	if err := SetupCluster(ctx, &out, home, good, noEnv); err != nil {
		t.Fatalf("init with the right creds: %v", err)
	}
	if s := out.String(); !strings.Contains(s, "answers") || !strings.Contains(s, "does not exist yet") ||
		!strings.Contains(s, "wrote "+filepath.Join(home, ClusterFile)) || !strings.Contains(s, "backend: stream SECURE on the NATS cluster nats://127.0.0.1:") {
		t.Fatalf("init says:\n%s", s)
	}
	cfg := WithCluster(Config{Home: home, Version: testVersion}, noEnv)
	if cfg.ClusterErr != nil || cfg.Cluster.Creds != sec.Creds || cfg.Cluster.CA != sec.CA {
		t.Fatalf("recorded settings: %+v", cfg)
	}
	m := &teamMachine{name: "secure", home: home, clone: t.TempDir(), cfg: cfg, client: NewClient(cfg)}
	startTeamDaemon(t, m)
	text := teamText("secure", 20)
	m.hook(t, "s1", "cat rows.txt", text)
	if got := m.hook(t, "s1", "cat rows.txt", text); !strings.Contains(got, "omni retrieve") {
		t.Fatalf("second delivery not folded on the secure cluster:\n%s", got)
	}
	h, err := m.client.Health(ctx)
	if err != nil || h.Cluster.Backend != "cluster" || h.Cluster.Replicas != 3 || h.Cluster.Stream != "SECURE" {
		t.Fatalf("health: %+v, %v", h.Cluster, err)
	}

	for _, tc := range []struct {
		name string
		r    jetstream.Remote
		want string
	}{
		{"wrong creds", jetstream.Remote{Creds: sec.OtherCreds, CA: sec.CA}, "Authorization Violation"},
		{"wrong CA", jetstream.Remote{Creds: sec.Creds, CA: sec.OtherCA}, "certificate signed by unknown authority"},
		{"no TLS settings", jetstream.Remote{Creds: sec.Creds}, "certificate signed by unknown authority"},
	} {
		tc.r.Stream = "SECURE"
		home := t.TempDir()
		cl := NewClient(Config{Home: home, Version: testVersion, ClusterURL: c.URL(), Cluster: tc.r})
		cl.SpawnCommand = serviceSpawn
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := cl.Hook(hctx, bashPayload("s", home, "cat rows.txt", text))
		cancel()
		if !errors.Is(err, ErrClusterDown) || !strings.Contains(err.Error(), tc.want) {
			logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
			t.Fatalf("%s: first hook: %v; want ErrClusterDown naming %q\ndaemon.log:\n%s", tc.name, err, tc.want, logs)
		}
		// The next hooks fail at once: no daemon spawned, no connection tried.
		cl.SpawnCommand = func(string) (*exec.Cmd, error) {
			t.Errorf("%s: a hook spawned a daemon inside the back-off", tc.name)
			return nil, errors.New("no spawn")
		}
		for i := 0; i < 5; i++ {
			if _, err := cl.Hook(ctx, bashPayload("s", home, "cat rows.txt", text)); !errors.Is(err, ErrClusterDown) {
				t.Fatalf("%s: hook %d inside the back-off: %v", tc.name, i, err)
			}
		}
		if logs, _ := os.ReadFile(filepath.Join(home, "daemon.log")); !strings.Contains(string(logs), tc.want) {
			t.Errorf("%s: daemon.log does not name the cause %q:\n%s", tc.name, tc.want, logs)
		}
	}
}
