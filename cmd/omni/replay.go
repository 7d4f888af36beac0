package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/doctor"
)

func newReplayCmd(s streams) *cobra.Command {
	var at uint64
	var verify, asJSON bool
	cmd := &cobra.Command{
		Use:   "replay (--at SEQ | --verify)",
		Short: "Rerun recorded decisions from the event log and check them byte for byte",
		Long: `--at SEQ rebuilds every projection from the log before SEQ, reruns the
decision of the invocation recorded at SEQ with its recorded time and
project, prints what it would print now, and exits 0 only if that is
byte-identical to what was delivered then.

--verify does it for every invocation in the log, in one pass, and prints a
summary.

Exit codes: 0 identical; 1 a difference, a batch missing from the log (a
damaged store file), or SEQ holds no invocation; 2 the store could not be
read.`,
		Example: `  omni replay --at 42
  omni replay --verify --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (at == 0) == !verify {
				return usageErr("omni replay: give exactly one of --at SEQ or --verify")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			r, err := newClient().Replay(ctx, daemon.ReplayRequest{At: events.Seq(at), Verify: verify})
			if err != nil {
				cause := err // the store (or the base gc left) could not be read
				if !errors.Is(err, daemon.ErrNoBase) && !errors.Is(err, daemon.ErrNoDaemon) {
					cause = errors.Join(errNotFound, err) // SEQ holds no invocation, or is not in the log
				}
				return failErr(cause, "omni replay: "+errMsg(err))
			}
			if asJSON {
				if err := writeJSON(s.Out, r); err != nil {
					return err
				}
			}
			if r.Summary != nil {
				sm := r.Summary
				if !asJSON {
					fmt.Fprintf(s.Out, "batches %d (seq %d..%d), invocations %d, compared %d, identical %d, differing %d\n",
						sm.Batches, r.First, r.Last, sm.Invocations, sm.Compared, sm.Identical, sm.Compared-sm.Identical)
					if sm.Withheld > 0 {
						fmt.Fprintf(s.Out, "withheld %d (their input held credentials and was not stored, or omni forget erased it)\n", sm.Withheld)
					}
					for _, q := range sm.Mismatches {
						fmt.Fprintf(s.Out, "differs: seq %d (omni replay --at %d)\n", q, q)
					}
				}
				if sm.RecordedLost > 0 && !asJSON {
					fmt.Fprintf(s.Out, "%s recorded as lost (a damaged store file): decisions recorded after them were made with what they held\n", doctor.Batches(sm.RecordedLost))
				}
				if sm.MissingCount > 0 && !asJSON {
					fmt.Fprintf(s.Out, "missing %s inside the log (seq %s): the store could not give them back (a damaged file); decisions after them may differ; see 'omni doctor' and 'omni gc --repair'\n",
						doctor.Batches(sm.MissingCount), doctor.SeqList(sm.Missing, sm.MissingCount))
				}
				if sm.Identical != sm.Compared || sm.MissingCount > 0 {
					return failErr(errProblems, "")
				}
				return nil
			}
			rp := r.Replay
			if !asJSON {
				s.Out.Write(rp.Output)
				status := "identical to what was delivered"
				if rp.Withheld {
					status = "input withheld (it held credentials, or omni forget erased it), nothing to rerun"
				} else if !rp.Compared {
					status = "delivered nothing to compare"
				} else if !rp.Match {
					status = fmt.Sprintf("DIFFERS from what was delivered (sha256 %s, now %s)", rp.Want, rp.Got)
				}
				what := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s", rp.Door, rp.Event, rp.Tool)), " ")
				fmt.Fprintf(s.Err, "omni replay: seq %d (%s): %s\n", rp.Seq, what, status)
			}
			if rp.Compared && !rp.Match {
				return failErr(errProblems, "")
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&at, "at", 0, "the sequence of the invocation to replay")
	cmd.Flags().BoolVar(&verify, "verify", false, "replay every invocation and print a summary")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
