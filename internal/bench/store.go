package bench

// omni bench --store: a chained rerun of a recorded stream.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/omnictx/omni/projections/stats"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/linediff"
	"github.com/omnictx/omni/internal/rewrite"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/replay"
)

// StoreSource is a recorded stream omni bench --store reruns. It is only
// ever read.
type StoreSource interface {
	// Batches calls fn with every batch the log holds, in log order (a
	// batch's events in their order; Archived events may be left out: the
	// rerun archives its own). last is the log's newest sequence when the
	// read began, for progress. Errors: the log's, or fn's.
	Batches(ctx context.Context, fn func(batch []events.Event, last events.Seq) error) error
	// Diff reruns the invocation at seq on the recorded state (omni diff):
	// the recorded delivered text when its SHA-256 matches the log's.
	Diff(ctx context.Context, seq events.Seq) (hooks.DiffResult, error)
}

// LogSource is a StoreSource over an open Log (tests and tools; omni reads
// a home through its daemon).
type LogSource struct {
	Log  events.Log
	Base hooks.BaseLoader
}

// Batches implements StoreSource. The log is read ahead (up to
// readAhead batches) while fn works, so a store's read latency and the
// rerun's work overlap.
func (s LogSource) Batches(ctx context.Context, fn func([]events.Event, events.Seq) error) error {
	last, err := s.Log.Last(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []events.Event, readAhead)
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		errc <- replay.Batches(ctx, s.Log, 1, last+1, func(b []events.Event) error {
			select {
			case batches <- b:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for b := range batches {
		if err := fn(b, last); err != nil {
			cancel()
			for range batches {
			}
			<-errc
			return err
		}
	}
	return <-errc
}

// readAhead is how many batches LogSource reads ahead of the rerun: a
// few MiB of compressed inputs at the shared corpus's sizes.
const readAhead = 1024

// Diff implements StoreSource.
func (s LogSource) Diff(ctx context.Context, seq events.Seq) (hooks.DiffResult, error) {
	return hooks.Diff(ctx, s.Log, seq, s.Base)
}

// StoreOptions are one omni bench --store run's inputs. The zero settings
// rerun every invocation as it was recorded; each set one overrides the
// recorded setting on every invocation (a what-if).
type StoreOptions struct {
	// Source is the recorded stream; Store names it in the report (its home).
	Source StoreSource
	Store  string
	// Home keeps the rerun's store ("" : in memory). It must hold no log.
	Home string
	// Out, when set, receives one OutLine per call, as bench --corpus
	// writes them (the corpus identity from the recorded origin).
	Out string
	// LedgerOnly reruns every invocation with the guard and the ledger
	// only (and without the PreToolUse rewrite, as bench --corpus does).
	LedgerOnly bool
	// FoldFloor, above 0, reruns every invocation with this fold floor in
	// bytes (hooks.Options.FoldFloor).
	FoldFloor int
	// RewriteSet says Rewrite overrides the recorded rewrite: "" replays
	// the hooks alone (a rewritten call goes back to its hook payload),
	// a form rewrites the failing Bash calls it takes.
	RewriteSet bool
	Rewrite    bool
	// Changes is how many changed decisions to report with their recorded
	// and rerun texts.
	Changes int
	// OpenStore, MarkBusy and Logf are Options' (used only with Home).
	OpenStore func(ctx context.Context, home string) (log events.Log, closeStore func() error, err error)
	MarkBusy  func(home, what string) (release func())
	Logf      func(home string) func(format string, a ...any)
}

// Change is one decision the rerun made differently.
type Change struct {
	Seq    events.Seq `json:"seq"`
	Reader string     `json:"reader"`
	Door   string     `json:"door"`
	Tool   string     `json:"tool,omitempty"`
	Source string     `json:"source,omitempty"`
	// RecordedBytes and RerunBytes are the delivered sizes (from the
	// recorded Emitted event, and the rerun's).
	RecordedBytes int `json:"recorded_bytes"`
	RerunBytes    int `json:"rerun_bytes"`
	// Recorded is the recorded delivered text: this build's rerun of the
	// recorded state (omni diff), exact when RecordedExact (its SHA-256 is
	// the one the log recorded); Rerun the chained rerun's.
	Recorded      string `json:"recorded"`
	RecordedExact bool   `json:"recorded_exact"`
	Rerun         string `json:"rerun"`
}

// Skipped names one recorded input the rerun could not take.
type Skipped struct {
	Seq    events.Seq `json:"seq"`
	Reader string     `json:"reader,omitempty"`
	Reason string     `json:"reason"`
}

// StoreReport is the --json form of omni bench --store.
type StoreReport struct {
	Store string `json:"store"`
	Home  string `json:"home,omitempty"`
	// LedgerOnly, FoldFloor and Rewrite are the overriding settings
	// (Rewrite "recorded": as recorded).
	LedgerOnly bool   `json:"ledger_only"`
	FoldFloor  int    `json:"fold_floor,omitempty"`
	Rewrite    string `json:"rewrite"`
	// Batches read (First..Last), Invocations among them.
	Batches     int        `json:"batches"`
	First       events.Seq `json:"first"`
	Last        events.Seq `json:"last"`
	Invocations int        `json:"invocations"`
	// Compared: invocations that delivered text in the recording and were
	// rerun; Identical those whose rerun printed the same bytes; Changed
	// the others.
	Compared  int `json:"compared"`
	Identical int `json:"identical"`
	Changed   int `json:"changed"`
	// Rerun holds the same figures as omni bench --corpus, for the rerun;
	// Recorded the figures the recorded events give (bytes, folds, tools,
	// doors, families and reasons; the repetition is not recorded, so its
	// fields are 0); Difference is Rerun minus Recorded (the repetition
	// fields 0).
	Rerun      *Report `json:"rerun"`
	Recorded   *Report `json:"recorded"`
	Difference *Report `json:"difference"`
	// Changes lists the first StoreOptions.Changes changed decisions.
	Changes []Change `json:"changes,omitempty"`
	// Withheld names the invocations whose input was not stored (it held
	// credentials, or omni forget erased it): not rerun (at most 100;
	// WithheldCount counts them all).
	Withheld      []Skipped `json:"withheld,omitempty"`
	WithheldCount int       `json:"withheld_count"`
	// Masked names the invocations whose stored input had credentials
	// masked when it was recorded (at most 100; MaskedCount counts them
	// all): they are rerun on the masked text, so a what-if without the
	// redaction stage (LedgerOnly) reads the masks where the recording's
	// host had the values.
	Masked      []Skipped `json:"masked,omitempty"`
	MaskedCount int       `json:"masked_count"`
	// RemovedBefore: omni gc removed the batches before this sequence
	// (0: none); their inputs cannot be rerun and the rerun starts with
	// an empty ledger.
	RemovedBefore events.Seq `json:"removed_before,omitempty"`
	// Missing names sequences inside the log it did not give back (a
	// damaged store file; at most 100).
	Missing      []events.Seq `json:"missing,omitempty"`
	MissingCount int          `json:"missing_count"`
	// NotRerun counts batches without an invocation that were not rerun,
	// by kind: log maintenance (pruned, lost, forgotten) and retrieves of
	// a handle the rerun never issued (retrieved).
	NotRerun map[string]int `json:"not_rerun,omitempty"`
	// Failures names the invocations whose rerun failed (at most 100).
	Failures      []Skipped `json:"failures,omitempty"`
	FailuresCount int       `json:"failures_count"`
	Seconds       float64   `json:"seconds"`
}

// storeCall is one recorded invocation as the tally counts it.
type storeCall struct {
	isCall   bool
	compact  string // a compaction of this session
	rec      Record
	project  string
	payload  map[string]any
	hostTool string
	hostRaw  string
	event    string
	// rewritten: a failing Bash call run through the exec door (the
	// PreToolUse rewrite); line is the host's exit line before its output.
	rewritten bool
	line      string
	overCap   bool
}

// RunStore reruns a recorded stream (o.Source) through this build, chained:
// every recorded input in log order (hook payloads, exec and pipe outputs,
// retrieves, compactions, session events, goals and facts) is decided
// again on a scratch log (in memory, or in o.Home) with its recorded time,
// and the projections each decision reads are built from the rerun's own
// decisions. It reports the figures of bench --corpus for the rerun, the
// recorded ones and their difference, and the decisions that changed. A
// progress bar goes to progress when it is a terminal. Errors: o.Home
// holding a log (ErrHomeHoldsLog), the source's or the scratch store's,
// an --out file that cannot be written.
func RunStore(ctx context.Context, o StoreOptions, progress io.Writer) (*StoreReport, error) {
	var scratch events.Log = memlog.New()
	logf := func(string, ...any) {}
	if o.Home != "" {
		if err := os.MkdirAll(o.Home, 0o700); err != nil {
			return nil, err
		}
		if err := RefuseHeld(o.Home); err != nil {
			return nil, err
		}
		if err := markFrozen(o.Home); err != nil {
			return nil, err
		}
		st, closeStore, err := o.OpenStore(ctx, o.Home)
		if err != nil {
			return nil, fmt.Errorf("open store in %s: %w", o.Home, err)
		}
		defer closeStore()
		if last, err := st.Last(ctx); err != nil || last > 0 {
			return nil, refuseErr(o.Home, err)
		}
		if o.MarkBusy != nil {
			defer o.MarkBusy(o.Home, "omni bench --store")()
		}
		if o.Logf != nil {
			logf = o.Logf(o.Home)
		}
		scratch = st
	}
	eng, err := hooks.New(ctx, scratch, hooks.Options{
		// Every rerun takes its recorded time; the clock is never read
		// for a decision, and a fixed one keeps decision times out of the
		// scratch log.
		Now:       func() time.Time { return time.Unix(0, 0).UTC() },
		ProjectOf: func(cwd string) string { return cwd },
		Logf:      logf,
	})
	if err != nil {
		return nil, err
	}
	var outW *bufio.Writer
	var outF *os.File
	if o.Out != "" {
		if outF, err = os.Create(o.Out); err != nil {
			return nil, err
		}
		defer outF.Close()
		outW = bufio.NewWriterSize(outF, 1<<20)
	}
	rewriteName := "recorded"
	switch {
	case o.LedgerOnly:
		o.RewriteSet, o.Rewrite = true, false
		rewriteName = "off"
	case o.RewriteSet && !o.Rewrite:
		rewriteName = "off"
	case o.RewriteSet:
		rewriteName = "pipe"
	}
	newRep := func() *Report {
		return &Report{Files: []string{}, Home: o.Home, ByTool: map[string]*Bucket{}, BySource: map[string]*Bucket{}, UnrewritableByReason: map[string]int64{},
			ByFamily: map[string]*Bucket{}, ByDoor: map[string]*Bucket{}, ByReason: map[string]*Bucket{},
			FoldsByKind: map[string]int{}, Uncaptured: map[string]int64{}, LedgerOnly: o.LedgerOnly}
	}
	sr := &StoreReport{Store: o.Store, Home: o.Home, LedgerOnly: o.LedgerOnly, FoldFloor: o.FoldFloor, Rewrite: rewriteName,
		Rerun: newRep(), Recorded: newRep(), NotRerun: map[string]int{}}
	if o.RewriteSet && o.Rewrite {
		sr.Rerun.Rewrite = "pipe"
	}
	t := newTally(sr.Rerun, outW, o.Out)
	seqOf := map[string]int{}   // reader -> calls so far (a stream without origin)
	epochOf := map[string]int{} // session -> compactions so far
	var bar *progressbar.ProgressBar
	var durs []time.Duration
	start := time.Now()
	next := events.Seq(1)
	err = o.Source.Batches(ctx, func(batch []events.Event, last events.Seq) error {
		if len(batch) == 0 {
			return nil
		}
		if bar == nil {
			if f, ok := progress.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				bar = progressbar.NewOptions64(int64(last), progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("bench --store"),
					progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			}
		}
		if bar != nil {
			bar.Set64(int64(batch[0].Seq))
		}
		seq := batch[0].Seq
		switch {
		case sr.Batches == 0 && seq > 1:
			sr.RemovedBefore = seq
		case seq > next:
			for q := next; q < seq; q++ {
				sr.MissingCount++
				if len(sr.Missing) < 100 {
					sr.Missing = append(sr.Missing, q)
				}
			}
		}
		next = seq + 1
		if sr.Batches == 0 {
			sr.First = seq
		}
		sr.Batches++
		sr.Last = seq
		if !hooks.HasInvocation(batch) {
			kind, ok, err := eng.RerunOther(ctx, batch)
			if err != nil {
				return err
			}
			if !ok {
				sr.NotRerun[string(kind)]++
			}
			return nil
		}
		sr.Invocations++
		rec, err := hooks.RecordedOf(batch)
		if err != nil {
			sr.fail(seq, "", err)
			return nil
		}
		if rec.Withheld != "" {
			sr.WithheldCount++
			if len(sr.Withheld) < 100 {
				sr.Withheld = append(sr.Withheld, Skipped{Seq: seq, Reader: rec.Reader.String(), Reason: rec.Withheld})
			}
			return nil
		}
		if n, _ := strconv.Atoi(rec.Params[string(events.ParamRedactedTotal)]); n > 0 {
			sr.MaskedCount++
			if len(sr.Masked) < 100 {
				sr.Masked = append(sr.Masked, Skipped{Seq: seq, Reader: rec.Reader.String(), Reason: rec.Params[string(events.ParamRedactedTotal)] + " masked"})
			}
		}
		recorded := callFromRecorded(rec, seqOf, epochOf)
		if recorded.compact != "" {
			t.compact(recorded.compact)
		}
		run, call := o.whatIf(rec, recorded)
		t0 := time.Now()
		res, printed, err := eng.Rerun(ctx, run)
		if call.isCall {
			durs = append(durs, time.Since(t0))
		}
		if err != nil {
			sr.fail(seq, rec.Reader.String(), err)
			res = hooks.Result{}
			printed = nil
		}
		if call.isCall {
			if call.rewritten {
				res.Raw, res.Delivered, res.Event = call.line+res.Raw, call.line+res.Delivered, rewriteEvent(run.Door)
				if err != nil {
					res.Delivered = res.Raw
				}
			}
			if err := t.call(callOf{rec: call.rec, project: call.project, payload: call.payload, hostTool: call.hostTool, hostRaw: call.hostRaw,
				res: res, err: err, rewritten: call.rewritten, overCap: call.overCap}); err != nil {
				return err
			}
			addRecorded(sr.Recorded, recorded, rec)
		}
		if rec.Emitted != nil && err == nil {
			sr.Compared++
			if shaHex(printed) == rec.Emitted.Output {
				sr.Identical++
			} else {
				sr.Changed++
				if len(sr.Changes) < o.Changes {
					text := res.Delivered
					if res.Raw == "" && res.Delivered == "" {
						text = string(printed)
					}
					sr.Changes = append(sr.Changes, Change{Seq: seq, Reader: rec.Reader.String(), Door: string(rec.Door), Tool: rec.Emitted.Tool,
						Source: oneLine(rec.Emitted.Source, 100), RecordedBytes: rec.Emitted.DeliveredBytes, RerunBytes: len(text), Rerun: text})
				}
			}
		}
		return nil
	})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return nil, err
	}
	if outW != nil {
		if err := outW.Flush(); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Out, err)
		}
		if err := outF.Close(); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Out, err)
		}
	}
	for i := range sr.Changes {
		c := &sr.Changes[i]
		d, err := o.Source.Diff(ctx, c.Seq)
		if err != nil {
			c.Recorded = fmt.Sprintf("(the recorded text cannot be shown: %v)", err)
			continue
		}
		c.Recorded, c.RecordedExact = d.Delivered, d.Match
	}
	sr.Seconds = time.Since(start).Seconds()
	if !o.RewriteSet && sr.Rerun.Rewritten.Calls > 0 {
		sr.Rerun.Rewrite = rewriteName // the recording's rewrites, as recorded
	}
	finish(sr.Rerun, durs, sr.Seconds)
	eng.StatsView(func(st *stats.Stats) {
		a := st.Report().Agent
		sr.Rerun.RecallFolds, sr.Rerun.RecallCuts = a.Folds, a.Cuts
	})
	finish(sr.Recorded, nil, 0)
	sr.Difference = difference(sr.Rerun, sr.Recorded)
	return sr, nil
}

func (sr *StoreReport) fail(seq events.Seq, reader string, err error) {
	sr.FailuresCount++
	if len(sr.Failures) < 100 {
		sr.Failures = append(sr.Failures, Skipped{Seq: seq, Reader: reader, Reason: err.Error()})
	}
}

// finish computes a report's shares and pipeline times.
func finish(rep *Report, durs []time.Duration, seconds float64) {
	rep.Seconds = seconds
	rep.SavedPct = pct(rep.All.BytesSaved, rep.All.RawBytes)
	rep.CapturePct = pct(rep.All.BytesSaved, rep.All.RepeatBytes)
	rep.CaptureSessionPct = pct(rep.SessionFoldSaved, rep.All.RepeatBytes)
	rep.CaptureRewritablePct = pct(rep.SessionFoldSaved, rep.All.RepeatBytes-rep.UnrewritableRepeat)
	rep.RewritableRepeat = rep.All.RepeatBytes - rep.UnrewritableRepeat
	rep.CaptureRewritableAllPct = pct(rep.SessionFoldSaved+rep.ProjectFoldSaved, rep.RewritableRepeat)
	rep.CaptureLedgerPct = pct(rep.SessionFoldSaved+rep.ProjectFoldSaved, rep.All.RepeatBytes)
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	if len(durs) > 0 {
		rep.PipelineP50 = float64(durs[len(durs)/2].Microseconds()) / 1000
		rep.PipelineP99 = float64(durs[len(durs)*99/100].Microseconds()) / 1000
	}
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// callFromRecorded reads a recorded invocation as bench counts it: its
// corpus identity (from the recorded origin, or from the reader and a
// running count for a stream bench did not write), the payload, the host
// tool and text, and whether it is a call or a compaction.
func callFromRecorded(rec hooks.Recorded, seqOf, epochOf map[string]int) storeCall {
	origin := rec.Origin()
	c := storeCall{project: rec.Project}
	r := Record{Session: rec.Reader.Session, Agent: rec.Reader.Agent}
	if r.Agent == "" {
		r.Agent = "main"
	}
	switch rec.Door {
	case events.DoorHook, events.DoorBench:
		var p map[string]any
		if json.Unmarshal(rec.Input, &p) != nil {
			return c
		}
		c.payload = p
		c.event, _ = p["hook_event_name"].(string)
		tool, _ := p["tool_name"].(string)
		src, _ := p["source"].(string)
		if c.event == "PreCompact" || c.event == "PostCompact" || c.event == "PreCompress" ||
			(c.event == "SessionStart" && (src == "compact" || src == "clear")) {
			c.compact = r.Session
			epochOf[r.Session]++
		}
		if tool == "" {
			return c
		}
		c.isCall, c.hostTool, c.hostRaw = true, tool, RawOf(p)
		if tr, ok := p["tool_response"].(map[string]any); ok {
			_, c.overCap = tr["omniPersistedFrom"]
		}
		ti, _ := p["tool_input"].(map[string]any)
		r.Input, _ = ti["command"].(string)
		if r.Input == "" {
			r.Input, _ = ti["file_path"].(string)
		}
		r.Tool, r.RawTool = tool, tool
		r.IsError = c.event == "PostToolUseFailure"
	default:
		c.isCall, c.hostTool = true, "Bash"
		r.Input, r.Tool, r.RawTool = rec.Params[string(events.ParamCommand)], "Bash", "Bash"
		if in, ok := origin[OriginInput]; ok {
			r.Input = in // the agent's line; the pipe door records the runner
		}
		code, _ := strconv.Atoi(rec.Params[string(events.ParamExitCode)])
		if line, ok := origin[OriginExitLine]; ok || rec.Params[string(events.ParamHost)] == hooks.HostClaudeCode && code != 0 {
			// A call the PreToolUse rewrite ran through the exec door: the
			// host shows its exit line before the output.
			if !ok {
				line = fmt.Sprintf("Exit code %d\n", code)
			}
			c.rewritten, c.line = true, line
			r.IsError = true
		}
		c.hostRaw = c.line + string(rec.Input)
		r.ExitCode = &code
	}
	if s, ok := origin[OriginSeq]; ok {
		r.Seq, _ = strconv.Atoi(s)
	} else {
		k := r.Session + "\x00" + r.Agent
		r.Seq = seqOf[k]
		seqOf[k]++
	}
	if s, ok := origin[OriginTool]; ok {
		r.Tool = s
	}
	if s, ok := origin[OriginAgent]; ok {
		r.Agent = s
	}
	if s, ok := origin[OriginEpoch]; ok {
		r.CompactionEpoch, _ = strconv.Atoi(s)
	} else {
		r.CompactionEpoch = epochOf[r.Session]
	}
	if s, ok := origin[OriginExitCode]; ok {
		n, _ := strconv.Atoi(s)
		r.ExitCode = &n
	}
	r.Output = c.hostRaw
	c.rec = r
	return c
}

// settings are the Invoked parameters a what-if may override.
var settings = []string{string(events.ParamLedgerOnly), string(events.ParamFoldFloor)}

// whatIf applies the overriding settings to a recorded invocation: the
// stages and the fold floor on every one, and the PreToolUse rewrite: a
// rewritten call back to its hook payload (rewrite off), a failing Bash
// hook call the form takes through the exec door. It returns what to
// rerun and the call as the rerun counts it.
func (o StoreOptions) whatIf(rec hooks.Recorded, c storeCall) (hooks.Recorded, storeCall) {
	p := maps.Clone(rec.Params)
	if p == nil {
		p = map[string]string{}
	}
	if o.LedgerOnly {
		p[string(events.ParamLedgerOnly)] = "1"
	}
	if o.FoldFloor > 0 {
		p[string(events.ParamFoldFloor)] = strconv.Itoa(o.FoldFloor)
	}
	rec.Params = p
	if !o.RewriteSet || !c.isCall {
		return rec, c
	}
	switch {
	case c.rewritten && !o.Rewrite:
		// Back to the hook the host would have sent: the failure path, or
		// PostToolUse for a passing run the filter shortened.
		cmd := p[string(events.ParamCommand)]
		if in, ok := p[string(events.ParamOriginPrefix)+OriginInput]; ok {
			cmd = in
		}
		payload := map[string]any{"session_id": rec.Reader.Session, "cwd": rec.Project, "transcript_path": "/bench/" + rec.Reader.Session + ".jsonl",
			"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "error": c.hostRaw}
		if c.line == "" {
			payload["hook_event_name"] = "PostToolUse"
			delete(payload, "error")
			payload["tool_response"] = map[string]any{"stdout": c.hostRaw, "stderr": "", "interrupted": false, "isImage": false}
		}
		if rec.Reader.Agent != "" {
			payload["agent_id"] = rec.Reader.Agent
		}
		hp := map[string]string{}
		for _, k := range append(settings, string(events.ParamKeepSecrets)) {
			if v, ok := p[k]; ok {
				hp[k] = v
			}
		}
		for k, v := range p {
			if strings.HasPrefix(k, string(events.ParamOriginPrefix)) && k != string(events.ParamOriginPrefix)+OriginExitLine {
				hp[k] = v
			}
		}
		rec.Door, rec.Params = events.DoorHook, hp
		rec.Input, _ = json.Marshal(payload)
		c.payload, c.rewritten, c.line = payload, false, ""
	case !c.rewritten && o.Rewrite && c.payload != nil && c.event == "PostToolUseFailure" && c.hostTool == "Bash" && takes(c.rec.Input):
		// A failing run the rewrite's grammar takes, through its filter
		// (the pipe door, exit status unknown). A passing run stays with
		// its hook: the filter leaves one unchanged unless it shows a
		// failing verdict, which a passing run rarely does.
		tk, _ := rewrite.Take(c.rec.Input)
		line, body, _ := SplitExitLine(c.hostRaw, c.rec.ExitCode)
		ep := map[string]string{string(events.ParamCommand): tk.Runner, string(events.ParamExitCode): strconv.Itoa(hooks.ExitUnknown), string(events.ParamHost): hooks.HostClaudeCode,
			string(events.ParamOriginPrefix) + OriginExitLine: line, string(events.ParamOriginPrefix) + OriginInput: c.rec.Input}
		for k, v := range p {
			if slicesContains(settings, k) || k == string(events.ParamKeepSecrets) || strings.HasPrefix(k, string(events.ParamOriginPrefix)) {
				if _, set := ep[k]; !set {
					ep[k] = v
				}
			}
		}
		rec.Door, rec.Params, rec.Input = events.DoorPipe, ep, []byte(body)
		c.rewritten, c.line = true, line
	}
	return rec, c
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// addRecorded adds one recorded call to the recorded figures: bytes and
// folds from its Emitted, Folded and Distilled events.
func addRecorded(rep *Report, c storeCall, rec hooks.Recorded) {
	raw, del := int64(len(c.hostRaw)), int64(len(c.hostRaw))
	res := hooks.Result{Event: c.event}
	if em := rec.Emitted; em != nil {
		raw, del = int64(em.RawBytes+len(c.line)), int64(em.DeliveredBytes+len(c.line))
		res.Reason = em.Reason
	}
	if d := rec.Distilled; d != nil {
		res.Distiller, res.ShortenReason = d.Distiller, d.Reason
	}
	if c.rewritten {
		res.Event = rewriteEvent(rec.Door)
	}
	var sessSaved, projSaved int64
	for _, f := range rec.Folded {
		if f.Scope == events.ScopeSession {
			sessSaved += int64(f.Bytes - f.MarkerBytes)
		} else {
			projSaved += int64(f.Bytes - f.MarkerBytes)
		}
		rep.FoldsByKind[f.Marker]++
		res.Folds = append(res.Folds, pipeline.Fold{})
	}
	n := len(rec.Folded)
	rep.SessionFoldSaved += sessSaved
	rep.ProjectFoldSaved += projSaved
	rep.All.add(raw, del, 0, n)
	if c.rewritten {
		rep.Rewritten.add(raw, del, 0, n)
	}
	if c.overCap {
		rep.OverCap.add(raw, del, 0, n)
	}
	addBreakdown(rep, res, c.hostTool, raw, del, 0, n)
	for _, b := range []*Bucket{bucketOf(rep.ByTool, c.rec.Tool), bucketOf(rep.BySource, c.project)} {
		b.add(raw, del, 0, n)
		b.SessionFoldSaved += sessSaved
		b.ProjectFoldSaved += projSaved
	}
}

// difference returns a - b, bucket by bucket (byte, call and fold
// counts; the repetition, which b does not record, is left 0).
func difference(a, b *Report) *Report {
	sub := func(x, y *Bucket) *Bucket {
		if x == nil {
			x = &Bucket{}
		}
		if y == nil {
			y = &Bucket{}
		}
		return &Bucket{Calls: x.Calls - y.Calls, RawBytes: x.RawBytes - y.RawBytes, DeliveredBytes: x.DeliveredBytes - y.DeliveredBytes,
			BytesSaved: x.BytesSaved - y.BytesSaved, Folds: x.Folds - y.Folds,
			SessionFoldSaved: x.SessionFoldSaved - y.SessionFoldSaved, ProjectFoldSaved: x.ProjectFoldSaved - y.ProjectFoldSaved}
	}
	subMap := func(x, y map[string]*Bucket) map[string]*Bucket {
		out := map[string]*Bucket{}
		for k := range x {
			out[k] = sub(x[k], y[k])
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				out[k] = sub(nil, y[k])
			}
		}
		return out
	}
	d := &Report{Files: []string{}, Home: a.Home, LedgerOnly: a.LedgerOnly, Rewrite: a.Rewrite,
		All: *sub(&a.All, &b.All), ByTool: subMap(a.ByTool, b.ByTool), BySource: subMap(a.BySource, b.BySource),
		ByFamily: subMap(a.ByFamily, b.ByFamily), ByDoor: subMap(a.ByDoor, b.ByDoor), ByReason: subMap(a.ByReason, b.ByReason),
		FoldsByKind: map[string]int{}, Uncaptured: map[string]int64{}, UnrewritableByReason: map[string]int64{},
		SessionFoldSaved: a.SessionFoldSaved - b.SessionFoldSaved, ProjectFoldSaved: a.ProjectFoldSaved - b.ProjectFoldSaved,
		Rewritten: *sub(&a.Rewritten, &b.Rewritten), OverCap: *sub(&a.OverCap, &b.OverCap),
		SavedPct: a.SavedPct - b.SavedPct}
	for k, v := range a.FoldsByKind {
		d.FoldsByKind[k] += v
	}
	for k, v := range b.FoldsByKind {
		d.FoldsByKind[k] -= v
	}
	return d
}

// ErrHomeHoldsLog: the home given to hold a bench's store already holds a
// log (a bench would append to it and report both runs as one).
var ErrHomeHoldsLog = errors.New("the home already holds a log")

func refuseErr(home string, err error) error {
	if err != nil {
		return fmt.Errorf("read the store in %s: %w", home, err)
	}
	return fmt.Errorf("%w: %s (rerun what it recorded with 'omni bench --store %s', or give --home a fresh directory)", ErrHomeHoldsLog, home, home)
}

// RefuseHeld returns ErrHomeHoldsLog (wrapped, naming --store and a fresh
// home) when home's embedded store holds any message block, without
// opening it (a daemon serving it keeps running). nil otherwise.
func RefuseHeld(home string) error {
	held := false
	_ = filepath.WalkDir(filepath.Join(home, "store"), func(path string, d os.DirEntry, err error) error {
		if err != nil || held {
			return filepath.SkipAll
		}
		if !d.IsDir() && strings.HasSuffix(path, ".blk") {
			if fi, err := d.Info(); err == nil && fi.Size() > 0 {
				held = true
			}
		}
		return nil
	})
	if held {
		return refuseErr(home, nil)
	}
	return nil
}

// PrintStore writes the report of omni bench --store for people: the
// rerun's figures as omni bench prints them, then the recorded figures
// beside them, their difference, and the decisions that changed.
func PrintStore(w io.Writer, r *StoreReport) {
	Print(w, r.Rerun)
	settings := []string{"rewrite " + r.Rewrite}
	if r.LedgerOnly {
		settings = append(settings, "ledger only")
	}
	if r.FoldFloor > 0 {
		settings = append(settings, fmt.Sprintf("fold floor %d B", r.FoldFloor))
	}
	fmt.Fprintf(w, "\nrerun of %s (settings: %s): batches %d (seq %d..%d), invocations %d; decisions compared %d, identical %d, changed %d\n",
		r.Store, strings.Join(settings, ", "), r.Batches, r.First, r.Last, r.Invocations, r.Compared, r.Identical, r.Changed)
	a, b, d := r.Recorded, r.Rerun, r.Difference
	fmt.Fprintf(w, "%-22s %14s %14s %14s\n", "", "recorded", "rerun", "difference")
	line := func(name string, x, y, z int64) {
		fmt.Fprintf(w, "%-22s %14d %14d %+14d\n", name, x, y, z)
	}
	line("calls", int64(a.All.Calls), int64(b.All.Calls), int64(d.All.Calls))
	line("raw B", a.All.RawBytes, b.All.RawBytes, d.All.RawBytes)
	line("delivered B", a.All.DeliveredBytes, b.All.DeliveredBytes, d.All.DeliveredBytes)
	line("saved B", a.All.BytesSaved, b.All.BytesSaved, d.All.BytesSaved)
	fmt.Fprintf(w, "%-22s %13.2f%% %13.2f%% %+13.2f%%\n", "saved", a.SavedPct, b.SavedPct, d.SavedPct)
	line("session folds saved B", a.SessionFoldSaved, b.SessionFoldSaved, d.SessionFoldSaved)
	line("project folds saved B", a.ProjectFoldSaved, b.ProjectFoldSaved, d.ProjectFoldSaved)
	line("folds", int64(a.All.Folds), int64(b.All.Folds), int64(d.All.Folds))
	rows := func(title string, ra, rb, rd map[string]*Bucket) {
		fmt.Fprintln(w, title+" (saved B: recorded, rerun, difference)")
		for _, k := range sortedKeys(rd) {
			x, y, z := ra[k], rb[k], rd[k]
			if x == nil {
				x = &Bucket{}
			}
			if y == nil {
				y = &Bucket{}
			}
			fmt.Fprintf(w, "  %-34s %6d calls %12d %12d %+12d\n", k, max(x.Calls, y.Calls), x.BytesSaved, y.BytesSaved, z.BytesSaved)
		}
	}
	rows("by tool kind", a.ByTool, b.ByTool, d.ByTool)
	rows("by door", a.ByDoor, b.ByDoor, d.ByDoor)
	rows("by reason", a.ByReason, b.ByReason, d.ByReason)
	rows("by family", a.ByFamily, b.ByFamily, d.ByFamily)
	if r.RemovedBefore > 0 {
		fmt.Fprintf(w, "removed by omni gc: batches 1..%d (their inputs cannot be rerun; the rerun starts with an empty ledger)\n", r.RemovedBefore-1)
	}
	if r.WithheldCount > 0 {
		fmt.Fprintf(w, "withheld, not rerun: %d (their input held credentials and was not stored, or omni forget erased it):", r.WithheldCount)
		for _, s := range r.Withheld {
			fmt.Fprintf(w, " %d (%s)", s.Seq, s.Reason)
		}
		fmt.Fprintln(w)
	}
	if r.MaskedCount > 0 {
		fmt.Fprintf(w, "stored masked (credentials), rerun on the masked text: %d:", r.MaskedCount)
		for _, s := range r.Masked {
			fmt.Fprintf(w, " %d", s.Seq)
		}
		if r.MaskedCount > len(r.Masked) {
			fmt.Fprint(w, " …")
		}
		fmt.Fprintln(w)
	}
	if r.MissingCount > 0 {
		fmt.Fprintf(w, "missing inside the log: %d batches (a damaged store file): %v\n", r.MissingCount, r.Missing)
	}
	for _, k := range sortedIntKeys(r.NotRerun) {
		why := "log maintenance"
		if k == string(events.KindRetrieved) {
			why = "a retrieve of a handle the rerun never issued"
		}
		fmt.Fprintf(w, "not rerun: %d %s batches (%s)\n", r.NotRerun[k], k, why)
	}
	if r.FailuresCount > 0 {
		fmt.Fprintf(w, "reruns that failed: %d:", r.FailuresCount)
		for _, s := range r.Failures {
			fmt.Fprintf(w, " %d (%s)", s.Seq, s.Reason)
		}
		fmt.Fprintln(w)
	}
	for i, c := range r.Changes {
		fmt.Fprintf(w, "\nchange %d of %d: seq %d, %s, %s %s %s: delivered %d B recorded, %d B rerun\n",
			i+1, r.Changed, c.Seq, c.Reader, c.Door, c.Tool, c.Source, c.RecordedBytes, c.RerunBytes)
		if !c.RecordedExact {
			fmt.Fprintln(w, "  (recorded side: this build's rerun of the recorded state, which does not reproduce the recorded bytes)")
		}
		writeDiff(w, c.Recorded, c.Rerun)
	}
}

func sortedIntKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeDiff prints a recorded and a rerun text as a unified line diff.
func writeDiff(w io.Writer, recorded, rerun string) {
	fmt.Fprintln(w, "--- recorded\n+++ rerun")
	linediff.Write(w, linediff.SplitKeepEnds(recorded), linediff.SplitKeepEnds(rerun), 2, false)
}

// oneLine returns the first line of s, cut to n bytes with "…" when longer.
func oneLine(s string, n int) string {
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > n {
		s, cut = strings.ToValidUTF8(s[:n], ""), true
	}
	if cut {
		s += "…"
	}
	return s
}

// takes reports whether the rewrite's grammar takes a command line.
func takes(cmd string) bool { _, ok := rewrite.Take(cmd); return ok }

// rewriteEvent names a rewritten call in the report by its door: the
// filter's pipe door now, the exec door of streams recorded before it.
func rewriteEvent(d events.Door) string {
	if d == events.DoorExec {
		return "rewrite:exec"
	}
	return "rewrite:pipe"
}
