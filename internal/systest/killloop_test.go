//go:build unix

package systest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/internal/testbin"
)

// killLoopCalls is how many corpus calls the kill loop replays,
// killLoopWorkers how many hook processes run at once, and killLoopEvery
// how often every daemon of the test binary is killed: once a second, so a
// daemon mostly lives long enough to acknowledge calls before it dies (at
// every 250 ms, on a loaded two-core machine, most daemons died while
// starting, 51 of the 60 calls reached the log against 58 at every second,
// and the test took 63.5 s of CPU against 22–44 s at every second).
const (
	killLoopCalls   = 60
	killLoopWorkers = 4
	killLoopEvery   = time.Second
	killLoopKick    = 10
)

// TestKillLoopDuringReplay replays real corpus calls through `omni hook`
// processes while the daemon is killed with SIGKILL every killLoopEvery.
// Afterwards every recorded invocation replays
// byte for byte, and every handle a hook printed retrieves its bytes: no
// acknowledged call is lost, no handle names missing bytes.
func TestKillLoopDuringReplay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns and kills daemons")
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "sweagent-demos.jsonl"))
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	recs, err := bench.LoadCorpus(files)
	if err != nil {
		t.Fatal(err)
	}
	// The first killLoopCalls calls of the file: each one may spawn a
	// daemon that the loop kills, so every call is a race; the whole file
	// (179 calls) took ten minutes on a busy two-core machine.
	recs = recs[:min(len(recs), killLoopCalls)]
	dir := t.TempDir()
	bin := testbin.Omni(t)
	home := filepath.Join(dir, "home")
	env := withoutEnv(append(os.Environ(), "OMNI_HOME="+home), "OMNI_NO_DAEMON")
	t.Cleanup(func() {
		c := exec.Command(bin, "daemon", "--stop")
		c.Env = env
		_ = c.Run()
	})
	stop := make(chan struct{})
	// kick asks for a kill now: every killLoopKick calls, so a fast machine
	// (a whole run in under a second) still kills daemons mid-run.
	kick := make(chan struct{}, 1)
	var done atomic.Int64
	killed := 0
	go func() {
		tick := time.NewTicker(killLoopEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-kick:
				for _, pid := range daemonsOf(bin) {
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						killed++
					}
				}
			case <-tick.C:
				for _, pid := range daemonsOf(bin) {
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						killed++
					}
				}
			}
		}
	}()
	handleRe := regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)
	handles := map[string]bool{}
	replies := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	// killLoopWorkers hook processes at a time: a call mostly waits for a
	// daemon to start (and be killed), so the waits overlap.
	for w := 0; w < killLoopWorkers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(recs); i += killLoopWorkers {
				r := recs[i]
				payload, _ := bench.Payload(r, "demo")
				stdin, _ := json.Marshal(payload)
				c := exec.Command(bin, "hook")
				c.Env = env
				c.Stdin = bytes.NewReader(stdin)
				var out bytes.Buffer
				c.Stdout = &out
				if err := c.Run(); err != nil {
					t.Errorf("hook exited %v (a hook must always exit 0)", err)
					return
				}
				if done.Add(1)%killLoopKick == 0 {
					select {
					case kick <- struct{}{}:
					default:
					}
				}
				if out.Len() == 0 {
					continue
				}
				if !json.Valid(out.Bytes()) {
					t.Errorf("malformed reply: %q", out.String())
					return
				}
				mu.Lock()
				replies++
				for _, m := range handleRe.FindAllStringSubmatch(out.String(), -1) {
					if !strings.Contains(r.Output, m[0]) {
						handles[m[1]] = true
					}
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		close(stop)
		return
	}
	close(stop)
	t.Logf("%d calls, %d replies, %d handles, %d daemons killed", len(recs), replies, len(handles), killed)
	if killed == 0 {
		t.Fatal("no daemon was killed: the loop tested nothing")
	}
	if len(handles) == 0 {
		t.Fatal("no hook printed a handle: the loop checked no archive")
	}
	for h := range handles {
		c := exec.Command(bin, "retrieve", h)
		c.Env = env
		if out, err := c.Output(); err != nil || len(out) == 0 {
			t.Errorf("handle %s printed by a hook does not retrieve: %v", h, err)
		}
	}
	c := exec.Command(bin, "replay", "--verify")
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "differing 0") {
		t.Fatalf("replay --verify after the kill loop: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}
