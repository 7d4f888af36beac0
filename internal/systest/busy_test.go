package systest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testbin"
)

// TestHookFailsOpenAtOnceWhileBenchHoldsStore: while a long command (omni
// bench --home) holds the store and has marked it busy, a hook of that home
// prints nothing (the host keeps its output) well before its 4 s deadline,
// and says why in omni.log; a stale mark (its process gone) is ignored.
func TestHookFailsOpenAtOnceWhileBenchHoldsStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds omni")
	}
	bin := testbin.Omni(t)
	home := t.TempDir()
	_, closeStore, err := daemon.OpenStore(context.Background(), daemon.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	clear := daemon.MarkBusy(home, "omni bench")
	defer clear()
	hook := func() (time.Duration, []byte) {
		c := exec.Command(bin, "hook")
		c.Env = append(withoutEnv(os.Environ(), "OMNI_NO_DAEMON"), "OMNI_HOME="+home)
		c.Stdin = bytes.NewReader([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\nb\n","stderr":""}}`))
		t0 := time.Now()
		out, err := c.Output()
		if err != nil {
			t.Fatalf("hook: %v", err)
		}
		return time.Since(t0), out
	}
	d, out := hook()
	if len(out) != 0 || d > 2*time.Second {
		t.Fatalf("hook while the store is busy: %v, printed %q", d, out)
	}
	log, _ := os.ReadFile(filepath.Join(home, "omni.log"))
	if !bytes.Contains(log, []byte("the store is busy: omni bench (pid")) {
		t.Fatalf("omni.log: %s", log)
	}
	// A mark whose process is gone does not count.
	os.WriteFile(daemon.BusyPath(home), []byte(`{"pid":999999999,"what":"omni bench"}`), 0o600)
	if who, busy := daemon.StoreBusy(home); busy {
		t.Fatalf("a dead process's mark counts: %s", who)
	}
}
