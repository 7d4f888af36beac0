package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// TestServiceHelperProcess is not a test: it is the real daemon
// (ServiceHandler) with the cluster settings of its environment and home
// (WithCluster), as `omni daemon` runs, for the tests that spawn one.
func TestServiceHelperProcess(t *testing.T) {
	if os.Getenv("OMNI_DAEMON_HELPER") != "service" {
		t.Skip("helper process for the backend tests")
	}
	cfg := WithCluster(Config{Home: os.Getenv("OMNI_HOME"), Version: testVersion}, os.LookupEnv)
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	if err := Run(context.Background(), cfg, 30*time.Second, logf, ServiceHandler(cfg)); err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serviceSpawn is a SpawnCommand that starts TestServiceHelperProcess.
func serviceSpawn(string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServiceHelperProcess$")
	cmd.Env = append(os.Environ(), "OMNI_DAEMON_HELPER=service")
	return cmd, nil
}

// bashPayload is one Bash PostToolUse of session run in dir, as the hook
// request (flags byte first).
func bashPayload(session, dir, cmd, stdout string) []byte {
	p, _ := json.Marshal(map[string]any{"session_id": session, "cwd": dir, "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}})
	return append([]byte{0}, p...)
}

// TestStaleBackendReplaced: a daemon started on the embedded store before
// the home was pointed at a cluster (omni init --nats-url writes
// cluster.json) names its backend in daemon.addr. The thin client's call
// refuses it (ErrNoDaemon, so omni-hook falls back to omni hook) and the
// daemon client asks it to stop and starts one on the cluster, which
// records the next hook there. Removing the settings brings the embedded
// store back the same way.
func TestStaleBackendReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server and spawns a daemon")
	}
	t.Setenv(EnvNATSURL, "")
	os.Unsetenv(EnvNATSURL) // this process reads the home's cluster.json
	home := t.TempDir()
	work := t.TempDir()
	embedded := Config{Home: home, Version: testVersion}
	old := &daemonRun{done: make(chan struct{})}
	go func() {
		old.err = Run(context.Background(), embedded, time.Hour, t.Logf, ServiceHandler(embedded))
		close(old.done)
	}()
	oldClient := NewClient(embedded)
	for deadline := time.Now().Add(20 * time.Second); oldClient.Ping(context.Background()) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the embedded daemon did not start")
		}
	}
	ad, err := wire.ReadAddr(home)
	if err != nil || ad.Backend != "embedded" {
		t.Fatalf("daemon.addr of the embedded daemon: backend %q, %v", ad.Backend, err)
	}

	c := jstest.Start(t, 1)
	if err := wire.WriteCluster(home, wire.ClusterConfig{URL: c.URL(), Stream: "STALE"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := bashPayload("s1", work, "cat rows.txt", teamText("rows", 20))
	// The thin client does not use it.
	if _, err := wire.Call(ctx, home, wire.MethodHook, req); !errors.Is(err, wire.ErrNoDaemon) || !strings.Contains(err.Error(), "backend") {
		t.Fatalf("wire.Call to the daemon of the old backend: %v, want ErrNoDaemon naming the backend", err)
	}
	select {
	case <-old.done:
		t.Fatal("the thin client stopped the daemon (it only refuses it; omni hook replaces it)")
	default:
	}
	// omni doctor's probe names it.
	if ds := Probe(ctx, home, 0); ds.State != "other backend" || !strings.Contains(ds.Detail, `"embedded"`) {
		t.Fatalf("Probe of the daemon of the old backend: %+v", ds)
	}
	// The daemon client replaces it.
	cfg := WithCluster(Config{Home: home, Version: testVersion}, os.LookupEnv)
	if cfg.ClusterURL != c.URL() || cfg.ClusterSource != filepath.Join(home, ClusterFile) {
		t.Fatalf("WithCluster read %q from %q", cfg.ClusterURL, cfg.ClusterSource)
	}
	cl := NewClient(cfg)
	cl.SpawnCommand = serviceSpawn
	t.Cleanup(func() { _, _ = cl.Stop(context.Background(), 10*time.Second) })
	if _, err := cl.Hook(ctx, req); err != nil {
		logs, _ := os.ReadFile(filepath.Join(home, "daemon.log"))
		t.Fatalf("hook after the cluster was configured: %v\ndaemon.log:\n%s", err, logs)
	}
	select {
	case <-old.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the embedded daemon was not stopped")
	}
	ad, err = wire.ReadAddr(home)
	if err != nil || ad.Backend != cfg.Backend() || ad.PID == os.Getpid() {
		t.Fatalf("daemon.addr after the replacement: %+v, %v; want backend %q from a spawned daemon", ad, err, cfg.Backend())
	}
	if !strings.HasPrefix(ad.Backend, "nats nats://127.0.0.1:") || !strings.HasSuffix(ad.Backend, " stream STALE") {
		t.Fatalf("backend %q", ad.Backend)
	}
	// The hook was recorded on the cluster's stream.
	st, err := jetstream.Open(ctx, jetstream.Options{URL: c.URL(), Dir: t.TempDir(), Remote: jetstream.Remote{Stream: "STALE"}})
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.Last(ctx)
	st.Close()
	if err != nil || last == 0 {
		t.Fatalf("the cluster's stream holds %d batches (%v): the hook was not recorded there", last, err)
	}
	// The thin client now uses the new daemon.
	if _, err := wire.Call(ctx, home, wire.MethodHook, req); err != nil {
		t.Fatalf("wire.Call to the daemon of the configured backend: %v", err)
	}

	// Back to the embedded store: the cluster daemon is replaced in turn.
	if err := wire.WriteCluster(home, wire.ClusterConfig{}); err != nil {
		t.Fatal(err)
	}
	cl2 := NewClient(WithCluster(Config{Home: home, Version: testVersion}, os.LookupEnv))
	cl2.SpawnCommand = serviceSpawn
	t.Cleanup(func() { _, _ = cl2.Stop(context.Background(), 10*time.Second) })
	if _, err := cl2.Hook(ctx, req); err != nil {
		t.Fatalf("hook after the settings were removed: %v", err)
	}
	if ad2, err := wire.ReadAddr(home); err != nil || ad2.Backend != "embedded" || ad2.PID == ad.PID {
		t.Fatalf("daemon.addr after removing the settings: %+v, %v", ad2, err)
	}
}
