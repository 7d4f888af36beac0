package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/eventlog"
	"github.com/omnictx/omni/internal/statsreport"
)

func newLogCmd(s streams) *cobra.Command {
	var session, since, seq string
	var kinds []string
	var asJSON, follow, corpus bool
	cmd := &cobra.Command{
		Use:   "log [--json] [--session ID] [--kind K,...] [--since WHEN] [--seq A..B] [--follow]",
		Short: "Print the event log: every event omni keeps, in stream order",
		Long: `Prints the events of the log ($OMNI_HOME/store), one per line, in stream
order: what omni keeps, exactly as stored. The log holds redacted text only
(unless a run used --keep-secrets).

Without --json: sequence.index, time (UTC), kind, reader and a summary.
--json: one JSON object per event, the event's own fields plus "seq" and
"index", with an invoked event's compressed input as "input_text" and an
archived block as "text" (bytes that are not UTF-8 stay base64).

--session ID keeps one host session; --kind K (repeatable or
comma-separated: invoked, emitted, folded, archived, compacted, retrieved,
reader_started, session_ended, distilled, goal_set, remembered, pruned,
lost, forgotten); --since WHEN keeps events from WHEN on (a duration such as 2h or 3d,
today, a date, or an RFC 3339 time); --seq A..B keeps batches A to B
(either side may be left out; A alone is one batch). --follow prints new
events as they are appended, until interrupted (or past B).

--corpus writes the calls instead, one JSON line each, in the corpus format
of omni bench --corpus (session, agent, seq, tool, input, output,
exit_code, raw_tool, is_error, compaction_epoch; masked and masked_grew
where credentials were masked): a recorded week becomes a benchmark input,
and 'omni bench --corpus' of the file gives the stream's figures. Masked
values stay masked (an input recorded with --keep-secrets is redacted in
the file); a Read carries the host's line numbers; outputs of other tools
than Bash and Read replay as Bash outputs; withheld inputs are counted on
stderr, never written. --session, --since and --seq narrow it.

Exit codes: 0 printed (also when interrupted while following); 2 a bad
flag, the store could not be read, or the home ($OMNI_HOME, default
~/.omni) does not exist.`,
		Example: `  omni log --kind invoked --since 2h
  omni log --json --seq 40..45
  omni log --follow --session 3f2a...
  omni log --corpus --since 7d > week.jsonl && omni bench --corpus week.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var from time.Time
			var err error
			if since != "" {
				if from, err = statsreport.ParseSince(since, time.Now()); err != nil {
					return usageErr("omni log: %s", err)
				}
			}
			q, err := eventlog.NewQuery(session, kinds, from, seq)
			if err != nil {
				return usageErr("omni log: %s", err)
			}
			o := eventlog.Options{JSON: asJSON, Follow: follow, Query: q}
			if err := requireHome("log", omniHome()); err != nil {
				return err
			}
			if corpus {
				if asJSON || follow || len(kinds) > 0 {
					return usageErr("omni log --corpus: writes calls; give it without --json, --follow or --kind")
				}
				return exportCorpus(s, q)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c := newClient()
			src := func(ctx context.Context, q eventlog.Query, from events.Seq) (eventlog.Page, error) {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				return c.ReadLog(ctx, daemon.LogRequest{Query: q, From: from})
			}
			if err := eventlog.Print(ctx, s.Out, src, o); err != nil {
				return failErr(err, "omni log: "+errMsg(err))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "one JSON object per event, compressed bytes decoded to text")
	f.StringVar(&session, "session", "", "keep the events of this host session only")
	f.StringSliceVar(&kinds, "kind", nil, "keep the events of these kinds only (repeatable, comma-separated)")
	f.StringVar(&since, "since", "", "keep events from WHEN on: 2h, 3d, today, 2026-01-31 or an RFC 3339 time")
	f.StringVar(&seq, "seq", "", "keep batches A..B (A.., ..B, or one sequence)")
	f.BoolVar(&follow, "follow", false, "print new events as they are appended, until interrupted")
	f.BoolVar(&corpus, "corpus", false, "write the calls as corpus JSONL (the input of omni bench --corpus)")
	return cmd
}

// exportCorpus is omni log --corpus.
func exportCorpus(s streams, q eventlog.Query) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, closeSrc, err := benchStoreSource(omniHome(), "omni log --corpus", q)
	if err != nil {
		return failErr(err, "omni log --corpus: "+errMsg(err))
	}
	defer closeSrc()
	sum, err := bench.Export(ctx, src, s.Out)
	if ctx.Err() != nil {
		return failErr(errInterrupted, "omni log --corpus: interrupted")
	}
	if err != nil {
		return failErr(err, "omni log --corpus: "+errMsg(err))
	}
	fmt.Fprintf(s.Err, "omni log --corpus: %d calls of %d sessions\n", sum.Calls, sum.Sessions)
	if sum.Redacted > 0 {
		fmt.Fprintf(s.Err, "  %d recorded unredacted (--keep-secrets): their credentials are masked in the file\n", sum.Redacted)
	}
	if sum.WithheldCount > 0 {
		fmt.Fprintf(s.Err, "  withheld, not written: %d (their input held credentials and was not stored, or omni forget erased it):", sum.WithheldCount)
		for _, w := range sum.Withheld {
			fmt.Fprintf(s.Err, " %d", w.Seq)
		}
		fmt.Fprintln(s.Err)
	}
	if sum.UnreadableCount > 0 {
		fmt.Fprintf(s.Err, "  unreadable, not written: %d:", sum.UnreadableCount)
		for _, w := range sum.Unreadable {
			fmt.Fprintf(s.Err, " %d (%s)", w.Seq, w.Reason)
		}
		fmt.Fprintln(s.Err)
	}
	return nil
}
