// Package execrun runs the command of `omni exec` the way Claude Code's
// Bash tool would: one command string through bash (the user's shell, so
// bash syntax such as `ls *.{py,sh}` works), in its own process group,
// stdout and stderr on one pipe so they arrive merged in the order the
// command wrote them (docs/HOSTS.md: sh -c broke bash syntax, stderr was
// reordered before stdout, a SIGTERM reached only sh). A signal to omni
// goes to the whole group; a deadline stops the group early enough that the
// partial output is printed before the host's own timeout. Standard
// library only.
package execrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omnictx/omni/internal/platform"
)

// Options are one run's inputs.
type Options struct {
	// Args is the command: one string that holds a blank or a shell
	// character is a command line run by Shell -c; otherwise a program and
	// its arguments, run directly.
	Args []string
	// Shell runs a one-string command ("" : bash from PATH, else sh).
	Shell string
	// Stdin is the command's stdin (nil: /dev/null).
	Stdin io.Reader
	// Env is the command's environment (nil: omni's).
	Env []string
	// Signals, when set, delivers signals for the command: each is sent to
	// its whole process group.
	Signals <-chan os.Signal
	// Stop, when positive, is how long the command may run: then its group
	// gets SIGTERM, and SIGKILL Grace later.
	Stop time.Duration
	// Grace is the time between SIGTERM and SIGKILL (0: 2 s).
	Grace time.Duration
}

// Result is one finished run.
type Result struct {
	// Command is the command line as run (the one string, or the
	// arguments joined by spaces).
	Command string
	// Output is stdout and stderr merged in arrival order.
	Output []byte
	// Code is the exit status: the command's own, 128+N when signal N
	// ended it.
	Code int
	// Signal is the first signal forwarded from Options.Signals (nil: none).
	Signal os.Signal
	// Stopped reports that Options.Stop ran out and the group was stopped.
	Stopped bool
}

// ErrNotRunnable wraps a command that could not be started.
var ErrNotRunnable = errors.New("command not runnable")

// drainWait bounds the read of the pipe after the command exited: a
// process it left running in the background may hold the pipe open.
const drainWait = 500 * time.Millisecond

// Shell returns the shell that runs a one-string command: bash when it is
// on PATH (Claude Code's Bash tool runs the user's bash), else sh; on
// Windows Git Bash (never WSL's bash), else PowerShell, else cmd
// (platform.ChooseShell). platform.ShellCommand runs the line with it.
func Shell() string {
	p, _ := platform.Shell()
	return p
}

// Run runs o.Args and returns its merged output and exit status. Errors:
// ErrNotRunnable (wrapped) when the command cannot be started or waited for.
func Run(o Options) (Result, error) {
	if len(o.Args) == 0 {
		return Result{}, fmt.Errorf("%w: no command", ErrNotRunnable)
	}
	var c *exec.Cmd
	res := Result{Command: strings.Join(o.Args, " ")}
	if len(o.Args) == 1 && strings.ContainsAny(o.Args[0], " \t\n;|&<>$`'\"*?(){}[]~#=\\") {
		sh := o.Shell
		if sh == "" {
			sh = Shell()
		}
		c = platform.ShellCommand(sh, o.Args[0]) // cmd.exe gets its line verbatim
		res.Command = o.Args[0]
	} else {
		c = exec.Command(o.Args[0], o.Args[1:]...)
	}
	c.Env = o.Env
	c.Stdin = o.Stdin
	platform.Group(c)
	r, w, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrNotRunnable, err)
	}
	defer r.Close()
	c.Stdout, c.Stderr = w, w // one descriptor: the kernel keeps the order
	if err := c.Start(); err != nil {
		w.Close()
		return res, fmt.Errorf("%w: %v", ErrNotRunnable, err)
	}
	w.Close()
	var out lockedBuffer
	read := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, r)
		close(read)
	}()
	pgid := c.Process.Pid
	group := func(s os.Signal) { _ = platform.SignalGroup(pgid, s) }
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	var stop <-chan time.Time
	if o.Stop > 0 {
		t := time.NewTimer(o.Stop)
		defer t.Stop()
		stop = t.C
	}
	grace := o.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	var kill <-chan time.Time
	var werr error
wait:
	for {
		select {
		case werr = <-exited:
			break wait
		case s := <-o.Signals:
			if res.Signal == nil {
				res.Signal = s
			}
			group(s)
		case <-stop:
			res.Stopped = true
			group(platform.TermSignal)
			kt := time.NewTimer(grace)
			defer kt.Stop()
			kill, stop = kt.C, nil
		case <-kill:
			_ = platform.KillGroup(pgid)
			kill = nil
		}
	}
	if res.Stopped {
		_ = platform.KillGroup(pgid) // what the stop left behind
	}
	if r.SetReadDeadline(time.Now().Add(drainWait)) == nil {
		<-read
	} else {
		// A pipe without deadlines (Windows): stop waiting instead; what
		// a background process writes later is not the command's output.
		select {
		case <-read:
		case <-time.After(drainWait):
		}
	}
	res.Output = out.take()
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return res, fmt.Errorf("%w: %v", ErrNotRunnable, werr)
		}
		res.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal()) // as a shell reports a command killed by a signal
		}
	}
	return res, nil
}

// StopBefore returns how long a command may run under a host timeout so
// that omni exec can stop it and print its partial output before the host
// kills it: the timeout less a margin for the stop's grace and the
// pipeline (a third of the timeout, at most 8 s: 2 s grace, the hook's
// 4 s deadline, 2 s slack). 0 for no timeout.
func StopBefore(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 0
	}
	return timeout - min(timeout/3, 8*time.Second)
}

// lockedBuffer is the output as read so far, safe to take while the
// reader may still be writing (a pipe a background process holds open on
// a system without read deadlines).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns a copy of the bytes written so far.
func (b *lockedBuffer) take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
