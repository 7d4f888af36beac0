//go:build unix

package systest

// A harness for the PreToolUse rewrite: every command runs the way Claude
// Code's Bash tool runs it (bash -c, the user's shell snapshot sourced,
// then eval of the command and `pwd -P` into the cwd file), once as the
// agent wrote it and once as rewrite.Reply rewrites it with the real omni
// binary as the filter. What must be the same: the exit status, the cwd the
// host reads back, the files the command leaves, what it read on stdin,
// and the output lines (as a multiset: the rewrite merges stderr into
// stdout in the order written, where the host puts stderr after stdout —
// the one difference of the design, named in docs/HOSTS.md). No reply may
// carry a permission decision, and a rewritten command must start with
// the agent's text, whole.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/omnictx/omni/internal/rewrite"
	"github.com/omnictx/omni/internal/testbin"
)

// harnessMake is a runner whose behaviour each case picks with its first
// argument.
const harnessMake = `#!/bin/bash
case "$1" in
fail) echo "make: *** [all] Error $2"; echo "to stderr" >&2; exit "$2" ;;
segv) echo "before the crash"; kill -SEGV $$ ;;
helper) echo "helper started"; (sleep 2; echo late; touch "$PWD/helper-lived") & echo "make: done" ;;
stdin) read -r line; echo "read: $line" ;;
slow) echo one; sleep 5; echo two ;;
big) head -c 20000000 /dev/zero | tr '\0' 'x' | fold -w 100 ;;
env) echo "FOO=$FOO" ;;
*) touch "made-$1"; echo "make $*"; echo "warning: on stderr" >&2 ;;
esac
`

type runResult struct {
	status   int
	cwd      string
	lines    []string
	files    []string
	outputSH string
}

// hostRun runs cmd as Claude Code's Bash tool does, in a fresh copy of
// the project tree under root, and describes what it did.
func hostRun(t *testing.T, root, home, bin, snapshot, cmd string, signal bool) runResult {
	t.Helper()
	proj := filepath.Join(root, "proj")
	for _, d := range []string{"sub", "tests/u/v"} {
		if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"tests/test_a.py", "tests/u/test_b.py", "tests/u/v/test_c.py"} {
		_ = os.WriteFile(filepath.Join(proj, f), []byte("x\n"), 0o644)
	}
	cwdFile := filepath.Join(root, "cwd")
	script := "source '" + snapshot + "' && eval \"$1\" && pwd -P >| '" + cwdFile + "'"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", script, "bash", cmd)
	c.Dir = proj
	c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "OMNI_HOME="+home, "OMNI_NO_DAEMON=1")
	c.Stdin = strings.NewReader("input-line\n")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Files, as the host captures output: a process the command leaves
	// behind holding them does not hold the call.
	outF, err := os.Create(filepath.Join(root, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(root, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	defer errF.Close()
	c.Stdout, c.Stderr = outF, errF
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if signal {
		// After the filter is up (a loaded machine starts omni slowly; a
		// signal before its handler is installed ends it like any
		// process), before the runner ends.
		waitSignalReady(c.Process.Pid, strings.Contains(cmd, " pipe --call "))
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
	}
	err = c.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%q did not end within a minute: the call would hang", cmd)
	}
	if signal {
		// bash ends on the signal without waiting for its pipeline; the
		// filter, which caught it, still writes what it held: read the
		// files once every process of the group is gone.
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && syscall.Kill(-c.Process.Pid, 0) == nil; {
			time.Sleep(20 * time.Millisecond)
		}
	}
	r := runResult{}
	if ee, ok := err.(*exec.ExitError); ok {
		r.status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.status = 128 + int(ws.Signal())
		}
	}
	if b, err := os.ReadFile(cwdFile); err == nil {
		r.cwd = strings.TrimPrefix(strings.TrimSpace(string(b)), root)
	}
	ob, _ := os.ReadFile(outF.Name())
	eb, _ := os.ReadFile(errF.Name())
	text := string(ob) + string(eb)
	sum := sha256.Sum256([]byte(text))
	r.outputSH = fmt.Sprintf("%x %d", sum[:6], len(text))
	if len(text) < 1<<20 {
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			if l = normalizeLine(l); l != "" {
				r.lines = append(r.lines, l)
			}
		}
		sort.Strings(r.lines)
	}
	if strings.Contains(cmd, "helper") {
		// A process the runner left behind writes and leaves a file 2 s
		// later: it must live (its late output is the named difference).
		time.Sleep(3 * time.Second)
	}
	_ = filepath.Walk(proj, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			r.files = append(r.files, strings.TrimPrefix(p, proj))
		}
		return nil
	})
	sort.Strings(r.files)
	return r
}

var (
	bashPID = regexp.MustCompile(`^(bash: line \d+: +)\d+ `)
	// bashDone is bash's report of a pipeline one of whose commands a
	// signal ended ("  N Done  | omni pipe …"): under the rewrite the
	// runner is in a pipeline, so a crash report names the pipeline.
	bashDone = regexp.MustCompile(`^\s*\d+ Done\s+\| .* pipe --call [0-9a-f]{32}$`)
)

// normalizeLine drops what differs between two runs of the same command
// (process ids) and the named differences of the design: bash's crash
// report of a runner in the rewrite's pipeline names the pipeline (its
// "Done" line, and the runner's words with the added 2>&1).
func normalizeLine(l string) string {
	if bashDone.MatchString(l) {
		return ""
	}
	l = bashPID.ReplaceAllString(l, "${1}N ")
	if strings.Contains(l, "Segmentation fault") || strings.Contains(l, "Killed") || strings.Contains(l, "Aborted") {
		l = strings.TrimSuffix(strings.TrimRight(l, " "), " 2>&1")
	}
	return l
}

func TestRewriteHarness(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	omni := testbin.Omni(t)
	bin := t.TempDir()
	for name, body := range map[string]string{"make": harnessMake, "pytest": "#!/bin/sh\necho \"pytest got $# args: $*\"\n"} {
		testbin.WriteExecutable(t, filepath.Join(bin, name), []byte(body))
	}
	snapshot := filepath.Join(bin, "snapshot.sh")
	if err := os.WriteFile(snapshot, []byte("shopt -s globstar\nexport FOO=from-snapshot\nuseenv() { echo using; false | cat; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	pt := rewrite.PreTool{Omni: omni, Home: home, Getenv: func(string) string { return "" },
		Sources: func(string) rewrite.Sources { return rewrite.Sources{} }}
	cases := []struct {
		cmd       string
		signal    bool
		rewritten bool // the grammar takes it
	}{
		// quoting
		{cmd: `make "a b"`, rewritten: true}, {cmd: `make 'x|y; z'`, rewritten: true},
		{cmd: `make $'\''; touch evil #'`}, {cmd: `make "$FOO"`},
		// descriptors and redirections
		{cmd: "<&- make x"}, {cmd: "make x 2>&1", rewritten: true}, {cmd: "make x > out.txt"}, {cmd: "make x 1<>rw.txt"},
		// cd and lists
		{cmd: "cd sub && make x", rewritten: true}, {cmd: "cd nowhere && make x", rewritten: true},
		{cmd: "make a; make b", rewritten: true}, {cmd: "make fail 2 || make x"}, {cmd: "make fail 2; make x", rewritten: true},
		// an earlier command that is a shell function ending in a failing
		// pipeline: the pipefail must not reach it
		{cmd: "useenv && make x", rewritten: true}, {cmd: "ulimit -v 200000; make x"}, {cmd: "builtin set +o pipefail; make fail 2"},
		{cmd: "make x && make fail 3", rewritten: true}, {cmd: "cd sub; cd ..; make x", rewritten: true},
		// nested commands
		{cmd: "sh -c 'make x'"}, {cmd: "echo x | xargs make"}, {cmd: "(cd sub && make x)"},
		// exit codes and signals
		{cmd: "make fail 1", rewritten: true}, {cmd: "make fail 101", rewritten: true}, {cmd: "make segv", rewritten: true},
		{cmd: "make slow", signal: true, rewritten: true},
		// shell set-up, environment, stdin
		{cmd: "pytest tests/**/test_*.py", rewritten: true}, {cmd: "make env", rewritten: true},
		{cmd: "FOO=inline make env", rewritten: true}, {cmd: "make stdin", rewritten: true},
		// helpers, long and huge
		{cmd: "make helper", rewritten: true}, {cmd: "make slow", rewritten: true}, {cmd: "make big", rewritten: true},
		{cmd: "make " + strings.Repeat("x", 70000)},
	}
	for _, c := range cases {
		name := c.cmd
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			payload, _ := json.Marshal(map[string]any{"session_id": "s", "transcript_path": "/t/s.jsonl", "cwd": "/p",
				"permission_mode": rewrite.BypassMode, "hook_event_name": "PreToolUse", "tool_name": "Bash",
				"tool_input": map[string]any{"command": c.cmd}})
			reply := rewrite.Reply(payload, pt)
			if strings.Contains(string(reply), "permissionDecision") {
				t.Fatalf("a permission decision: %s", reply)
			}
			if (reply != nil) != c.rewritten {
				t.Fatalf("rewritten: %v, want %v (%s)", reply != nil, c.rewritten, reply)
			}
			if reply == nil {
				return
			}
			var r struct {
				HSO struct {
					In struct {
						Command string `json:"command"`
					} `json:"updatedInput"`
				} `json:"hookSpecificOutput"`
			}
			_ = json.Unmarshal(reply, &r)
			if line, _, ok := rewrite.Unwrap(r.HSO.In.Command); !ok || line != c.cmd {
				t.Fatalf("the agent's text does not read back from %q", r.HSO.In.Command)
			}
			want := hostRun(t, t.TempDir(), home, bin, snapshot, c.cmd, c.signal)
			got := hostRun(t, t.TempDir(), home, bin, snapshot, r.HSO.In.Command, c.signal)
			if got.status != want.status || got.cwd != want.cwd || strings.Join(got.files, ",") != strings.Join(want.files, ",") {
				t.Errorf("status %d cwd %q files %v; as written: status %d cwd %q files %v",
					got.status, got.cwd, got.files, want.status, want.cwd, want.files)
			}
			if want.lines == nil {
				if got.outputSH != want.outputSH {
					t.Errorf("the %s output differs: %s", want.outputSH, got.outputSH)
				}
			} else if strings.Join(got.lines, "\n") != strings.Join(want.lines, "\n") {
				t.Errorf("output lines differ:\n got %q\nwant %q", got.lines, want.lines)
			}
		})
	}
}

// waitSignalReady waits until the process group pgid is where the signal
// case means to signal it: the runner asleep between its two lines, and
// every `omni pipe` of the group (one at least when piped) past its
// signal handler's installation, which it does before its first read:
// the runner's first line already read out of the pipe (no unread bytes
// on the pipe, FIONREAD). The Go runtime's own handlers make SigCgt useless
// for that. Without /proc it waits 3 s. It gives up after 30 s (the
// comparison then shows what a late signal did).
func waitSignalReady(pgid int, piped bool) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		time.Sleep(3 * time.Second)
		return
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		asleep, pipes, pipesReady := false, 0, true
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...: comm may hold spaces.
			i := strings.LastIndexByte(string(stat), ')')
			f := strings.Fields(string(stat[i+1:]))
			if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
				continue
			}
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
			if len(args) >= 2 && filepath.Base(args[0]) == "sleep" && args[1] == "5" {
				asleep = true
			}
			if len(args) >= 2 && strings.HasPrefix(filepath.Base(args[0]), "omni") && args[1] == "pipe" {
				pipes++
				if unread(pid) != 0 {
					pipesReady = false
				}
			}
		}
		if asleep && pipesReady && (pipes > 0 || !piped) {
			return
		}
	}
}

// linuxFIONREAD is Linux's ioctl request for the bytes waiting in a pipe
// (asm-generic/ioctls.h); only used where /proc exists.
const linuxFIONREAD = 0x541B

// unread returns the bytes waiting in process pid's standard input (a
// pipe), or -1 when that cannot be told.
func unread(pid int) int {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/0", pid), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), linuxFIONREAD, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return -1
	}
	return int(n)
}
