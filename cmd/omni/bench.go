package main

// omni bench: the command line of internal/bench.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/bench/sample"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/eventlog"
	"github.com/omnictx/omni/internal/tokens"
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
	tokenizer  string
	latency    bool
	n          int
	store      string
	foldFloor  int
	changes    int
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
		Use:   "bench [--corpus FILE... | --store HOME] [--home DIR] [--out FILE] [--ledger-only] [--fold-floor BYTES] [--json]",
		Short: "Replay real agent sessions (a built-in sample by default), or rerun a recorded stream, through the hook path and report what was saved",
		Long: `Replays corpus files (one JSON tool call per line: session, agent, seq,
tool, input, output, exit_code, and for Claude Code is_error and
compaction_epoch; 'omni log --corpus' writes one) in
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

--latency starts N hook processes per payload size (1, 16, 64, 256 KB,
built from corpus lines) against a warm daemon in a temporary home (or
--home, to time against a large existing store) and prints
p50/p99 wall time per process beside a trivial Go binary's start time
measured in the same run, and their ratio; each size is timed for 'omni
hook' and, when it sits beside omni, for the thin client omni-hook (what
'omni init' registers then), whose row is followed by the p50 of each stage
of its calls: process start and exit, stdin read, connect (address file,
checks, peer credentials), request, the daemon's redaction, decision and
append, and the reply's way back. Each size repeats one text, which the
ledger folds whole after the first two calls; the "16 KB new" row gives
every call new content instead (the 16 KB text with its digits drawn anew
per call, as a command run again prints), as most of an agent's outputs
are. Outputs over the host's 30,000-character cap
(256 KB and up) are recorded but never rewritten, so those rows time the
pass-through path. Two more rows, a 20,000-line
and a 15 MiB output (at most 8 processes each; a 16 MiB text would make a
payload over the hook's 16 MiB input limit, which it leaves to the host), measure memory: each row
prints the hook process's peak RSS (ru_maxrss) and the daemon's (VmHWM).

--ledger-only runs the guard and the ledger only; without it the first-seen
stages (redaction, distillers, collapse, the final cut) run before the ledger.

--fold-floor BYTES replaces the ledger's 264-byte floor: an output under
BYTES bytes never folds (a what-if; recorded with each decision, so
replay reruns it).

--store HOME reruns the stream recorded in HOME (every recorded input in log
order: hook payloads, exec and pipe outputs, retrieves, compactions, session
events, goals and facts) through this build, chained: each decision is
appended to a scratch log (in memory, or in --home, which must be fresh)
with its recorded time, and the projections the next one reads are built
from the rerun's own decisions. HOME's log is only read, through its daemon
(started if none runs; a cluster stream too). It prints the figures above
for the rerun, then the recorded figures beside them and their difference,
and how many decisions changed; --changes N prints N of them with the
recorded and rerun texts, diffed. Without settings flags every invocation
is rerun as recorded (the same build reproduces it: 0 changed); --ledger-only,
--fold-floor and --rewrite override the recorded setting on every one (a
what-if). Inputs withheld (credentials, omni forget), batches removed by omni
gc and batches missing from the log are counted and named, never skipped
silently. --out writes the calls as --corpus does (the corpus identity that
bench recorded, else the reader and its call count).

--home on a home that already holds a log is refused: a second run would
append to it and report both as one (rerun it with --store HOME).

--persisted replays a Bash output of 30,000 characters or more as Claude Code
delivers it: stdout cut at 30,000 characters, the whole output in a file
under the home named by persistedOutputPath. The hook then reads the file
and replies inline when the pipeline brings it under the cap; the report's
"over-cap" line counts those calls and their bytes against the whole output
(the model would otherwise read a ~2 KB preview, then the file in pieces).

--rewrite=on|off replays the PreToolUse rewrite ('omni pretool') that
'omni init --claude' installs (on, the default): the output of a Bash call
whose command the rewrite's grammar takes goes first through its filter
('omni pipe': exit status unknown, decided as a failing run); an output the
filter shortened is what the model reads (a failing call's "Exit code N"
line in front), one it left alone goes on to the post-tool hook. The corpus
has no settings files, so every call the grammar takes counts, as with the
allow rules omni init writes. off replays the hooks alone, and --ledger-only
always does.

Exit codes: 0 done; 2 a corpus file or a store could not be read, or --home
already holds a log.`,
		Example: `  omni bench
  omni bench --corpus corpus/*.jsonl
  omni bench --corpus corpus/*.jsonl --ledger-only --out /tmp/out.jsonl --home /tmp/h
  omni bench --store ~/.omni                       # rerun your own stream: 0 changed on the same build
  omni bench --store ~/.omni --fold-floor 2048 --changes 3   # what if outputs under 2 KB never folded`,
		// `--corpus a b c` (a shell glob) binds only a to --corpus; the rest
		// arrive as arguments and are corpus files too.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.corpus = append(o.corpus, args...)
			if o.notice {
				fmt.Fprint(s.Out, sample.Notice)
				return nil
			}
			if o.store != "" {
				if len(o.corpus) > 0 || o.latency {
					return usageErr("omni bench: --store HOME reruns a recorded stream: give it without --corpus or --latency")
				}
				return runBenchStore(cmd, s, o)
			}
			if o.foldFloor < 0 || o.changes != 0 {
				return usageErr("omni bench: --fold-floor wants a size in bytes (0: the ledger's); --changes goes with --store")
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
			var rw bool
			switch o.rewrite {
			case "on", "true", "narrow":
				rw = !o.ledgerOnly
			case "off", "false":
			default:
				return usageErr("omni bench: --rewrite=%s: want on or off", o.rewrite)
			}
			var tc hooks.TokenCounter
			if o.tokenizer != "none" {
				c, err := tokens.New(o.tokenizer)
				if err != nil {
					return usageErr("omni bench: --tokenizer: %v", err)
				}
				tc = c
			}
			rep, err := bench.Run(context.Background(), bench.Options{Corpus: o.corpus, Home: o.home, Out: o.out, LedgerOnly: o.ledgerOnly, FoldFloor: o.foldFloor, Persisted: o.persisted, Limit: o.limit, Rewrite: rw, Tokens: tc,
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
	cmd.Flags().StringVar(&o.tokenizer, "tokenizer", tokens.DefaultFamily, "count tokens beside bytes with this model family's encoding: "+strings.Join(tokens.Names(), ", ")+" (o200k: GPT-4o and later; cl100k: GPT-4, GPT-3.5), or none")
	cmd.Flags().StringVar(&o.rewrite, "rewrite", "on", "replay the PreToolUse rewrite omni init --claude installs (on, off): runner outputs go first through its filter")
	cmd.Flags().Lookup("rewrite").NoOptDefVal = "on"
	cmd.Flags().BoolVar(&o.latency, "latency", false, "time hook processes (omni hook, and omni-hook when it sits beside omni, with its stages) against a warm daemon, 1 KB to 15 MiB payloads from the corpus, beside a trivial Go binary, with peak RSS")
	cmd.Flags().BoolVar(&o.notice, "notice", false, "print the sources and licences of the built-in sample and exit")
	cmd.Flags().IntVar(&o.n, "n", 50, "with --latency: processes per payload size")
	cmd.Flags().StringVar(&o.store, "store", "", "rerun the stream recorded in this home (read only) instead of a corpus")
	cmd.Flags().IntVar(&o.foldFloor, "fold-floor", 0, "an output under this many bytes never folds (0: the ledger's 264)")
	cmd.Flags().IntVar(&o.changes, "changes", 0, "with --store: print this many changed decisions, recorded and rerun text diffed")
	return cmd
}

// runBenchStore is omni bench --store.
func runBenchStore(cmd *cobra.Command, s streams, o benchFlags) error {
	if o.foldFloor < 0 || o.changes < 0 {
		return usageErr("omni bench --store: --fold-floor and --changes want 0 or more")
	}
	store, err := filepath.Abs(o.store)
	if err != nil {
		return usageErr("omni bench --store: %v", err)
	}
	if err := requireHome("bench --store", store); err != nil {
		return err
	}
	src, closeSrc, err := benchStoreSource(store, "omni bench --store", eventlog.Query{})
	if err != nil {
		return failErr(err, "omni bench --store: "+errMsg(err))
	}
	defer closeSrc()
	so := bench.StoreOptions{Source: src, Store: store, Home: o.home, Out: o.out,
		LedgerOnly: o.ledgerOnly, FoldFloor: o.foldFloor, Changes: o.changes,
		OpenStore: openBenchStore, MarkBusy: daemon.MarkBusy, Logf: homeLogf}
	if cmd.Flags().Changed("rewrite") {
		switch o.rewrite {
		case "on", "true", "narrow":
			so.RewriteSet, so.Rewrite = true, true
		case "off", "false":
			so.RewriteSet, so.Rewrite = true, false
		default:
			return usageErr("omni bench: --rewrite=%s: want on or off", o.rewrite)
		}
	}
	if so.Home != "" {
		if so.Home, err = filepath.Abs(so.Home); err != nil {
			return usageErr("omni bench --store: --home: %v", err)
		}
		if so.Home == store {
			return usageErr("omni bench --store: --home is the rerun's scratch home: give a fresh directory, not the store's home")
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.RunStore(ctx, so, s.Err)
	if ctx.Err() != nil {
		return failErr(errInterrupted, "omni bench --store: interrupted")
	}
	if err != nil {
		return failErr(err, "omni bench --store: "+errMsg(err))
	}
	if o.asJSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	bench.PrintStore(s.Out, rep)
	return nil
}

// benchStoreSource returns how bench --store reads the log of home: the
// store opened in this process when no daemon holds it (marked busy
// meanwhile, so hooks of that home pass through at once), else through the
// daemon (clientSource). Either way the log is only read.
func benchStoreSource(home, what string, q eventlog.Query) (bench.StoreSource, func(), error) {
	cfg := configOf(home)
	log, base, closeStore, err := daemon.OpenReadLocal(context.Background(), cfg)
	if errors.Is(err, jetstream.ErrLocked) {
		return clientSource{c: daemon.NewClient(cfg), q: q}, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	release := daemon.MarkBusy(home, what)
	return querySource{bench.LogSource{Log: log, Base: base}, q}, func() { release(); closeStore() }, nil
}

// querySource is a LogSource narrowed by an omni log query (session,
// time and sequence bounds), as the daemon's pages are.
type querySource struct {
	bench.LogSource
	q eventlog.Query
}

// Batches implements bench.StoreSource.
func (s querySource) Batches(ctx context.Context, fn func([]events.Event, events.Seq) error) error {
	return s.LogSource.Batches(ctx, func(b []events.Event, last events.Seq) error {
		if q := b[0].Seq; q < s.q.From || (s.q.To != 0 && q > s.q.To) {
			return nil
		}
		kept := b[:0:0]
		for _, e := range b {
			if s.q.Match(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			return nil
		}
		return fn(kept, last)
	})
}

// clientSource reads a home's log through its daemon, one page of omni
// log at a time (Archived events left out: the rerun archives its own),
// up to the newest batch when the read began: bench --store never opens
// the store itself.
type clientSource struct {
	c *daemon.Client
	// q narrows the read (omni log --corpus: --session, --since, --seq);
	// its Kinds are set by Batches.
	q eventlog.Query
}

// Batches implements bench.StoreSource. The next page is read while the
// caller works on the current one.
func (s clientSource) Batches(ctx context.Context, fn func([]events.Event, events.Seq) error) error {
	var kinds []events.Kind
	for _, k := range eventlog.Kinds {
		if k != events.KindArchived {
			kinds = append(kinds, k)
		}
	}
	q := s.q
	q.Kinds = kinds
	type page struct {
		p   eventlog.Page
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan page, 2)
	go func() {
		defer close(pages)
		for from := events.Seq(1); ; {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
			p, err := s.c.ReadLog(pctx, daemon.LogRequest{Query: q, From: from})
			pcancel()
			if err != nil {
				err = fmt.Errorf("read the log from %d: %w", from, err)
			}
			if err == nil && from == 1 && (q.To == 0 || q.To > p.Last) {
				q.To = p.Last // the log as it was when the read began
			}
			select {
			case pages <- page{p, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || p.Done(q) || p.Next <= from {
				return
			}
			from = p.Next
		}
	}()
	var cur []events.Event
	var last events.Seq
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b := cur
		cur = nil
		return fn(b, last)
	}
	for pg := range pages {
		if pg.err != nil {
			return pg.err
		}
		if last == 0 {
			last = pg.p.Last
		}
		for _, e := range pg.p.Entries {
			if e.Seq > last {
				break
			}
			ev := e.Event
			ev.Seq, ev.Index = e.Seq, e.Index
			if len(cur) > 0 && cur[0].Seq != ev.Seq {
				if err := flush(); err != nil {
					return err
				}
			}
			cur = append(cur, ev)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return flush()
}

// Diff implements bench.StoreSource (omni diff through the daemon).
func (s clientSource) Diff(ctx context.Context, seq events.Seq) (hooks.DiffResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return s.c.Diff(ctx, daemon.DiffRequest{Seq: seq})
}
