package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/execrun"
)

func newExecCmd(s streams) *cobra.Command {
	var session, agent, host string
	var quiet, keepSecrets bool
	var timeoutMS int
	cmd := &cobra.Command{
		Use:   "exec [--session S] [--agent A] [--host claude-code --timeout-ms T] [--] CMD [ARG...]",
		Short: "Run a command and print its output as the reader would read it",
		Long: `Runs CMD in its own process group, captures its stdout and stderr on one
pipe (merged in the order it wrote them), and prints them through the same
pipeline as a hook: redaction, the command's distiller, the collapse fallback
and the final cut, then, with --session (or $OMNI_SESSION), the ledger: lines
this reader was already shown fold into markers. Every cut is archived first
(see 'omni retrieve'). A command that fails (non-zero exit) is distilled only
when its runner's own verdict was recognised and every failure line
survives; otherwise its output is printed unchanged, and it never folds. If
omni is interrupted (SIGINT, SIGTERM, SIGHUP) the signal goes to CMD's whole
process group and what it printed is delivered, redacted. Without a session
there is no reader: nothing folds and nothing counts as shown, but redaction
and the distiller still run. omni exec exits with the command's own exit
code; a one-line footer on stderr says what was saved (OMNI_QUIET=1 or
--quiet hides it).

--host claude-code says the output is read by Claude Code's Bash tool (the
PreToolUse rewrite of 'omni pretool' adds it): no footer, and an output the
host would not show whole (30,000 characters or more; a failing run past
its ~10,000-character cut) is not recorded as shown. --timeout-ms T is the
tool's timeout: CMD is stopped (SIGTERM, SIGKILL 2 s later) early enough that
its partial output is printed before the host's timeout, with a note on
stderr, and omni exec exits 124.

CMD may be one quoted string (run with bash -c, or sh without bash) or a
program and its arguments.

Exit codes: the command's own; 127 if it could not be started; 2 a usage error
of omni exec itself; 128+N when a signal N stopped it; 124 when --timeout-ms
stopped it.`,
		Example: `  omni exec --session demo go test ./...
  omni exec --session demo -- git log -5
  omni exec --session demo 'cat go.mod | head -3'`,
		Args:               cobra.MinimumNArgs(1),
		DisableFlagParsing: false,
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeoutMS < 0 {
				return usageErr("omni exec: --timeout-ms %d: want 0 (none) or a positive number of milliseconds", timeoutMS)
			}
			if host != "" && host != hooks.HostClaudeCode {
				return usageErr("omni exec: --host %q: only %s is known", host, hooks.HostClaudeCode)
			}
			q := quiet || os.Getenv("OMNI_QUIET") != "" || host != ""
			return runExec(cmd.Context(), s, hooks.CallInput{Session: session, Agent: agent, Host: host, KeepSecrets: keepSecrets},
				q, time.Duration(timeoutMS)*time.Millisecond, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&session, "session", os.Getenv("OMNI_SESSION"), "the reader's session id (default $OMNI_SESSION); without one nothing folds")
	cmd.Flags().StringVar(&agent, "agent", "", "the reader's agent id within the session")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no footer on stderr")
	cmd.Flags().BoolVar(&keepSecrets, "keep-secrets", false, "do not redact credentials, and keep the raw output in the log")
	cmd.Flags().StringVar(&host, "host", "", "the host whose tool reads the output (claude-code): its output cap applies, no footer")
	cmd.Flags().IntVar(&timeoutMS, "timeout-ms", 0, "the tool's timeout in milliseconds: stop CMD before it and print its partial output")
	return cmd
}

func runExec(ctx context.Context, s streams, in hooks.CallInput, quiet bool, timeout time.Duration, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// A signal to omni (a host timeout, Ctrl-C) goes to the command's
	// group; what it printed so far is then delivered, redacted.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	start := time.Now()
	r, err := execrun.Run(execrun.Options{Args: args, Stdin: s.In, Signals: sigs, Stop: execrun.StopBefore(timeout)})
	signal.Stop(sigs)
	if err != nil {
		return failErr(errNotRunnable, fmt.Sprintf("omni exec: %v", err))
	}
	text := string(r.Output)
	if r.Signal != nil {
		io.WriteString(s.Out, redactLocal(text, r.Command, in.KeepSecrets))
		return childExit{r.Code}
	}
	code := r.Code
	if r.Stopped {
		code = 124 // as timeout(1) reports a command it stopped
	}
	in.Door, in.Command, in.Text, in.ExitCode, in.Cwd = events.DoorExec, r.Command, text, code, cwd()
	in.Passthrough = os.Getenv("OMNI_PASSTHROUGH") != ""
	delivered := deliverCall(ctx, in)
	io.WriteString(s.Out, delivered)
	if r.Stopped {
		fmt.Fprintf(s.Err, "omni exec: stopped after %s, before the tool's %s timeout; the output above is partial\n",
			time.Since(start).Round(time.Second), timeout)
	}
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
		return redactLocal(in.Text, in.Command, in.KeepSecrets)
	}
	cctx, cancel := context.WithTimeout(ctx, hookDeadline)
	defer cancel()
	r, err := newClient().Call(cctx, in)
	if err != nil {
		homeLogf(omniHome())("%s: %v", in.Door, err)
		return redactLocal(in.Text, in.Command, in.KeepSecrets)
	}
	return r.Delivered
}

func cwd() string {
	d, _ := os.Getwd()
	return d
}
