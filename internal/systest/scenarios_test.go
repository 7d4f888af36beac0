package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/internal/testbin"
)

// scenariosDir is the shared scenario suite, relative to cmd/omni;
// ownScenariosDir the repository's own scenarios (same format, run by the
// same run.py), written from the real Claude Code 2.1.328 payload shapes.
const (
	scenariosDir    = "../../../shared/scenarios"
	ownScenariosDir = "testdata/scenarios"
)

// scenarioReport is the JSON report of run.py --json.
type scenarioReport struct {
	Scenarios []struct {
		ID     string          `json:"id"`
		Class  string          `json:"class"`
		OK     bool            `json:"ok"`
		Checks []scenarioCheck `json:"checks"`
	} `json:"scenarios"`
	Passed       int `json:"passed"`
	Total        int `json:"total"`
	ChecksPassed int `json:"checks_passed"`
	ChecksTotal  int `json:"checks_total"`
}

// scenarioCheck is one check of a scenario in run.py's report.
type scenarioCheck struct {
	Step   any    `json:"step"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
	OK     bool   `json:"ok"`
}

// TestScenarios builds the omni binary and runs the shared hook scenarios
// (../shared/scenarios/run.py) against it: every check of every scenario
// must pass, and no `omni daemon` of that binary may outlive the run by
// more than 10 s (each scenario's home is deleted by run.py, and a daemon
// exits once its home is gone).
func TestScenarios(t *testing.T) {
	// Not parallel: the scenarios time their hooks (max_ms), so they run
	// first, before this package's storms and corpus passes start.
	if testing.Short() {
		t.Skip("scenarios build omni and run 40+ scenarios; skipped under -short")
	}
	if _, err := os.Stat(filepath.Join(scenariosDir, "run.py")); err != nil {
		sharedtest.Skip(t, "../shared/scenarios")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH: the scenario runner needs it")
	}
	bin := testbin.Omni(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	run := exec.CommandContext(ctx, python, filepath.Join(scenariosDir, "run.py"), "--omni", bin, "--json", scenariosDir, ownScenariosDir)
	run.Stdout, run.Stderr = &stdout, &stderr
	// Sample the daemons of bin while the scenarios run, to show the final
	// check below looks for processes that really appear.
	stopSampling, peak := make(chan struct{}), make(chan int, 1)
	go func() {
		most := 0
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			most = max(most, len(daemonsOf(bin)))
			select {
			case <-stopSampling:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	t1 := time.Now()
	err = run.Run()
	elapsed := time.Since(t1)
	close(stopSampling)
	t.Logf("at most %d omni daemon(s) of the test binary seen at once during the run", <-peak)
	// The daemons the scenarios spawned must be gone within 10 s whatever
	// the outcome.
	defer checkNoDaemons(t, bin, 10*time.Second)
	if ctx.Err() != nil {
		t.Fatalf("run.py did not finish within 10 minutes; stderr:\n%s", scenarioTail(stderr.String(), 2000))
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: some check failed (the report says which)
		t.Fatalf("run.py: %v; stderr:\n%s", err, scenarioTail(stderr.String(), 2000))
	}
	var rep scenarioReport
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
		t.Fatalf("run.py --json printed no report (%v): %s\nstderr:\n%s", jerr, scenarioTail(stdout.String(), 1000), scenarioTail(stderr.String(), 2000))
	}
	t.Logf("scenarios in %s: %d/%d pass, %d/%d checks pass", elapsed.Round(time.Millisecond), rep.Passed, rep.Total, rep.ChecksPassed, rep.ChecksTotal)
	if rep.Total == 0 {
		t.Fatalf("run.py ran no scenario")
	}
	var failed []string
	superseded := 0
	for _, s := range rep.Scenarios {
		if s.OK {
			continue
		}
		if why, ok := supersededScenarios[s.ID]; ok && onlyFoldChecksFail(s.Checks) {
			t.Logf("%s: expected to differ: %s", s.ID, why)
			superseded++
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%s):", s.ID, s.Class)
		for _, c := range s.Checks {
			if !c.OK {
				step := "-"
				if c.Step != nil {
					step = fmt.Sprint(c.Step)
				}
				fmt.Fprintf(&b, "\n      step %s %s\n        -> %s", step, c.Check, scenarioTail(c.Detail, 600))
			}
		}
		failed = append(failed, b.String())
	}
	if len(failed) > 0 || (err != nil && superseded == 0) {
		t.Errorf("%d of %d scenarios fail:\n  %s", len(failed), rep.Total, strings.Join(failed, "\n  "))
	}
}

// checkNoDaemons fails the test if a process running `bin daemon` is still
// alive after within (found by scanning /proc/*/cmdline and /proc/*/exe).
// Survivors are reported and then sent SIGTERM (they are this test's
// children's children, started from this test's own binary).
func checkNoDaemons(t *testing.T, bin string, within time.Duration) {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Logf("no /proc: cannot check for surviving daemons")
		return
	}
	start := time.Now()
	deadline := start.Add(within)
	var pids []int
	for {
		pids = daemonsOf(bin)
		if len(pids) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(pids) == 0 {
		t.Logf("no omni daemon of %s survives the run (the last was gone %s after it)", bin, time.Since(start).Round(100*time.Millisecond))
		return
	}
	t.Errorf("%d omni daemon(s) of %s still running %s after the scenarios: pids %v", len(pids), bin, within, pids)
	for _, pid := range pids {
		_ = termProcess(pid)
	}
}

// daemonsOf lists the pids whose command line is `bin daemon ...` (argv[0]
// or the executable is bin).
func daemonsOf(bin string) []int {
	want := map[string]bool{bin: true}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		want[r] = true // os.Executable, hence a spawned daemon's argv[0], is resolved
	}
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cl) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		exe = strings.TrimSuffix(exe, " (deleted)")
		if (want[argv[0]] || want[exe]) && len(argv) > 1 && argv[1] == "daemon" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// scenarioTail returns at most the last n bytes of s.
func scenarioTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// supersededScenarios are shared scenarios that encode a fold choice omni
// gave up on purpose, with the reason. Only their "nothing folds" checks
// may fail; any other failing check still fails the test.
var supersededScenarios = map[string]string{
	"floor-under-264-bytes": "the 264-byte output floor was dropped: a run folds when it is at least 128 bytes " +
		"and saves 64 bytes beyond its marker, measured +0.31 points on the shared corpus",
	"floor-under-1024-mostly-seen": "the 'under 1,024 B with 80% seen, nothing folds' floor was dropped: it is no rule " +
		"(a repeat under 1 KB is still a repeat), measured +1.45 points on the shared corpus",
}

// onlyFoldChecksFail reports whether every failing check of a scenario is
// a "nothing changes" check (byte_identical_or_no_reply).
func onlyFoldChecksFail(checks []scenarioCheck) bool {
	for _, c := range checks {
		if !c.OK && !strings.HasPrefix(c.Check, "byte_identical_or_no_reply") {
			return false
		}
	}
	return true
}
