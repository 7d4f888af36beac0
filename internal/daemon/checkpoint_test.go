package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
)

func hookReq(session, cmd, stdout string) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}}
	b, _ := json.Marshal(p)
	return append([]byte{0}, b...)
}

// TestDaemonCheckpoint: the daemon's handler writes checkpoint.bin every
// checkpointEvery batches and when it closes; the next start restores it
// (stats identical to a full fold, a repeat folds against the restored
// ledger); a corrupt checkpoint is logged and ignored.
func TestDaemonCheckpoint(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OMNI_HOME", home)
	old := checkpointEvery
	checkpointEvery = 3
	t.Cleanup(func() { checkpointEvery = old })
	ctx := context.Background()
	var out strings.Builder
	for i := 0; i < 43; i++ {
		fmt.Fprintf(&out, "  %4d  /alpha/item-%02d/shards/segment-%03d.idx\n", 1000+i, i, i*13)
	}
	open := func() (Handler, func() error, func()) {
		st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		h, closeH, err := ServiceHandler(Config{Home: home, Version: testVersion})(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		return h, closeH, func() { _ = st.Close() }
	}
	stats := func(h Handler) string {
		b, err := h(ctx, "stats", nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	h, closeH, closeSt := open()
	for i := 0; i < 5; i++ {
		if _, err := h(ctx, "hook", hookReq(fmt.Sprintf("s%d", i), "python3 rank.py", out.String())); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(checkpointPath(home)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint after checkpointEvery batches")
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := stats(h)
	if err := closeH(); err != nil {
		t.Fatal(err)
	}
	closeSt()

	h, closeH, closeSt = open()
	if got := stats(h); got != want {
		t.Fatalf("stats after restore differ:\n%s\n%s", got, want)
	}
	b, err := h(ctx, "hook", hookReq("s1", "python3 rank.py", out.String()))
	if err != nil || !strings.Contains(string(b), "identical to the 43 lines already shown") {
		t.Fatalf("repeat after restore: %s %v", b, err)
	}
	want = stats(h)
	if err := closeH(); err != nil {
		t.Fatal(err)
	}
	closeSt()
	logb, _ := os.ReadFile(filepath.Join(home, "omni.log"))
	if !strings.Contains(string(logb), "engine from checkpoint 5,") {
		t.Fatalf("restore not logged:\n%s", logb)
	}

	if err := os.WriteFile(checkpointPath(home), []byte("\x01garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, closeH, closeSt = open()
	if got := stats(h); got != want {
		t.Fatalf("stats after a corrupt checkpoint differ:\n%s\n%s", got, want)
	}
	if err := closeH(); err != nil {
		t.Fatal(err)
	}
	closeSt()
	logb, _ = os.ReadFile(filepath.Join(home, "omni.log"))
	if !strings.Contains(string(logb), "checkpoint ignored") {
		t.Fatalf("corrupt checkpoint not logged:\n%s", logb)
	}
	if cp := loadCheckpoint(home, testVersion, t.Logf); cp == nil || cp.Seq != 6 {
		t.Fatalf("closing did not replace the corrupt checkpoint: %+v", cp)
	}
}

// TestCheckpointPerBackend: each backend and stream has its own checkpoint
// file; the embedded store's never reads a cluster's (which would take the
// cluster's batches for lost ones of the embedded log).
func TestCheckpointPerBackend(t *testing.T) {
	home := t.TempDir()
	emb := checkpointFile(home, "embedded")
	a := checkpointFile(home, "nats://n1:4222 stream EVENTS")
	b := checkpointFile(home, "nats://n1:4222 stream OTHER")
	if emb != checkpointPath(home) || a == emb || b == emb || a == b {
		t.Fatalf("checkpoint files: %s %s %s", emb, a, b)
	}
	for _, p := range []string{emb, a, b} {
		if !isCheckpointFile(home, p) {
			t.Errorf("%s is not seen as a checkpoint (forget would keep it)", p)
		}
	}
	// A cluster checkpoint far ahead does not count as the embedded one's.
	cp := hooks.Checkpoint{Seq: 900}
	body, err := cp.MarshalBinary()
	if err != nil {
		t.Skipf("an empty checkpoint does not encode: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(a), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(a, seal(checkpointHeader(testVersion), body)); err != nil {
		t.Fatal(err)
	}
	if got := checkpointSeqAt(emb); got != 0 {
		t.Errorf("the embedded store reads checkpoint seq %d from the cluster's file", got)
	}
	if got := checkpointSeqAt(a); got != 900 {
		t.Errorf("the cluster's checkpoint reads %d", got)
	}
}
