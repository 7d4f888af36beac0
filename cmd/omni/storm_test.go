package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestHookStormNoDaemon starts 16, then 64, hook processes at once against
// a home with no daemon, twice: every first delivery prints nothing, every
// repeat prints the whole-output marker whose handle retrieves the exact
// bytes; afterwards exactly one daemon runs, and the log holds every
// invocation, each replaying byte for byte (issue 2, "Done means"; issue 5:
// "a 16- and 64-way concurrent hook storm with zero lost events"). The
// 64-way storm runs once with `omni hook` and once with the thin client
// omni-hook.
func TestHookStormNoDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the omni binary")
	}
	dir := testBinary(t, true)
	bin := filepath.Join(dir, "omni")
	thin := filepath.Join(dir, "omni-hook")
	for _, tc := range []struct {
		n      int
		client []string
	}{{16, []string{bin, "hook"}}, {64, []string{bin, "hook"}}, {64, []string{thin}}} {
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
	for i, r := range round() {
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
		h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(got), "[OMNI: identical to the 40 lines already shown, omni retrieve "), "]")
		c := exec.Command(bin, "retrieve", h)
		c.Env = env
		b, err := c.Output()
		if err != nil || string(b) != stdout[i] {
			t.Errorf("retrieve %s for %d: %v, %d bytes", h, i, err, len(b))
		}
	}
	// Exactly one daemon of this home.
	if got := daemonsOfHome(bin, home); len(got) != 1 {
		t.Errorf("daemons %v running after the storm, want exactly 1", got)
	}
	c := exec.Command(bin, "replay", "--verify")
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
	want := fmt.Sprintf("invocations %d, compared %d, identical %d, differing 0", 2*n, 2*n, 2*n)
	if !strings.Contains(string(out), want) {
		t.Errorf("replay --verify: %s\nwant %q (no event lost)", out, want)
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
