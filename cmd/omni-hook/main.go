// Command omni-hook is the thin client of `omni hook`: it reads one hook
// payload on stdin, sends it to the running omni daemon, and prints the
// daemon's reply. On Linux and macOS it speaks to the daemon's local socket
// (package wire/thin) and links neither net, nor nats.go, nor crypto/tls,
// so it starts about as fast as a trivial Go binary; elsewhere it uses the
// daemon's TLS listener (package wire). `omni init` registers it in place
// of `omni hook` when it sits beside the omni binary.
//
// When no daemon of this protocol answers (the first call of a session,
// OMNI_NO_DAEMON, a daemon of another protocol or without a socket it can
// use), it runs `omni hook` from
// its own directory (else from $PATH) with the same payload: that starts
// or replaces the daemon, or runs in-process. It always exits 0 and prints
// either a whole reply or nothing (fail open), like `omni hook`.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire/thin"
	"github.com/omnictx/omni/internal/platform"
	"github.com/omnictx/omni/internal/rewrite"
)

// version is set at build time with -ldflags "-X main.version=..."; it
// matches cmd/omni's.
var version = "0.1.0-dev"

// maxInput is hooks.MaxInput (16 MiB): a larger payload is left to the
// host. Not imported, to keep this binary small (a test checks they agree).
const maxInput = 16 << 20

// deadline is cmd/omni's hookDeadline: past it the hook prints nothing.
const deadline = 4 * time.Second

// fallbackKill is how long the fallback `omni hook` may run before it is
// killed as hung. That process bounds its own call to the daemon by
// deadline and always exits; the kill is only a backstop, so it must also
// cover the process's start, which on a loaded machine takes seconds: a
// 64-way storm with no daemon on two cores at load 30–50 saw most
// fallbacks killed at the former 5 s backstop (deadline + 1 s) while the
// same 64 `omni hook` processes run directly all answered.
const fallbackKill = 15 * time.Second

// usage is printed for -h, --help and help.
const usage = `omni-hook: the thin client of 'omni hook'.

Reads one hook payload (JSON) on stdin, sends it to the running omni daemon
and prints its reply, exactly what 'omni hook' prints; with no daemon it
runs 'omni hook' from its own directory (else $PATH), which starts one.
Always exits 0; on any problem it prints nothing (the host keeps its own
output) and writes a line to $OMNI_HOME/omni.log. 'omni init' registers it
when it sits beside the omni binary. See 'omni hook --help'.

'omni-hook pretool' is 'omni pretool' (the PreToolUse rewrite that pipes a
test or build run's output through 'omni pipe'), answered here without
starting omni.

Usage: omni-hook < payload.json
       omni-hook pretool < payload.json
       omni-hook --version
`

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version", "version":
			fmt.Printf("omni-hook version %s+%s\n", version, thin.BuildID())
			return
		case "-h", "--help", "help":
			fmt.Print(usage)
			return
		case "pretool":
			pretool(os.Args[2:], os.Stdin, os.Stdout)
			return
		}
		// Any other argument is ignored, like the optional EVENT of
		// 'omni hook': the payload decides.
	}
	run(os.Stdin, os.Stdout, os.Stderr, len(os.Args) > 1 && os.Args[1] == thin.CursorArg)
}

// run handles one payload; every problem ends in silence (the host keeps
// its output) and, where possible, a line in $OMNI_HOME/omni.log.
func run(stdin io.Reader, stdout, stderr io.Writer, fromCursorEntry bool) {
	if h := os.Getenv("OMNI_HOME"); h != "" && !filepath.IsAbs(h) {
		// A relative home would be another one in every project directory
		// (omni refuses it and says so; a hook stays silent): the host
		// keeps its output.
		return
	}
	var st *stages
	if os.Getenv("OMNI_REPORT_STAGES") != "" {
		st = &stages{start: time.Now()}
		defer st.report(stderr) // last: it times the rest of run
	}
	home := thin.Home()
	if os.Getenv("OMNI_REPORT_RSS") != "" {
		defer reportRSS(stderr)
	}
	defer func() {
		if p := recover(); p != nil {
			logf(home, "omni-hook: panic: %v", p)
		}
	}()
	flags := byte(0)
	if os.Getenv("OMNI_PASSTHROUGH") != "" {
		flags |= thin.HookPassthrough
	}
	var buf bytes.Buffer
	buf.WriteByte(flags)
	if _, err := buf.ReadFrom(io.LimitReader(stdin, maxInput+1)); err != nil {
		logf(home, "omni-hook: read stdin: %v", err)
		return
	}
	req := buf.Bytes()
	st.readDone()
	if len(req) == 1 {
		logf(home, "hook: empty stdin")
		return
	}
	if thin.CursorDuplicate(fromCursorEntry, req[1:]) {
		return // omni's Claude Code hook run by Cursor: its own entry answers
	}
	if len(req)-1 > maxInput {
		logf(home, "hook: stdin over %d bytes, left to the host", maxInput)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if os.Getenv("OMNI_NO_DAEMON") == "" {
		reply, err := callDaemon(ctx, home, req, st)
		switch {
		case err == nil:
			if ctx.Err() == nil {
				t := time.Now()
				stdout.Write(reply)
				st.replyDone(t)
			}
			return
		case errors.Is(err, thin.ErrBackoff):
			return // a replacement is under way: fail open at once
		case errors.Is(err, thin.ErrUnhealthy):
			// The daemon took the deadline or refused the token: the next
			// hooks fail open at once while a new daemon replaces it.
			pid := 0
			if ad, aerr := thin.ReadAddr(home); aerr == nil {
				pid = ad.PID
			}
			if thin.StartBackoff(home, pid, err) {
				logf(home, "omni-hook: %v: back-off for %s, starting a replacement", err, thin.BackoffFor)
				startReplacement(home)
			}
			return
		case !errors.Is(err, thin.ErrNoDaemon):
			// The daemon took the request and failed, or the deadline
			// passed: fail open, do not send it twice.
			logf(home, "omni-hook: %v", err)
			return
		}
		logf(home, "omni-hook: %v: running omni hook", err)
	}
	fallback(home, req[1:], stdout, stderr, fromCursorEntry)
}

// fallback runs `omni hook` with the payload and copies its reply.
func fallback(home string, payload []byte, stdout, stderr io.Writer, fromCursorEntry bool) {
	bin := omniBinary()
	if bin == "" {
		logf(home, "omni-hook: no daemon answers and no omni binary was found beside %s or on $PATH", self())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), fallbackKill)
	defer cancel()
	args := []string{"hook"}
	if fromCursorEntry {
		args = append(args, thin.CursorArg)
	}
	c := exec.CommandContext(ctx, bin, args...)
	c.Stdin = bytes.NewReader(payload)
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = stderr
	if err := c.Run(); err != nil {
		logf(home, "omni-hook: %s hook: %v", bin, err)
		return
	}
	stdout.Write(out.Bytes())
}

// startReplacement starts `omni daemon` detached with thin.ReplaceEnv=1
// (its own session, output appended to daemon.log); it judges the daemon
// of the address file and takes its place when it cannot serve.
func startReplacement(home string) {
	bin := omniBinary()
	if bin == "" {
		logf(home, "omni-hook: no omni binary to start a replacement daemon")
		return
	}
	c := exec.Command(bin, "daemon")
	c.Env = append(os.Environ(), "OMNI_HOME="+home, thin.ReplaceEnv+"=1")
	c.Dir = "/"
	if f, err := platform.AppendLog(filepath.Join(home, "daemon.log")); err == nil {
		defer f.Close()
		c.Stdout, c.Stderr = f, f
	}
	platform.Detach(c)
	if err := c.Start(); err != nil {
		logf(home, "omni-hook: start a replacement daemon: %v", err)
		return
	}
	_ = c.Process.Release()
}

// omniBinary finds the omni binary: beside this one (omni.exe beside
// omni-hook.exe), else on $PATH.
func omniBinary() string {
	if s := self(); s != "" {
		name := "omni"
		if ext := filepath.Ext(s); strings.EqualFold(ext, ".exe") {
			name += ext
		}
		p := filepath.Join(filepath.Dir(s), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("omni"); err == nil {
		return p
	}
	return ""
}

func self() string {
	s, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(s); err == nil {
		return r
	}
	return s
}

// logf appends one line to $OMNI_HOME/omni.log, in omni's format.
func logf(home, format string, a ...any) {
	_ = os.MkdirAll(home, 0o700) // a fresh ~/.omni, as omni hook makes it
	f, err := platform.AppendLog(filepath.Join(home, "omni.log"))
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s pid=%d %s\n", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid(), fmt.Sprintf(format, a...))
}

// reportRSS writes this process's peak RSS for omni bench --latency.
func reportRSS(w io.Writer) {
	if b := platform.PeakRSS(os.Getpid()); b > 0 {
		fmt.Fprintf(w, "omni: peak RSS %d KiB\n", b>>10)
	}
}

// pretool answers a PreToolUse payload as 'omni pretool' does
// (rewrite.Reply, with the omni binary beside this one, else on $PATH, as
// the filter of the rewritten command). args are the words after
// "pretool": none is known; any word, OMNI_PRETOOL_REWRITE=0, or any
// problem, or no answer within deadline, prints nothing, and the host
// runs the command as written.
func pretool(args []string, stdin io.Reader, stdout io.Writer) {
	defer func() { _ = recover() }()
	if len(args) > 0 || os.Getenv("OMNI_PRETOOL_REWRITE") == "0" {
		return
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil || len(in) > maxInput || thin.CursorDuplicate(false, in) {
		return
	}
	bin := omniBinary()
	if bin == "" {
		return
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	if reply := rewrite.ReplyWithin(in, rewrite.PreTool{Omni: bin, Home: thin.Home()}, deadline); reply != nil {
		_, _ = stdout.Write(reply)
	}
}
