package main

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/doctor"
)

func newForgetCmd(s streams) *cobra.Command {
	var fromStdin, asJSON bool
	cmd := &cobra.Command{
		Use:   "forget (VALUE | --stdin)",
		Short: "Erase a value (a leaked credential) from everything omni stored",
		Long: `Erases VALUE from everything stored under $OMNI_HOME: a credential that got
in anyway (recorded by an older omni, or by a --keep-secrets run). With
--stdin the value is read from stdin (one trailing newline dropped), so it
stays out of the shell's history.

Every batch of the event log that holds the value is replaced in place, at
its own sequence, by a copy without it: an invocation whose input held it
keeps no input ('omni replay' says withheld), an archived block that held
it keeps no bytes ('omni retrieve' of its handle fails and names omni
forget), and any other place reads [REDACTED]. The old bytes are erased on
disk (overwritten). Nothing else changes: sequences, handles and the other
invocations replay as before. The forget is recorded as one "forgotten"
event holding a keyed hash of the value ($OMNI_HOME/forget.key), the
batches and the counts, never the value. The running daemon is stopped
first; the checkpoint is removed (the next daemon folds the log again);
the value is masked in base snapshots and replaced in every other file
under the home (omni.log, daemon.log).

It cannot erase copies omni never held (the host's own transcripts), and
refuses a log on a cluster (OMNI_NATS_URL): every machine holds it. VALUE
must be at least 8 bytes.

Exit codes: 0 done (also when nothing held the value); 2 no value, a value
under 8 bytes, a log on a cluster, the store could not be opened, or the
home ($OMNI_HOME, default ~/.omni) does not exist.`,
		Example: `  omni forget --stdin < leaked.txt
  omni forget 'sk-live-0123456789abcdef'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var value []byte
			switch {
			case fromStdin && len(args) == 0:
				b, err := io.ReadAll(s.In)
				if err != nil {
					return failErr(err, "omni forget: read stdin: "+err.Error())
				}
				value = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
			case !fromStdin && len(args) == 1:
				value = []byte(args[0])
			default:
				return usageErr("omni forget: give the value as one argument or on stdin with --stdin")
			}
			if err := requireHome("forget", omniHome()); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			rep, err := daemon.Forget(ctx, daemonConfig(), value)
			if err != nil {
				return failErr(err, "omni forget: "+errMsg(err))
			}
			if asJSON {
				return writeJSON(s.Out, rep)
			}
			rep.Render(s.Out, doctor.SeqList(rep.Seqs, len(rep.Seqs)))
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the value from stdin (keeps it out of the shell history)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON")
	return cmd
}
