package main

// Pipe mode: `CMD | omni --session S`, the root command with no
// subcommand and stdin not a terminal.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/pipefilter"
	"github.com/omnictx/omni/redact"
)

func runPipe(ctx context.Context, s streams, session, agent string, keepSecrets bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := io.ReadAll(io.LimitReader(s.In, hooks.MaxInput+1))
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	text := string(b)
	if len(b) > hooks.MaxInput {
		// Too large to decide: passed through, still redacted.
		var w io.WriteCloser = nopCloser{s.Out}
		if !keepSecrets && os.Getenv("OMNI_KEEP_SECRETS") != "1" {
			w = redact.NewWriter(s.Out)
		}
		if _, err = w.Write(b); err == nil {
			_, err = io.Copy(w, s.In)
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		return err
	}
	out := deliverCall(ctx, hooks.CallInput{Door: events.DoorPipe, Text: text, Session: session, Agent: agent,
		Cwd: cwd(), Passthrough: os.Getenv("OMNI_PASSTHROUGH") != "", KeepSecrets: keepSecrets})
	_, err = io.WriteString(s.Out, out)
	return err
}

// newPipeCmd is `omni pipe`, the filter the PreToolUse rewrite puts behind
// a test or build runner (internal/rewrite). It must never break the
// pipeline it stands in: its flags are parsed by hand, and a word it does
// not know, a bad value or any failure still passes the input through
// (redacted) and exits 0.
func newPipeCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "pipe [--session S] [--agent A] [--host claude-code] [--timeout-ms T] [--command CMD]",
		Short: "Read a command's output on stdin and print it as the reader should read it (the rewrite's filter)",
		Long: `Reads the output of a command on stdin until its end and prints it through the
same pipeline as 'omni exec': redaction, the command's distiller (chosen
from --command), the collapse fallback, the final cut and, with --session,
the ledger. The exit status is unknown here, so the run is decided as a
failing one: a distiller claims it only by its runner's own failing
verdict, and nothing folds. Every cut is archived first (see 'omni
retrieve').

The PreToolUse rewrite ('omni pretool') runs it as
'set -o pipefail; CMD 2>&1 | omni pipe --host claude-code …', so the host's
shell runs CMD and the pipeline's status stays CMD's. With --host, an
output this filter leaves as it came is not recorded here: the host's
post-tool hook decides and records it; one it shortened is recorded here.

It never stops its input early. It prints what it holds and passes the rest
through as it comes (redacted, in whole lines) when --timeout-ms (the
host's tool timeout) is near, on SIGINT, SIGTERM or SIGHUP, when the
output is over 16 MiB, or when the command has exited but a process it left
behind still holds the pipe (then the output so far is taken as complete).

Exit codes: always 0 (a usage problem is reported on stderr and the input
passes through).`,
		Example:            `  go test ./... 2>&1 | omni pipe --session demo --command 'go test ./...'`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					return cmd.Help()
				}
			}
			return runFilter(cmd.Context(), s, args)
		},
	}
}

// nopCloser is a writer whose Close does nothing.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// runFilter is `omni pipe` with its words.
func runFilter(ctx context.Context, s streams, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	fs := pflag.NewFlagSet("omni pipe", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	session := fs.String("session", os.Getenv("OMNI_SESSION"), "")
	agent := fs.String("agent", "", "")
	host := fs.String("host", "", "")
	command := fs.String("command", "", "")
	timeoutMS := fs.Int("timeout-ms", 0, "")
	keep := fs.Bool("keep-secrets", false, "")
	bad := fs.Parse(args)
	if bad == nil && fs.NArg() > 0 {
		bad = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if bad == nil && *host != "" && *host != hooks.HostClaudeCode {
		bad = fmt.Errorf("--host %q: only %s is known", *host, hooks.HostClaudeCode)
	}
	if bad != nil {
		fmt.Fprintf(s.Err, "omni pipe: %v; the input passes through\n", bad)
		*session, *host = "", ""
	}
	keepSecrets := *keep
	opt := pipefilter.Options{
		In: s.In, Out: s.Out, MaxHold: hooks.MaxInput,
		Through: func(w io.Writer) io.WriteCloser {
			if keepSecrets || os.Getenv("OMNI_KEEP_SECRETS") == "1" {
				return nopCloser{w}
			}
			return redact.NewWriter(w)
		},
		Deliver: func(text string) (out string) {
			defer func() {
				if p := recover(); p != nil {
					homeLogf(omniHome())("pipe: panic: %v", p)
					out = redactLocal(text, keepSecrets) // fail open, still masked
				}
			}()
			if bad != nil {
				return redactLocal(text, keepSecrets)
			}
			return deliverCall(ctx, hooks.CallInput{Door: events.DoorPipe, Command: *command, Text: text,
				ExitCode: hooks.ExitUnknown, Session: *session, Agent: *agent, Cwd: cwd(), Host: *host,
				Deferred: *host != "", KeepSecrets: keepSecrets, Passthrough: os.Getenv("OMNI_PASSTHROUGH") != ""})
		},
		WriterGone: pipefilter.WriterGoneFunc(),
	}
	if *timeoutMS > 0 {
		t := time.Duration(*timeoutMS) * time.Millisecond
		margin := t / 10
		if margin > 5*time.Second {
			margin = 5 * time.Second
		}
		opt.Until = time.Now().Add(t - margin)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	opt.Signals = sigs
	_, why, err := pipefilter.Run(opt)
	if why != "" && why != "timeout" {
		homeLogf(omniHome())("pipe: passed through (%s)", why)
	}
	_ = err // the host stopped reading: nothing to tell it
	return nil
}
