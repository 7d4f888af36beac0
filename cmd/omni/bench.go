package main

// omni bench: the command line of internal/bench.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/bench/sample"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/rewrite"
)

// openBenchStore opens the store of home for omni bench alone
// (daemon.OpenStore: a daemon that owns it is asked to stop first).
func openBenchStore(ctx context.Context, home string) (events.Log, func() error, error) {
	return daemon.OpenStore(ctx, configOf(home))
}

// benchFlags are omni bench's flags.
type benchFlags struct {
	corpus     []string
	home       string
	out        string
	ledgerOnly bool
	persisted  bool
	asJSON     bool
	limit      int
	rewrite    string
	latency    bool
	n          int
	notice     bool
}

// sampleNote follows the report of a run on the built-in sample: what it
// was and how to run the full corpus or one's own sessions.
const sampleNote = `
This was the sample built into omni: 7 real sessions, 148 tool calls
(omni bench --notice names their sources and licences). Next:
  omni bench --corpus ../shared/corpus/*.jsonl   the full shared corpus, 513 sessions, 18,307 calls
                                                 (the project's shared material, kept beside the repository as ../shared)
  omni bench --corpus FILE.jsonl                 your own sessions, one tool call per JSON line (omni bench --help)
  omni stats; omni replay --verify               what omni saved on your own recorded stream, and a byte-for-byte rerun of it
`

// benchDaemon gives the bench the daemon's lifecycle.
var benchDaemon = bench.Daemon{
	Stop: func(ctx context.Context, home string, wait time.Duration) error {
		_, err := daemon.NewClient(configOf(home)).Stop(ctx, wait)
		return err
	},
	PID: func(home string) (int, error) {
		ad, err := wire.ReadAddr(home)
		return ad.PID, err
	},
}

func newBenchCmd(s streams) *cobra.Command {
	var o benchFlags
	cmd := &cobra.Command{
		Use:   "bench [--corpus FILE...] [--home DIR] [--out FILE] [--ledger-only] [--json]",
		Short: "Replay real agent sessions through the hook path and report what was saved",
		Long: `Replays corpus files (one JSON tool call per line: session, agent, seq,
tool, input, output, exit_code, and for Claude Code is_error and
compaction_epoch; the shared corpus's README.md describes each field) in
order through exactly the code path of the
Claude Code hook: a Claude Code Read becomes a Read payload (the host's
"     12→" numbering and the trailing <system-reminder> stripped, startLine
from the first number), every other call a Bash payload; a rise of
compaction_epoch first sends PreCompact for that session; is_error or a
non-zero exit_code takes the failure path (PostToolUseFailure). The reader is
(session, agent), the project the part of session before the first '/'.
Event times are synthetic (one second per call from 2026-01-01), so two runs
give byte-identical --out files.

Without --corpus it replays the sample built into omni: 7 real sessions
(148 tool calls, 137 KB of output) from the MIT-licensed sources of the
shared corpus, whose notice --notice prints. The shared corpus (513
sessions, 18,307 calls) is the project's shared material, kept beside a
checkout as ../shared: omni bench --corpus ../shared/corpus/*.jsonl.

It prints calls, raw and delivered bytes, saved %, per tool kind and per
source, folds per marker kind, the available repetition (bytes of non-blank
lines whose trimmed text this reader already received in an earlier call
since its last compaction) and the share of it the ledger captured, and the
per-call pipeline time p50/p99. A progress bar shows on a terminal.

--latency starts N hook processes per payload size (0.5, 16, 256 KB, built
from corpus lines) against a warm daemon in a temporary home (or --home, to
time against a large existing store) and prints
p50/p99 wall time per process beside a trivial Go binary's start time
measured in the same run, and their ratio; each size is timed for 'omni
hook' and, when it sits beside omni, for the thin client omni-hook (what
'omni init' registers then). Outputs over the host's 30,000-character cap
(256 KB and up) are recorded but never rewritten, so those rows time the
pass-through path. Two more rows, a 20,000-line
and a 15 MiB output (at most 8 processes each; a 16 MiB text would make a
payload over the hook's 16 MiB input limit, which it leaves to the host), measure memory: each row
prints the hook process's peak RSS (ru_maxrss) and the daemon's (VmHWM).

--ledger-only runs the guard and the ledger only; without it the first-seen
stages (redaction, distillers, collapse, the final cut) run before the ledger.

--persisted replays a Bash output of 30,000 characters or more as Claude Code
delivers it: stdout cut at 30,000 characters, the whole output in a file
under the home named by persistedOutputPath. The hook then reads the file
and replies inline when the pipeline brings it under the cap; the report's
"over-cap" line counts those calls and their bytes against the whole output
(the model would otherwise read a ~2 KB preview, then the file in pieces).

--rewrite=narrow|all|off replays the PreToolUse rewrite ('omni pretool'): a
failing Bash call whose command the form takes (the hook's own decision, as in
bypassPermissions mode with no permission rules: the corpus has no settings
files) runs through the exec door instead of the untouched failure path; the
model reads its "Exit code N" line and exec's output. The default is narrow,
the form 'omni init --claude' installs; off replays the hooks alone, and
--ledger-only always does.

Exit codes: 0 done; 2 a corpus file or the store could not be read.`,
		Example: `  omni bench
  omni bench --corpus ../shared/corpus/*.jsonl
  omni bench --corpus ../shared/corpus/*.jsonl --ledger-only --out /tmp/out.jsonl --home /tmp/h`,
		// `--corpus a b c` (a shell glob) binds only a to --corpus; the rest
		// arrive as arguments and are corpus files too.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.corpus = append(o.corpus, args...)
			if o.notice {
				fmt.Fprint(s.Out, sample.Notice)
				return nil
			}
			onSample := len(o.corpus) == 0
			if onSample {
				o.corpus = []string{sample.Name}
			}
			if o.latency {
				if o.n <= 0 {
					return usageErr("omni bench --latency: --n %d: want at least 1 process per size", o.n)
				}
				var w io.Writer = s.Out
				if o.asJSON {
					w = nil
				}
				// Ctrl-C stops between processes, so the temporary home and
				// its daemon are still cleaned up.
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				rep, err := bench.Latency(ctx, o.corpus, o.n, o.home, benchDaemon, w)
				if ctx.Err() != nil {
					return failErr(errInterrupted, "omni bench --latency: interrupted")
				}
				if err != nil {
					return failErr(err, "omni bench --latency: "+err.Error())
				}
				if o.asJSON {
					enc := json.NewEncoder(s.Out)
					enc.SetIndent("", "  ")
					return enc.Encode(rep)
				}
				fmt.Fprintf(s.Out, "first call (spawns the daemon): %.1f ms; floor: %s, p50 %.2f ms p99 %.2f ms\n", rep.ColdFirst, rep.Floor, rep.FloorP50, rep.FloorP99)
				return nil
			}
			form, ok := rewrite.ParseForm(o.rewrite)
			switch {
			case o.rewrite == "off" || o.rewrite == "false" || o.ledgerOnly:
				form = ""
			case !ok:
				return usageErr("omni bench: --rewrite=%s: want narrow, all or off", o.rewrite)
			}
			rep, err := bench.Run(context.Background(), bench.Options{Corpus: o.corpus, Home: o.home, Out: o.out, LedgerOnly: o.ledgerOnly, Persisted: o.persisted, Limit: o.limit, Rewrite: form,
				OpenStore: openBenchStore, MarkBusy: daemon.MarkBusy, Logf: homeLogf}, s.Err)
			if err != nil {
				return failErr(err, "omni bench: "+err.Error())
			}
			if o.asJSON {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			bench.Print(s.Out, rep)
			if onSample {
				fmt.Fprint(s.Out, sampleNote)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&o.corpus, "corpus", nil, "corpus JSONL files (repeatable; also takes the shell's expansion of a glob)")
	cmd.Flags().StringVar(&o.home, "home", "", "keep the store in this directory (default: a temporary one, removed afterwards)")
	cmd.Flags().StringVar(&o.out, "out", "", "write one JSON line per call (session, agent, seq, tool, input, host_tool, raw, delivered)")
	cmd.Flags().BoolVar(&o.ledgerOnly, "ledger-only", false, "guard and ledger only")
	cmd.Flags().BoolVar(&o.persisted, "persisted", false, "replay over-cap Bash outputs with persistedOutputPath, as Claude Code does")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "stop after this many calls (0: all)")
	cmd.Flags().StringVar(&o.rewrite, "rewrite", "narrow", "replay the PreToolUse rewrite of this form (narrow, all; off: none): failing Bash calls it takes run through omni exec")
	cmd.Flags().Lookup("rewrite").NoOptDefVal = "narrow"
	cmd.Flags().BoolVar(&o.latency, "latency", false, "time hook processes (omni hook, and omni-hook when it sits beside omni) against a warm daemon, 0.5 KB to 15 MiB payloads from the corpus, beside a trivial Go binary, with peak RSS")
	cmd.Flags().BoolVar(&o.notice, "notice", false, "print the sources and licences of the built-in sample and exit")
	cmd.Flags().IntVar(&o.n, "n", 50, "with --latency: processes per payload size")
	return cmd
}
