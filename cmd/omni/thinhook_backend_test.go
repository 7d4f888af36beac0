package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/jetstream/jstest"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/testbin"
)

// TestThinHookFollowsBackend: the binaries as a host runs them. omni-hook
// starts a daemon on the embedded store; `omni init --nats-url` records a
// cluster; the next omni-hook does not use the daemon of the old backend
// (daemon.addr names it), its fallback `omni hook` replaces it with one on
// the cluster, and the calls after that are served there, folding as
// usual. `omni init --embedded` brings the embedded store back the same
// way, its log as it was.
func TestThinHookFollowsBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds omni and starts a NATS server and daemons")
	}
	dir := testbin.Dir(t, true)
	bin, thin := filepath.Join(dir, "omni"), []string{filepath.Join(dir, "omni-hook")}
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMNI_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "OMNI_HOME="+home, "HOME="+t.TempDir())
	omni := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("omni %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	hook := func(payload []byte) string {
		t.Helper()
		c := exec.Command(thin[0])
		c.Env = env
		c.Stdin = strings.NewReader(string(payload))
		out, err := c.Output()
		if err != nil {
			t.Fatalf("omni-hook: %v", err)
		}
		return string(out)
	}
	t.Cleanup(func() { c := exec.Command(bin, "daemon", "--stop"); c.Env = env; _ = c.Run() })
	backend := func() wire.Addr {
		t.Helper()
		ad, err := wire.ReadAddr(home)
		if err != nil {
			t.Fatalf("daemon.addr: %v", err)
		}
		return ad
	}
	var text strings.Builder
	for k := 0; k < 40; k++ {
		text.WriteString("row " + string(rune('a'+k%26)) + strings.Repeat("x", k) + " of the listing\n")
	}
	payload, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": home,
		"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "./gen"},
		"tool_response": map[string]any{"stdout": text.String(), "stderr": "", "interrupted": false}})

	if out := hook(payload); out != "" {
		t.Fatalf("first delivery printed %q", out)
	}
	if !strings.Contains(hook(payload), "omni retrieve") {
		t.Fatal("the second delivery on the embedded store is not folded")
	}
	embedded := backend()
	if embedded.Backend != "embedded" {
		t.Fatalf("daemon.addr backend %q, want embedded", embedded.Backend)
	}

	c := jstest.Start(t, 1)
	if out := omni("init", "--nats-url", c.URL(), "--nats-stream", "THIN"); !strings.Contains(out, "wrote ") {
		t.Fatalf("omni init --nats-url:\n%s", out)
	}
	// The cluster's stream is new: the reader was shown nothing there.
	if out := hook(payload); out != "" {
		t.Fatalf("first delivery on the cluster printed %q (the daemon of the embedded store answered?)", out)
	}
	onCluster := backend()
	if onCluster.PID == embedded.PID || !strings.HasSuffix(onCluster.Backend, " stream THIN") {
		t.Fatalf("after omni init --nats-url: daemon pid %d backend %q (before: pid %d)", onCluster.PID, onCluster.Backend, embedded.PID)
	}
	if !strings.Contains(hook(payload), "omni retrieve") {
		t.Fatal("the second delivery on the cluster is not folded")
	}
	if ad := backend(); ad.PID != onCluster.PID {
		t.Fatalf("the daemon on the cluster was replaced again (pid %d, then %d)", onCluster.PID, ad.PID)
	}

	omni("init", "--embedded")
	if !strings.Contains(hook(payload), "omni retrieve") {
		t.Fatal("back on the embedded store, its shown-set is gone")
	}
	if ad := backend(); ad.Backend != "embedded" || ad.PID == onCluster.PID {
		t.Fatalf("after omni init --embedded: pid %d backend %q", ad.PID, ad.Backend)
	}
	if logs, _ := os.ReadFile(filepath.Join(home, "omni.log")); !strings.Contains(string(logs), "backend") {
		t.Errorf("omni.log does not say why the daemons were replaced:\n%s", logs)
	}
}
