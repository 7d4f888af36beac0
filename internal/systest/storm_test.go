package systest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omnictx/omni/internal/testbin"
)

// TestHookStormNoDaemon starts 24 hook processes of `omni hook`, then 32 of
// the thin client omni-hook, at once against a home with no daemon, twice:
// every first delivery prints nothing, every repeat prints the
// whole-output marker whose handle retrieves the exact bytes; afterwards
// exactly one daemon runs, and the log holds every invocation, each
// replaying byte for byte: zero lost events under both concurrent storms
// (on two cores, 24 processes started at once already contend for the
// one daemon spawn and the store lock; the rounds were 48 and 64 before,
// twice the processes on the same paths). On a loaded machine some hooks miss their 4 s deadline and
// fail open (print nothing, log why): the test accounts for each of them
// in omni.log instead of demanding a marker.
func TestHookStormNoDaemon(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and spawns the omni binary")
	}
	dir := testbin.Dir(t, true)
	bin := filepath.Join(dir, "omni")
	thin := filepath.Join(dir, "omni-hook")
	for _, tc := range []struct {
		n      int
		client []string
	}{{24, []string{bin, "hook"}}, {32, []string{thin}}} {
		t.Run(fmt.Sprintf("%d-%s", tc.n, filepath.Base(tc.client[0])), func(t *testing.T) {
			hookStorm(t, bin, tc.client, filepath.Join(t.TempDir(), "home"), tc.n)
		})
	}
}

// hookStorm runs two rounds of n concurrent hook calls (client) on a fresh
// home and checks every reply, the single daemon and the log.
func hookStorm(t *testing.T, bin string, client []string, home string, n int) {
	dir := filepath.Dir(home)
	env := append(os.Environ(), "OMNI_HOME="+home)
	env = withoutEnv(env, "OMNI_NO_DAEMON")
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "omni.log")); err == nil {
				t.Logf("omni.log:\n%s", b)
			}
		}
		c := exec.Command(bin, "daemon", "--stop")
		c.Env = env
		_ = c.Run()
	})
	stdout := make([]string, n)
	for i := range stdout {
		var b strings.Builder
		for k := 0; k < 40; k++ {
			fmt.Fprintf(&b, "storm %02d line %02d: the quick brown fox jumps over the lazy dog\n", i, k)
		}
		stdout[i] = b.String()
	}
	payload := func(i int) []byte {
		p, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("storm-%02d", i), "cwd": dir,
			"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "./gen"},
			"tool_response": map[string]any{"stdout": stdout[i], "stderr": "", "interrupted": false}})
		return p
	}
	round := func() []string {
		replies := make([]string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c := exec.Command(client[0], client[1:]...)
				c.Env = env
				c.Stdin = bytes.NewReader(payload(i))
				var out bytes.Buffer
				c.Stdout = &out
				<-start
				if err := c.Run(); err != nil {
					t.Errorf("hook %d: %v", i, err)
				}
				replies[i] = out.String()
			}(i)
		}
		close(start)
		wg.Wait()
		return replies
	}
	for i, r := range round() {
		if r != "" {
			t.Errorf("first delivery %d printed %q", i, r)
		}
	}
	markers, silent := 0, 0
	for i, r := range round() {
		if r == "" {
			// Failed open: the hook gave up within its deadline (or its
			// first delivery did, so this one is a first delivery again);
			// omni.log must say so, which is checked below.
			silent++
			continue
		}
		var reply struct {
			HSO struct {
				Out struct {
					Stdout string `json:"stdout"`
				} `json:"updatedToolOutput"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r), &reply); err != nil {
			t.Errorf("repeat %d: reply %q: %v", i, r, err)
			continue
		}
		got := reply.HSO.Out.Stdout
		if !strings.HasPrefix(got, "[OMNI: identical to the 40 lines already shown, omni retrieve ") {
			t.Errorf("repeat %d: stdout %q", i, got)
			continue
		}
		markers++
		h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(got), "[OMNI: identical to the 40 lines already shown, omni retrieve "), "]")
		c := exec.Command(bin, "retrieve", h)
		c.Env = env
		b, err := c.Output()
		if err != nil || string(b) != stdout[i] {
			t.Errorf("retrieve %s for %d: %v, %d bytes", h, i, err, len(b))
		}
	}
	// Every hook that printed nothing on a repeat gave up (fail open) and
	// said so in omni.log: its first delivery or its repeat missed the
	// deadline on a loaded machine. Lines saying a thin client found no
	// daemon and ran omni hook are not give-ups.
	gaveUp := 0
	if b, err := os.ReadFile(filepath.Join(home, "omni.log")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasSuffix(l, ": running omni hook") {
				gaveUp++
			}
		}
	}
	t.Logf("%d repeats: %d markers, %d failed open (%d give-ups in omni.log)", n, markers, silent, gaveUp)
	if silent > gaveUp {
		t.Errorf("%d repeats printed nothing, omni.log explains %d: a hook went silent without failing open", silent, gaveUp)
	}
	if markers == 0 {
		t.Errorf("no repeat printed a marker: the storm tested nothing")
	}
	// Exactly one daemon of this home.
	if got := daemonsOfHome(bin, home); len(got) != 1 {
		t.Errorf("daemons %v running after the storm, want exactly 1", got)
	}
	// Every invocation that reached the daemon replays byte for byte; a
	// hook that failed open before the daemon recorded it left no event.
	c := exec.Command(bin, "replay", "--verify")
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`invocations (\d+), compared (\d+), identical (\d+), differing 0`).FindStringSubmatch(string(out))
	if m == nil || m[1] != m[2] || m[2] != m[3] {
		t.Fatalf("replay --verify: %s\nwant every invocation compared and identical", out)
	}
	// Each of the 2n calls is in the log or gave up in omni.log.
	if inv, _ := strconv.Atoi(m[1]); inv+gaveUp < 2*n || inv > 2*n || inv < 2*markers {
		t.Errorf("replay --verify: %d invocations of %d calls, %d give-ups, %d markers: an event was lost", inv, 2*n, gaveUp, markers)
	}
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// daemonsOfHome returns the pids of bin's daemons serving home.
func daemonsOfHome(bin, home string) []int {
	var out []int
	for _, pid := range daemonsOf(bin) {
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00OMNI_HOME="+home+"\x00")) {
			out = append(out, pid)
		}
	}
	return out
}
