package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
)

func newDistillCmd(s streams) *cobra.Command {
	var command, session, agent string
	var exitCode int
	var keepSecrets bool
	cmd := &cobra.Command{
		Use:   "distill --command CMD [--exit-code N] [--session S] [FILE|-]",
		Short: "Print exactly what the model would read for one stored command output",
		Long: `Reads one command output from FILE (or stdin, or "-") and prints what the model
would read after the full pipeline: redaction, the command's distiller, the
collapse fallback, the final cut and, with --session, the ledger of that
reader. Every cut is archived first, so each handle in the output works with
'omni retrieve'. It is the debugging door for users and the surface the
golden tests use.

The distiller is chosen from --command (never from the content alone). A
non-zero --exit-code is a failing run: it is distilled only when the
runner's own verdict was recognised and every failure line survives.

Exit codes: 0 printed; 2 the file could not be read.`,
		Example: `  go test ./... > out.txt; omni distill --command 'go test ./...' --exit-code 1 out.txt`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var in io.Reader = s.In
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return failErr(err, "omni distill: "+err.Error())
				}
				defer f.Close()
				in = f
			}
			b, err := io.ReadAll(io.LimitReader(in, hooks.MaxInput+1))
			if err != nil {
				return failErr(err, "omni distill: "+err.Error())
			}
			text := string(b)
			out := redactLocal(text, command, keepSecrets) // what prints if the Engine does not answer
			if len(b) <= hooks.MaxInput && len(b) > 0 && utf8.Valid(b) {
				in := hooks.CallInput{Door: events.DoorDistill, Command: command, Text: text,
					ExitCode: exitCode, Session: session, Agent: agent, Cwd: cwd(), KeepSecrets: keepSecrets}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				r, err := newClient().Call(ctx, in)
				if err != nil {
					fmt.Fprintf(s.Err, "omni distill: %v (printing the output unshortened, redacted)\n", err)
				} else {
					out = r.Delivered
				}
			}
			_, err = io.WriteString(s.Out, out)
			return err
		},
	}
	cmd.Flags().StringVar(&command, "command", "", "the command line that produced the output (chooses the distiller)")
	cmd.Flags().IntVar(&exitCode, "exit-code", 0, "the command's exit status")
	cmd.Flags().StringVar(&session, "session", "", "run the ledger of this reader too")
	cmd.Flags().StringVar(&agent, "agent", "", "the reader's agent id within the session")
	cmd.Flags().BoolVar(&keepSecrets, "keep-secrets", false, "do not redact credentials, and keep the raw output in the log")
	return cmd
}
