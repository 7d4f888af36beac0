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
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/pipefilter"
	"github.com/omnictx/omni/internal/rewrite"
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
		Use:   "pipe --call TOKEN",
		Short: "The PreToolUse rewrite's filter: read a runner's output on stdin and print it as the reader should read it",
		Long: `The PreToolUse rewrite ('omni pretool') runs the agent's command in the host's
own shell as 'set -o pipefail; COMMAND 2>&1 | omni pipe --call TOKEN'. The
token names a ticket the hook wrote under $OMNI_HOME/pretool: the reader
(session, agent), the runner whose output this is, the host's timeout. A
ticket is good once.

omni pipe reads the runner's output until its end and prints it through the
same pipeline as 'omni exec': redaction, the runner's distiller, the
collapse fallback, the final cut and the reader's ledger. The exit status
is unknown here, so the run is decided as a failing one: a distiller claims
it only by its runner's own failing verdict, and nothing folds. Every cut is
archived first (see 'omni retrieve'). An output it shortened is recorded
here and the host's post-tool hook leaves it alone; one it left as it came
is not recorded here: the post-tool hook decides and records it.

It never stops reading its input. It prints what it holds and passes the
rest through as it comes (redacted, in whole lines) when the host's timeout
is near, on SIGINT, SIGTERM or SIGHUP, when the output is over 16 MiB, or on
any error. When the runner has exited but a process it left behind still
holds the pipe, the output so far is taken as complete and the pipe is kept
drained by a detached copy, so the process never meets a broken pipe.

Without a ticket (run by hand, or by a model through the allow rule omni
init writes) there is no reader: the text is redacted and distilled,
nothing is recorded as shown.

Exit codes: always 0 (a usage problem is reported on stderr and the input
passes through).`,
		Example:            `  omni pipe --call 0123456789abcdef0123456789abcdef < output.txt`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					return cmd.Help()
				}
			}
			if len(args) == 1 && args[0] == drainArg {
				_, _ = io.Copy(io.Discard, s.In)
				return nil
			}
			return runFilter(cmd.Context(), s, args)
		},
	}
}

// drainArg runs omni pipe as the detached reader that keeps a pipe drained
// after the filter printed its text (a helper the runner left still
// writes).
const drainArg = "--drain"

// nopCloser is a writer whose Close does nothing.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// runFilter is `omni pipe` with its words.
func runFilter(ctx context.Context, s streams, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// First: a signal from here on prints what was read (the host's
	// timeout, an interrupt).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	fs := pflag.NewFlagSet("omni pipe", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	call := fs.String("call", "", "")
	bad := fs.Parse(args)
	if bad == nil && fs.NArg() > 0 {
		bad = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if bad != nil {
		fmt.Fprintf(s.Err, "omni pipe: %v; the input passes through\n", bad)
	}
	var tk rewrite.Ticket
	var haveTicket bool
	if bad == nil && *call != "" {
		var err error
		if tk, err = rewrite.Redeem(omniHome(), *call, time.Now()); err == nil {
			haveTicket = true
		} else {
			homeLogf(omniHome())("pipe: %v: no reader", err)
		}
	}
	keep := haveTicket && tk.KeepSecrets
	mask := func(t string) string {
		if keep || t == "" {
			return t
		}
		return redactOrRaw(t)
	}
	opt := pipefilter.Options{
		In: s.In, Out: s.Out, MaxHold: hooks.MaxInput,
		Through: func(w io.Writer) io.WriteCloser {
			if keep {
				return nopCloser{w}
			}
			return redact.NewWriter(w)
		},
		Deliver: func(text string) (out string) {
			defer func() {
				if p := recover(); p != nil {
					homeLogf(omniHome())("pipe: panic: %v", p)
					out = mask(text) // fail open, still masked
				}
			}()
			if bad != nil {
				return mask(text)
			}
			in := hooks.CallInput{Door: events.DoorPipe, Text: text, ExitCode: hooks.ExitUnknown, Cwd: cwd(),
				Passthrough: os.Getenv("OMNI_PASSTHROUGH") != ""}
			if haveTicket {
				in.Command, in.Session, in.Agent, in.Host, in.Deferred, in.KeepSecrets =
					tk.Runner, tk.Session, tk.Agent, hooks.HostClaudeCode, true, tk.KeepSecrets
			}
			if in.Text == "" || !utf8.ValidString(in.Text) {
				return mask(in.Text)
			}
			cctx, cancel := context.WithTimeout(ctx, hookDeadline)
			defer cancel()
			r, err := newClient().Call(cctx, in)
			if err != nil {
				homeLogf(omniHome())("pipe: %v", err)
				return mask(in.Text)
			}
			return r.Delivered
		},
		WriterGone: pipefilter.WriterGoneFunc(),
	}
	if haveTicket && tk.TimeoutMS > 0 {
		t := time.Duration(tk.TimeoutMS) * time.Millisecond
		margin := t / 10
		if margin > 5*time.Second {
			margin = 5 * time.Second
		}
		opt.Until = tk.Issued.Add(t - margin)
	}
	opt.Signals = sigs
	_, why, _ := pipefilter.Run(opt) // a write error: the host stopped reading
	switch why {
	case "", "timeout":
	case "gone":
		keepDrained(s.In)
	default:
		homeLogf(omniHome())("pipe: passed through (%s)", why)
	}
	return nil
}

// redactOrRaw masks credentials in t; a panic in redaction leaves it
// whole (fail open for the reader).
func redactOrRaw(t string) (out string) {
	defer func() {
		if recover() != nil {
			out = t
		}
	}()
	out, _ = redact.Text(t)
	return out
}
