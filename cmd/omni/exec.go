package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/redact"
)

func newExecCmd(s streams) *cobra.Command {
	var session, agent string
	var quiet, keepSecrets bool
	cmd := &cobra.Command{
		Use:   "exec [--session S] [--agent A] [--] CMD [ARG...]",
		Short: "Run a command and print its output as the reader would read it",
		Long: `Runs CMD, captures its stdout, and prints it through the same pipeline as a
hook: redaction, the command's distiller, the collapse fallback and the final
cut, then, with --session (or $OMNI_SESSION), the ledger: lines this reader
was already shown fold into markers. Every cut is archived first (see
'omni retrieve'). stderr is passed through untouched. A command that fails
(non-zero exit) is distilled only when its runner's own verdict was
recognised and every failure line survives; otherwise its output is printed
unchanged, and it never folds. If omni is interrupted (SIGINT, SIGTERM,
SIGHUP) the signal goes to CMD and what it printed is delivered raw. Without
a session there is no reader: nothing folds and nothing counts as shown, but
redaction and the distiller still run. omni exec exits with the
command's own exit code; a one-line footer on stderr says what was saved
(OMNI_QUIET=1 or --quiet hides it).

CMD may be one quoted string (run with sh -c) or a program and its arguments.

Exit codes: the command's own; 127 if it could not be started; 2 a usage error
of omni exec itself; 128+N when a signal N stopped it.`,
		Example: `  omni exec --session demo go test ./...
  omni exec --session demo -- git log -5
  omni exec --session demo 'cat go.mod | head -3'`,
		Args:               cobra.MinimumNArgs(1),
		DisableFlagParsing: false,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd.Context(), s, session, agent, quiet || os.Getenv("OMNI_QUIET") != "", keepSecrets, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&session, "session", os.Getenv("OMNI_SESSION"), "the reader's session id (default $OMNI_SESSION); without one nothing folds")
	cmd.Flags().StringVar(&agent, "agent", "", "the reader's agent id within the session")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no footer on stderr")
	cmd.Flags().BoolVar(&keepSecrets, "keep-secrets", false, "do not redact credentials, and keep the raw output in the log")
	return cmd
}

func runExec(ctx context.Context, s streams, session, agent string, quiet, keepSecrets bool, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var c *exec.Cmd
	command := strings.Join(args, " ")
	if len(args) == 1 && strings.ContainsAny(args[0], " \t\n;|&<>$`'\"*?(){}") {
		c = exec.CommandContext(ctx, "sh", "-c", args[0])
		command = args[0]
	} else {
		c = exec.CommandContext(ctx, args[0], args[1:]...)
	}
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = s.Err
	if !keepSecrets {
		// stderr reaches the agent without passing the daemon: it is
		// redacted here, line by line (issue 12).
		rw := redact.NewWriter(s.Err)
		defer rw.Close()
		c.Stderr = rw
	}
	c.Stdin = s.In
	start := time.Now()
	if err := c.Start(); err != nil {
		return failErr(errNotRunnable, fmt.Sprintf("omni exec: %v", err))
	}
	// A signal to omni (a host timeout, Ctrl-C) goes to the command; what it
	// printed so far is then delivered raw, never lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sg := <-sigs:
				got = sg
				_ = c.Process.Signal(sg)
			case <-done:
				return
			}
		}
	}()
	err := c.Wait()
	close(done)
	signal.Stop(sigs)
	if got != nil {
		io.WriteString(s.Out, out.String())
		code := 128
		if n, ok := got.(syscall.Signal); ok {
			code += int(n)
		}
		return childExit{code}
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return failErr(errNotRunnable, fmt.Sprintf("omni exec: %v", err))
		}
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal()) // as a shell reports a command killed by a signal
		}
	}
	text := out.String()
	delivered := deliverCall(ctx, hooks.CallInput{Door: events.DoorExec, Command: command, Text: text,
		ExitCode: code, Session: session, Agent: agent, Cwd: cwd(), Passthrough: os.Getenv("OMNI_PASSTHROUGH") != "",
		KeepSecrets: keepSecrets})
	io.WriteString(s.Out, delivered)
	if !quiet && len(text) > 0 && len(delivered) < len(text) {
		fmt.Fprintf(s.Err, "[omni] %d → %d bytes (%.1f%% saved) %dms\n", len(text), len(delivered),
			100*float64(len(text)-len(delivered))/float64(len(text)), time.Since(start).Milliseconds())
	}
	if code != 0 {
		return childExit{code}
	}
	return nil
}

// deliverCall runs one exec/pipe output through the daemon (or in-process)
// and returns the text to print; on any error, the raw text (fail open).
func deliverCall(ctx context.Context, in hooks.CallInput) string {
	if in.Text == "" || !utf8.ValidString(in.Text) {
		// Invalid UTF-8 cannot cross the JSON request byte for byte:
		// nothing is recorded, the text passes redacted here.
		return redactLocal(in.Text, in.KeepSecrets)
	}
	cctx, cancel := context.WithTimeout(ctx, hookDeadline)
	defer cancel()
	r, err := newClient().Call(cctx, in)
	if err != nil {
		homeLogf(omniHome())("%s: %v", in.Door, err)
		return redactLocal(in.Text, in.KeepSecrets)
	}
	return r.Delivered
}

func cwd() string {
	d, _ := os.Getwd()
	return d
}
