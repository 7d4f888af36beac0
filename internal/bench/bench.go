// Package bench replays corpus sessions (one JSON tool call per line)
// through the hook path and reports what was saved (omni bench), and times
// hook processes against a warm daemon (omni bench --latency).
package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/omnictx/omni/internal/daemon/wire/thin"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench/sample"
	"github.com/omnictx/omni/internal/rewrite"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/projections/stats"
)

// Record is one tool call of a corpus file (one JSON object per line, as
// omni log --corpus writes): the session ("project/session") and agent that made it,
// its position, the tool and its input and output, the exit code (nil when
// the tool has none), the host tool it came from, whether it failed, and
// the compaction epoch of its session (it rises after each compaction).
type Record struct {
	Session         string `json:"session"`
	Agent           string `json:"agent"`
	Seq             int    `json:"seq"`
	Tool            string `json:"tool"`
	Input           string `json:"input"`
	Output          string `json:"output"`
	ExitCode        *int   `json:"exit_code"`
	Source          string `json:"source"`
	RawTool         string `json:"raw_tool"`
	IsError         bool   `json:"is_error"`
	CompactionEpoch int    `json:"compaction_epoch"`
	// Masked and MaskedGrew are omni's own fields (omni log --corpus): the
	// credential values already masked in Output when it was recorded,
	// and whether the masks made it longer; bench hands them to the door,
	// which reports the redaction as the recording did.
	Masked     int  `json:"masked,omitempty"`
	MaskedGrew bool `json:"masked_grew,omitempty"`
}

// OutLine is one line of --out: one call, in corpus order.
type OutLine struct {
	Session  string `json:"session"`
	Agent    string `json:"agent"`
	Seq      int    `json:"seq"`
	Tool     string `json:"tool"`
	Input    string `json:"input"`
	HostTool string `json:"host_tool"`
	Event    string `json:"event"`
	Project  string `json:"project"`
	Epoch    int    `json:"compaction_epoch"`
	// Raw is the text the host showed the hook, as the tool printed it:
	// before the door redaction, and for a Claude Code Read the file content
	// without the transcript's line numbers and reminder (the corpus output
	// with the host's own framing removed); for an over-cap output the whole
	// output. It repeats the corpus (secrets included) so a checker can
	// compare the two; the byte counts of the report use the engine's raw,
	// after the redaction.
	Raw       string   `json:"raw"`
	Delivered string   `json:"delivered"`
	Handles   []string `json:"handles,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	// Why is the report's by-reason row of the call ("distilled",
	// "folded", "left:enumeration", "ledger:failed", …).
	Why string `json:"why,omitempty"`
}

// Bucket is one row of the report: bytes in, out, the available
// repetition and how much of it the ledger captured.
type Bucket struct {
	Calls          int   `json:"calls"`
	RawBytes       int64 `json:"raw_bytes"`
	DeliveredBytes int64 `json:"delivered_bytes"`
	BytesSaved     int64 `json:"bytes_saved"`
	RepeatBytes    int64 `json:"repeat_bytes"`
	Folds          int   `json:"folds"`
	// SessionFoldSaved and ProjectFoldSaved are the bytes the ledger's
	// session and project folds removed in this bucket, net of markers.
	SessionFoldSaved int64 `json:"session_fold_saved_bytes"`
	ProjectFoldSaved int64 `json:"project_fold_saved_bytes"`
}

func (b *Bucket) add(raw, delivered, repeat int64, folds int) {
	b.Calls++
	b.RawBytes += raw
	b.DeliveredBytes += delivered
	b.BytesSaved += raw - delivered
	b.RepeatBytes += repeat
	b.Folds += folds
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Report is the --json form of the bench summary.
type Report struct {
	Files       []string           `json:"files"`
	Home        string             `json:"home"`
	All         Bucket             `json:"all"`
	SavedPct    float64            `json:"saved_pct"`
	CapturePct  float64            `json:"capture_pct"`
	ByTool      map[string]*Bucket `json:"by_tool"`
	BySource    map[string]*Bucket `json:"by_source"`
	FoldsByKind map[string]int     `json:"folds_by_marker"`
	Uncaptured  map[string]int64   `json:"uncaptured_repeat_bytes_by_reason"`
	// ByFamily groups calls by the distiller the command chose ("none":
	// no distiller); ByDoor by host event and tool ("PostToolUse Bash",
	// "PostToolUseFailure Bash", …); ByReason by how an output was shortened
	// ("distilled", "folded", "shortened") or why it was left as it was: the
	// first-seen stages' reason ("left:enumeration", "left:no-distiller",
	// "left:structured", …) or the ledger's ("ledger:host-cap",
	// "ledger:failed", …).
	ByFamily map[string]*Bucket `json:"by_family"`
	ByDoor   map[string]*Bucket `json:"by_door"`
	ByReason map[string]*Bucket `json:"by_reason"`
	// OverCap counts the Options.Persisted calls (outputs of 30,000
	// characters or more), raw being the whole output; OverCapInline those
	// replied inline.
	OverCap       Bucket `json:"over_cap"`
	OverCapInline int    `json:"over_cap_inline"`
	// SessionFoldSaved and ProjectFoldSaved are the bytes the ledger's
	// session and project folds removed, net of their markers; the rest of
	// BytesSaved comes from the first-seen stages (distillers, collapse).
	SessionFoldSaved int64 `json:"session_fold_saved_bytes"`
	ProjectFoldSaved int64 `json:"project_fold_saved_bytes"`
	// UnrewritableRepeat is the repetition in outputs no hook may rewrite:
	// the failure path (PostToolUseFailure) and the host's inline cap.
	UnrewritableRepeat int64 `json:"unrewritable_repeat_bytes"`
	// UnrewritableByReason splits UnrewritableRepeat: "failed" (the failure
	// path, whose rewrite Claude Code ignores), "host-cap" (stdout of 30,000
	// characters or more, persisted by the host) and "host-cap:reply" (a
	// rewrite that would itself reach the cap).
	UnrewritableByReason map[string]int64 `json:"unrewritable_repeat_bytes_by_reason"`
	// RewritableRepeat = RepeatBytes - UnrewritableRepeat: the repetition
	// in outputs the host lets a hook rewrite. CaptureRewritableAllPct is
	// the share of it session and project folds saved; capture is a
	// figure, not a gate.
	RewritableRepeat        int64   `json:"rewritable_repeat_bytes"`
	CaptureRewritableAllPct float64 `json:"capture_rewritable_all_pct"`
	// CaptureSessionPct = SessionFoldSaved / RepeatBytes;
	// CaptureRewritablePct = SessionFoldSaved / (RepeatBytes - UnrewritableRepeat);
	// CaptureLedgerPct = (SessionFoldSaved + ProjectFoldSaved) / RepeatBytes.
	CaptureSessionPct    float64 `json:"capture_session_pct"`
	CaptureRewritablePct float64 `json:"capture_rewritable_pct"`
	CaptureLedgerPct     float64 `json:"capture_ledger_pct"`
	PipelineP50          float64 `json:"pipeline_ms_p50"`
	PipelineP99          float64 `json:"pipeline_ms_p99"`
	Seconds              float64 `json:"seconds"`
	LedgerOnly           bool    `json:"ledger_only"`
	HookFailures         int     `json:"hook_failures"`
	// Rewrite is the PreToolUse rewrite replayed ("pipe"; "" none);
	// Rewritten counts the Bash calls whose output its filter shortened
	// (raw: the host's text, a failing call's "Exit code N" line included;
	// delivered: that line and the filter's output), RewrittenUnshown those
	// the host would still cut (hooks.HostShows), recorded as not shown.
	Rewrite          string `json:"rewrite,omitempty"`
	Rewritten        Bucket `json:"rewritten"`
	RewrittenUnshown int    `json:"rewritten_unshown"`
	// Tokens are the headline in tokens: the raw and the delivered text
	// of every call counted with Options.Tokens (zero without one);
	// TokenSeconds the wall time the counting workers spent, beside the
	// replay's Seconds (they run alongside it).
	Tokens       stats.TokenReport `json:"tokens"`
	TokenSeconds float64           `json:"token_seconds,omitempty"`
	// Recall is the share of each mechanism's handles the agent later
	// retrieved (the Retrieved events the replay recorded), from the
	// stats projection: Folds per marker kind, Cuts per first-seen stage
	// (distiller, collapse, final cut); a flagged row's rate is high.
	RecallFolds []stats.FoldReport `json:"recall_folds"`
	RecallCuts  []stats.FoldReport `json:"recall_cuts"`
}

// Options are one bench run's inputs.
type Options struct {
	// Corpus lists the corpus JSONL files, replayed in order.
	Corpus []string
	// Home keeps the store ("" for a temporary one, removed afterwards).
	Home string
	// Out, when set, receives one OutLine per call.
	Out string
	// LedgerOnly runs the guard and the ledger only.
	LedgerOnly bool
	// FoldFloor, above 0, replaces the ledger's 264-byte fold floor: an
	// output under FoldFloor bytes never folds (hooks.Options.FoldFloor).
	FoldFloor int
	// Persisted replays a Bash output of 30,000 characters or more as
	// Claude Code delivers it: stdout cut at 30,000 characters, the whole
	// output in a file under the home named by persistedOutputPath.
	Persisted bool
	// Limit stops after this many calls (0: all).
	Limit int
	// Rewrite replays the PreToolUse rewrite `omni init --claude` installs:
	// the output of a Bash call whose command rewrite.Take takes goes first
	// through the rewrite's filter (the pipe door, exit status unknown,
	// hooks.CallInput.Deferred); an output the filter shortened is what the
	// model reads, one it left as it came goes on to the post-tool hook as
	// without the rewrite. The corpus carries no settings files and no
	// permission mode, so every call the grammar takes counts as rewritten
	// (as in bypassPermissions mode, or with the allow rules omni init
	// writes).
	Rewrite bool
	// Tokens, when set, counts every call's raw and delivered text in
	// tokens (Report.Tokens), on worker goroutines beside the replay.
	Tokens hooks.TokenCounter
	// OpenStore opens the store of home for the bench alone (cmd/omni: the
	// store under home/store, after asking a daemon that holds it to stop)
	// and returns its log and the function that closes it. Required.
	OpenStore func(ctx context.Context, home string) (log events.Log, closeStore func() error, err error)
	// MarkBusy marks home busy for what while the bench holds its store (so
	// hooks fail open at once) and returns the function that unmarks it.
	// Nil: nothing is marked.
	MarkBusy func(home, what string) (release func())
	// Logf returns the logger of home (omni.log); nil logs nothing.
	Logf func(home string) func(format string, a ...any)
}

// LoadCorpus reads corpus files in order into one slice of records; the
// name sample.Name reads the sample embedded in the binary.
// Errors: a file that cannot be opened, or a line that is not a Record.
func LoadCorpus(files []string) ([]Record, error) {
	var recs []Record
	for _, f := range files {
		var fh io.ReadCloser
		var err error
		if f == sample.Name {
			fh = io.NopCloser(bytes.NewReader(sample.JSONL))
		} else if fh, err = os.Open(f); err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		n := 0
		for sc.Scan() {
			n++
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			var r Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: %w", f, n, err)
			}
			recs = append(recs, r)
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return recs, nil
}

// readFromTranscript turns a Claude Code Read result as the transcript shows
// it ("     12→text" lines, then a <system-reminder> block) back into
// file.content and its startLine. ok is false when it has no numbering.
func readFromTranscript(out string) (content string, start int, n int, ok bool) {
	var b strings.Builder
	rest := out
	for rest != "" {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		j := strings.Index(line, "→")
		if j <= 0 {
			break
		}
		num, err := strconv.Atoi(strings.TrimSpace(line[:j]))
		if err != nil || num <= 0 {
			break
		}
		if n == 0 {
			start = num
		}
		n++
		b.WriteString(line[j+len("→"):])
		b.WriteByte('\n')
	}
	if n == 0 {
		return "", 0, 0, false
	}
	return b.String(), start, n, true
}

func readPath(input string) string {
	p := input
	if i := strings.Index(p, " ["); i > 0 {
		p = p[:i]
	}
	return strings.TrimSpace(p)
}

// Payload builds the Claude Code hook payload for one corpus record (a Read
// payload for a Claude Code Read, a Bash payload for the rest, the failure
// path for a failed call) and names the host tool it stands for.
func Payload(r Record, project string) (payload map[string]any, hostTool string) {
	agent := ""
	if r.Agent != "" && r.Agent != "main" {
		agent = r.Agent
	}
	base := map[string]any{"session_id": r.Session, "cwd": project, "transcript_path": "/bench/" + r.Session + ".jsonl"}
	if agent != "" {
		base["agent_id"] = agent
	}
	failed := r.IsError || (r.ExitCode != nil && *r.ExitCode != 0)
	if r.RawTool == "Read" { // Claude Code's Read tool (other sources' reads are shell commands)
		hostTool = "Read"
	} else {
		hostTool = "Bash"
	}
	if failed {
		base["hook_event_name"] = "PostToolUseFailure"
		base["tool_name"] = hostTool
		if hostTool == "Read" {
			base["tool_input"] = map[string]any{"file_path": readPath(r.Input)}
		} else {
			base["tool_input"] = map[string]any{"command": r.Input}
		}
		base["error"] = r.Output
		return base, hostTool
	}
	base["hook_event_name"] = "PostToolUse"
	base["tool_name"] = hostTool
	if hostTool == "Read" {
		path := readPath(r.Input)
		content, start, n, ok := readFromTranscript(r.Output)
		if !ok {
			content, start, n = r.Output, 1, pipeline.CountLines(r.Output)
		}
		base["tool_input"] = map[string]any{"file_path": path}
		base["tool_response"] = map[string]any{"type": "text", "file": map[string]any{
			"filePath": path, "content": content, "numLines": n, "startLine": start, "totalLines": start + n - 1}}
		return base, hostTool
	}
	base["tool_input"] = map[string]any{"command": r.Input}
	base["tool_response"] = map[string]any{"stdout": r.Output, "stderr": "", "interrupted": false, "isImage": false}
	return base, hostTool
}

// Run replays o.Corpus through the hook path of an Engine on a store in
// o.Home, one call after another with synthetic event times (one second per
// call from 2026-01-01 UTC), so two runs give byte-identical Out files. A
// progress bar goes to progress when it is a terminal. Errors: a corpus
// file or the store that cannot be opened, an Out file that cannot be
// written; a hook call that fails is counted in Report.HookFailures.
func Run(ctx context.Context, o Options, progress io.Writer) (*Report, error) {
	recs, err := LoadCorpus(o.Corpus)
	if err != nil {
		return nil, err
	}
	if o.Limit > 0 && o.Limit < len(recs) {
		recs = recs[:o.Limit]
	}
	home := o.Home
	if home == "" {
		if home, err = os.MkdirTemp("", "omni-bench-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(home)
	} else if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	} else if err := RefuseHeld(home); err != nil {
		// A second run would append to the first and report both as one.
		return nil, err
	} else if err := markFrozen(home); err != nil {
		return nil, err
	}
	st, closeStore, err := o.OpenStore(ctx, home)
	if err != nil {
		return nil, fmt.Errorf("open store in %s: %w", home, err)
	}
	defer closeStore()
	if last, err := st.Last(ctx); err != nil || last > 0 {
		return nil, refuseErr(home, err)
	}
	// Hooks of this home fail open at once while the bench holds the store,
	// instead of each waiting out its deadline.
	if o.MarkBusy != nil {
		defer o.MarkBusy(home, "omni bench")()
	}
	logf := func(string, ...any) {}
	if o.Logf != nil {
		logf = o.Logf(home)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	eng, err := hooks.New(ctx, st, hooks.Options{
		Now:        func() time.Time { clock = clock.Add(time.Second); return clock },
		ProjectOf:  func(cwd string) string { return cwd },
		Logf:       logf,
		LedgerOnly: o.LedgerOnly,
		FoldFloor:  o.FoldFloor,
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
		defer outF.Close() // second close after the checked one below is harmless
		outW = bufio.NewWriterSize(outF, 1<<20)
	}
	rep := &Report{Files: o.Corpus, Home: o.Home, ByTool: map[string]*Bucket{}, BySource: map[string]*Bucket{}, UnrewritableByReason: map[string]int64{},
		ByFamily: map[string]*Bucket{}, ByDoor: map[string]*Bucket{}, ByReason: map[string]*Bucket{},
		FoldsByKind: map[string]int{}, Uncaptured: map[string]int64{}, LedgerOnly: o.LedgerOnly}
	if o.Rewrite {
		rep.Rewrite = "pipe"
	}
	var bar *progressbar.ProgressBar
	if f, ok := progress.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(recs), progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("bench"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	// The available repetition, computed here independently of the ledger:
	// per reader, the trimmed lines it received (not folded away), emptied
	// on compaction.
	t := newTally(rep, outW, o.Out)
	epoch := map[string]int{}
	durs := make([]time.Duration, 0, len(recs))
	start := time.Now()
	tokensDone := func() {}
	var countTokens func(raw, del string)
	if o.Tokens != nil {
		countTokens, tokensDone = tokenWorkers(o.Tokens, rep)
		t.tokens = countTokens
	}
	for _, r := range recs {
		project := r.Session
		if i := strings.IndexByte(project, '/'); i >= 0 {
			project = project[:i]
		}
		if r.CompactionEpoch > epoch[r.Session] {
			epoch[r.Session] = r.CompactionEpoch
			pc, _ := json.Marshal(map[string]any{"session_id": r.Session, "cwd": project, "hook_event_name": "PreCompact", "trigger": "auto"})
			if _, err := eng.HookResult(ctx, hooks.HookInput{Stdin: pc}); err != nil {
				rep.HookFailures++
			}
			t.compact(r.Session)
		}
		payload, hostTool := Payload(r, project)
		hostRaw := RawOf(payload) // before the over-cap cut below
		overCap := false
		if o.Persisted && hostTool == "Bash" && payload["hook_event_name"] == "PostToolUse" && utf8.RuneCountInString(r.Output) >= hooks.HostOutputCap {
			overCap = true
			// Where Claude Code persists: the session's tool-results
			// directory beside its transcript (the hook reads no other).
			base := home
			if real, err := filepath.EvalSymlinks(home); err == nil {
				base = real // the hook reads no file reached through a link
			}
			transcript := filepath.Join(base, "persisted", strings.ReplaceAll(r.Session, "/", "_")+".jsonl")
			dir := filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "tool-results")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			payload["transcript_path"] = transcript
			path := filepath.Join(dir, fmt.Sprintf("%d.txt", rep.All.Calls))
			if err := os.WriteFile(path, []byte(r.Output), 0o600); err != nil {
				return nil, err
			}
			cut := r.Output
			if rs := []rune(cut); len(rs) > hooks.HostOutputCap {
				cut = string(rs[:hooks.HostOutputCap])
			}
			tr := payload["tool_response"].(map[string]any)
			tr["stdout"], tr["persistedOutputPath"], tr["persistedOutputSize"] = cut, path, len(r.Output)
		}
		stdin, _ := json.Marshal(payload)
		t0 := time.Now()
		var res hooks.Result
		var err error
		rewritten := false
		if tk, ok := rewrite.Take(r.Input); o.Rewrite && ok && hostTool == "Bash" &&
			(payload["hook_event_name"] == "PostToolUseFailure" || payload["hook_event_name"] == "PostToolUse") {
			line, body := "", r.Output
			if payload["hook_event_name"] == "PostToolUseFailure" {
				line, body, _ = SplitExitLine(r.Output, r.ExitCode)
			}
			origin := originOf(r)
			origin[OriginExitLine], origin[OriginInput] = line, r.Input
			res, err = eng.Call(ctx, hooks.CallInput{Door: events.DoorPipe, Command: tk.Runner, Text: body, ExitCode: hooks.ExitUnknown,
				Session: r.Session, Agent: agentOf(payload), Cwd: project, Host: hooks.HostClaudeCode, Deferred: true,
				Origin: origin, Masked: r.Masked, MaskedGrew: r.MaskedGrew})
			if err == nil && res.Recorded {
				rewritten = true
				res.Raw, res.Delivered, res.Event = line+res.Raw, line+res.Delivered, "rewrite:pipe"
			}
		}
		if !rewritten {
			res, err = eng.HookResult(ctx, hooks.HookInput{Stdin: stdin, Origin: originOf(r), Masked: r.Masked, MaskedGrew: r.MaskedGrew})
		}
		durs = append(durs, time.Since(t0))
		if err := t.call(callOf{rec: r, project: project, payload: payload, hostTool: hostTool, hostRaw: hostRaw,
			res: res, err: err, rewritten: rewritten, overCap: overCap}); err != nil {
			return nil, err
		}
		if bar != nil {
			bar.Add(1)
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if outW != nil {
		if err := outW.Flush(); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Out, err)
		}
		if err := outF.Close(); err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Out, err)
		}
	}
	tokensDone()
	eng.StatsView(func(s *stats.Stats) {
		a := s.Report().Agent
		rep.RecallFolds, rep.RecallCuts = a.Folds, a.Cuts
	})
	finish(rep, durs, time.Since(start).Seconds())
	return rep, nil
}

// tally adds calls up into a Report the way omni bench counts them (the
// available repetition computed from the texts, per reader, emptied on
// compaction) and writes their --out lines: one tally for bench --corpus
// and bench --store alike.
type tally struct {
	rep *Report
	// received: per reader, the trimmed lines it received (not folded
	// away), emptied on compaction.
	received  map[string]map[string]struct{}
	readersOf map[string][]string
	outW      *bufio.Writer
	outName   string
	// tokens, when set, counts a call's raw and delivered text in tokens.
	tokens func(raw, del string)
}

func newTally(rep *Report, outW *bufio.Writer, outName string) *tally {
	return &tally{rep: rep, received: map[string]map[string]struct{}{}, readersOf: map[string][]string{}, outW: outW, outName: outName}
}

// compact empties the received lines of every reader of a session.
func (t *tally) compact(session string) {
	for _, rd := range t.readersOf[session] {
		delete(t.received, rd)
	}
}

// callOf is one call as the tally counts it: the corpus record it stands
// for, its project, the hook payload built for it (nil for none), the host
// tool and the text the host showed, and what the engine did.
type callOf struct {
	rec                Record
	project            string
	payload            map[string]any
	hostTool, hostRaw  string
	res                hooks.Result
	err                error
	rewritten, overCap bool
}

// call adds one call. Errors: the --out file's.
func (t *tally) call(c callOf) error {
	rep, r, res, err, payload, project := t.rep, c.rec, c.res, c.err, c.payload, c.project
	hostTool, hostRaw, rewritten, overCap := c.hostTool, c.hostRaw, c.rewritten, c.overCap
	if err != nil {
		rep.HookFailures++
		res.Raw, res.Delivered = r.Output, r.Output
	}
	if res.Raw == "" && res.Delivered == "" {
		res.Raw, res.Delivered = RawOf(payload), RawOf(payload)
	}
	if t.tokens != nil {
		t.tokens(res.Raw, res.Delivered)
	}
	rk := r.Session + "\x00" + r.Agent
	set := t.received[rk]
	if set == nil {
		set = map[string]struct{}{}
		t.received[rk] = set
		t.readersOf[r.Session] = append(t.readersOf[r.Session], rk)
	}
	lines := pipeline.SplitLines(nil, res.Raw)
	var repeat int64
	var repeatFail int64
	for _, ln := range lines {
		t := strings.TrimSpace(res.Raw[ln.Start:ln.End])
		if t == "" {
			continue
		}
		if _, ok := set[t]; ok {
			repeat += int64(ln.End - ln.Start)
			if pipeline.IsFailureLine(t) {
				repeatFail += int64(ln.End - ln.Start)
			}
		}
	}
	if res.Reason == string(events.ReasonFailed) || res.Reason == string(events.ReasonHostCap) || res.Reason == string(events.ReasonHostCapReply) {
		rep.UnrewritableRepeat += repeat
		rep.UnrewritableByReason[res.Reason] += repeat
	}
	var handles []string
	var sessSaved, projSaved int64
	for _, f := range res.Folds {
		if f.Scope == pipeline.ScopeSession {
			sessSaved += int64(f.Bytes - len(f.Marker))
		} else {
			projSaved += int64(f.Bytes - len(f.Marker))
		}
		handles = append(handles, f.Handle)
		rep.FoldsByKind[string(f.Kind)]++
	}
	if res.Reason != string(events.ReasonHostCap) {
		// What the reader received: the delivered lines, markers and
		// fillers excluded (folded and distilled-away lines were not).
		issued := map[string]bool{}
		for _, f := range res.Folds {
			issued[strings.TrimSpace(strings.SplitN(f.Marker, "\n", 2)[0])] = true
		}
		for _, ln := range pipeline.SplitLines(nil, res.Delivered) {
			t := strings.TrimSpace(res.Delivered[ln.Start:ln.End])
			if t == "" || t == pipeline.Filler || issued[t] || (strings.HasPrefix(t, "[OMNI: ") && !strings.Contains(res.Raw, t)) {
				continue
			}
			set[t] = struct{}{}
		}
	}
	rep.SessionFoldSaved += sessSaved
	rep.ProjectFoldSaved += projSaved
	raw, del := int64(len(res.Raw)), int64(len(res.Delivered))
	rep.All.add(raw, del, repeat, len(res.Folds))
	if rewritten {
		rep.Rewritten.add(raw, del, repeat, len(res.Folds))
		if res.Unshown {
			rep.RewrittenUnshown++
		}
	}
	if overCap {
		rep.OverCap.add(raw, del, repeat, len(res.Folds))
		if res.Reply != nil {
			rep.OverCapInline++
		}
	}
	addBreakdown(rep, res, hostTool, raw, del, repeat, len(res.Folds))
	tb := rep.ByTool[r.Tool]
	if tb == nil {
		tb = &Bucket{}
		rep.ByTool[r.Tool] = tb
	}
	tb.add(raw, del, repeat, len(res.Folds))
	tb.SessionFoldSaved += sessSaved
	tb.ProjectFoldSaved += projSaved
	sb := rep.BySource[project]
	if sb == nil {
		sb = &Bucket{}
		rep.BySource[project] = sb
	}
	sb.add(raw, del, repeat, len(res.Folds))
	sb.SessionFoldSaved += sessSaved
	sb.ProjectFoldSaved += projSaved
	if miss := repeat - (raw - del); miss > 0 {
		reason := res.Reason
		if len(res.Folds) > 0 {
			reason = "partial: runs under their bar, failure lines, split sources"
		}
		if reason == "" {
			reason = "unknown"
		}
		if repeatFail > 0 && len(res.Folds) > 0 {
			rep.Uncaptured["failure lines"] += min(repeatFail, miss)
			miss -= min(repeatFail, miss)
		}
		rep.Uncaptured[reason] += miss
	}
	if t.outW != nil {
		// What the model read: on the failure path the host applies no
		// reply, so a hook that printed none leaves the host's own text
		// (the door's redaction never reached the model there).
		seen := res.Delivered
		if !rewritten && err == nil && res.Reply == nil && payload["hook_event_name"] == "PostToolUseFailure" {
			seen = hostRaw
		}
		b, _ := json.Marshal(OutLine{Session: r.Session, Agent: r.Agent, Seq: r.Seq, Tool: r.Tool, Input: r.Input,
			HostTool: hostTool, Event: res.Event, Project: project, Epoch: r.CompactionEpoch,
			Raw: hostRaw, Delivered: seen, Handles: handles, Reason: res.Reason, Why: reasonOf(res, raw, del)})
		t.outW.Write(b)
		if err := t.outW.WriteByte('\n'); err != nil {
			return fmt.Errorf("write %s: %w", t.outName, err)
		}
	}
	return nil
}

// tokenWorkers starts one goroutine per CPU that counts the texts count is
// given in tokens with tc; done waits for them and writes the totals into
// rep.Tokens and rep.TokenSeconds.
func tokenWorkers(tc hooks.TokenCounter, rep *Report) (count func(raw, del string), done func()) {
	type pair struct{ raw, del string }
	ch := make(chan pair, 256)
	n := max(1, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var rawT, delT int64
	var calls int
	t0 := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r, d int64
			var c int
			for p := range ch {
				rt := int64(tc.Count(p.raw))
				r += rt
				if p.del == p.raw {
					d += rt // an output delivered unchanged counts once
				} else {
					d += int64(tc.Count(p.del))
				}
				c++
			}
			mu.Lock()
			rawT, delT, calls = rawT+r, delT+d, calls+c
			mu.Unlock()
		}()
	}
	count = func(raw, del string) { ch <- pair{raw, del} }
	done = func() {
		close(ch)
		wg.Wait()
		rep.TokenSeconds = time.Since(t0).Seconds()
		rep.Tokens = stats.TokenReport{Tokenizer: tc.Name(), Calls: calls, RawTokens: rawT, DeliveredTokens: delT,
			TokensSaved: rawT - delT, SavedPct: pct(rawT-delT, rawT)}
	}
	return count, done
}

// RawOf is the text the host shows for a payload (for calls the engine did
// not process).
func RawOf(p map[string]any) string {
	if e, ok := p["error"].(string); ok {
		return e
	}
	tr, _ := p["tool_response"].(map[string]any)
	if s, ok := tr["stdout"].(string); ok {
		return s
	}
	if f, ok := tr["file"].(map[string]any); ok {
		s, _ := f["content"].(string)
		return s
	}
	return ""
}

// Print writes the report for people, as omni bench prints it.
func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "calls %d in %.1fs (pipeline per call p50 %.2f ms, p99 %.2f ms)\n", r.All.Calls, r.Seconds, r.PipelineP50, r.PipelineP99)
	fmt.Fprintf(w, "raw %d B, delivered %d B, saved %d B (%.1f%%)\n", r.All.RawBytes, r.All.DeliveredBytes, r.All.BytesSaved, r.SavedPct)
	if t := r.Tokens; t.Tokenizer != "" {
		fmt.Fprintf(w, "tokens (%s, counted by line and word): raw %d, delivered %d, saved %d (%.1f%%); counted in %.1fs alongside\n",
			t.Tokenizer, t.RawTokens, t.DeliveredTokens, t.TokensSaved, t.SavedPct, r.TokenSeconds)
	}
	fmt.Fprintf(w, "available repetition %d B (%.1f%% of raw), of which %d B in outputs no hook may rewrite (failure path, host cap)\n",
		r.All.RepeatBytes, pct(r.All.RepeatBytes, r.All.RawBytes), r.UnrewritableRepeat)
	fmt.Fprintf(w, "ledger: session folds saved %d B (%.1f%% of the repetition, %.1f%% of the rewritable repetition); project folds saved %d B more (%.1f%% with both); other stages %d B\n",
		r.SessionFoldSaved, r.CaptureSessionPct, r.CaptureRewritablePct, r.ProjectFoldSaved, r.CaptureLedgerPct,
		r.All.BytesSaved-r.SessionFoldSaved-r.ProjectFoldSaved)
	fmt.Fprintf(w, "capture (a figure, not a gate): the host lets a hook rewrite %d B of the repetition, of which folds saved %.1f%% (session %.1f%%); it does not let one rewrite %d B (failure path %d B, host cap %d B, rewrite over the cap %d B): 0%% there by the host's rules\n",
		r.RewritableRepeat, r.CaptureRewritableAllPct, r.CaptureRewritablePct, r.UnrewritableRepeat,
		r.UnrewritableByReason[string(events.ReasonFailed)], r.UnrewritableByReason[string(events.ReasonHostCap)], r.UnrewritableByReason[string(events.ReasonHostCapReply)])
	row := func(name string, b *Bucket) {
		fmt.Fprintf(w, "  %-26s %6d calls %11d B raw %6.1f%% saved  repetition %10d B  captured: session %5.1f%%, +project %5.1f%%  folds %d\n",
			name, b.Calls, b.RawBytes, pct(b.BytesSaved, b.RawBytes), b.RepeatBytes,
			pct(b.SessionFoldSaved, b.RepeatBytes), pct(b.SessionFoldSaved+b.ProjectFoldSaved, b.RepeatBytes), b.Folds)
	}
	fmt.Fprintln(w, "by tool kind:")
	for _, k := range sortedKeys(r.ByTool) {
		row(k, r.ByTool[k])
	}
	fmt.Fprintln(w, "by source:")
	for _, k := range sortedKeys(r.BySource) {
		row(k, r.BySource[k])
	}
	if r.OverCap.Calls > 0 {
		fmt.Fprintf(w, "over-cap (--persisted): %d calls, %d inline under the cap; whole outputs %d B, delivered %d B (%.1f%% saved against the whole output)\n",
			r.OverCap.Calls, r.OverCapInline, r.OverCap.RawBytes, r.OverCap.DeliveredBytes, pct(r.OverCap.BytesSaved, r.OverCap.RawBytes))
	}
	if r.Rewrite != "" {
		fmt.Fprintf(w, "rewrite: %d Bash calls shortened by the PreToolUse rewrite's filter (%d still over the host's cut, recorded as not shown); raw %d B, delivered %d B (%.1f%% saved on them)\n",
			r.Rewritten.Calls, r.RewrittenUnshown, r.Rewritten.RawBytes, r.Rewritten.DeliveredBytes, pct(r.Rewritten.BytesSaved, r.Rewritten.RawBytes))
	}
	left := func(title string, m map[string]*Bucket) {
		fmt.Fprintln(w, title)
		keys := sortedKeys(m)
		sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]].DeliveredBytes > m[keys[j]].DeliveredBytes })
		for _, k := range keys {
			b := m[k]
			fmt.Fprintf(w, "  %-34s %6d calls %11d B raw %11d B left %6.1f%% saved\n", k, b.Calls, b.RawBytes, b.DeliveredBytes, pct(b.BytesSaved, b.RawBytes))
		}
	}
	left("by family (the distiller the command chose):", r.ByFamily)
	left("by door (host event, tool):", r.ByDoor)
	left("by reason (how an output was shortened, or why it was left):", r.ByReason)
	fmt.Fprintln(w, "  (captured: the bytes folds saved, as a share of the row's repetition. \"+project\" adds project folds, which take")
	fmt.Fprintln(w, "  lines this reader never received, so it is not a share of them and can pass 100%.)")
	fmt.Fprintln(w, "folds by marker kind:")
	kinds := make([]string, 0, len(r.FoldsByKind))
	for k := range r.FoldsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-10s %d\n", k, r.FoldsByKind[k])
	}
	printRecall(w, r)
	fmt.Fprintln(w, "repetition not captured, by reason (bytes):")
	reasons := make([]string, 0, len(r.Uncaptured))
	for k := range r.Uncaptured {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool { return r.Uncaptured[reasons[i]] > r.Uncaptured[reasons[j]] })
	for _, k := range reasons {
		fmt.Fprintf(w, "  %-60s %10d\n", k, r.Uncaptured[k])
	}
	if r.HookFailures > 0 {
		fmt.Fprintf(w, "hook errors: %d (see omni.log in the home)\n", r.HookFailures)
	}
}

// reasonOf names how one call's output was shortened, or why it was left
// as it was (Report.ByReason).
func reasonOf(res hooks.Result, raw, del int64) string {
	why := "unchanged"
	switch {
	case res.Reason == string(events.ReasonHostCap) || strings.HasPrefix(res.Reason, string(events.ReasonFailed)):
		why = "ledger:" + res.Reason
	case res.ShortenReason == "" && res.Distiller != "" && del < raw && len(res.Folds) == 0:
		why = "distilled"
	case del < raw && len(res.Folds) > 0:
		why = "folded"
	case del < raw:
		why = "shortened"
	case res.ShortenReason != "":
		why = "left:" + res.ShortenReason
	case res.Reason != "":
		why = "ledger:" + res.Reason
	}
	if i := strings.IndexByte(why, ':'); i >= 0 && strings.HasPrefix(why[i+1:], string(events.ReasonStructuredPrefix)) {
		why = "left:structured"
	}
	return why
}

func sortedKeys(m map[string]*Bucket) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SplitExitLine splits a failing call's text as Claude Code shows it
// ("Exit code N", a newline, then the command's output) into that line
// with its newline, the output, and N. Without the line the code is
// exitCode (1 when nil or 0) and line is "".
func SplitExitLine(out string, exitCode *int) (line, body string, code int) {
	code = 1
	if exitCode != nil && *exitCode != 0 {
		code = *exitCode
	}
	const p = "Exit code "
	if !strings.HasPrefix(out, p) {
		return "", out, code
	}
	nl := strings.IndexByte(out, '\n')
	if nl < 0 {
		nl = len(out)
	}
	n, err := strconv.Atoi(out[len(p):nl])
	if err != nil {
		return "", out, code
	}
	if nl < len(out) {
		nl++
	}
	return out[:nl], out[nl:], n
}

// markFrozen writes thin.FrozenFile in a bench's home: the events keep the
// corpus's times, so the daemon's retention must never prune the stream.
func markFrozen(home string) error {
	return os.WriteFile(filepath.Join(home, thin.FrozenFile),
		[]byte("a stream omni bench recorded with the corpus's times: retention leaves it whole\n"), 0o600)
}

// bucketOf returns m's bucket for k, made on first use.
func bucketOf(m map[string]*Bucket, k string) *Bucket {
	b := m[k]
	if b == nil {
		b = &Bucket{}
		m[k] = b
	}
	return b
}

// addBreakdown adds one call to the report's rows by distiller family,
// by door and host tool, and by reason.
func addBreakdown(rep *Report, res hooks.Result, hostTool string, raw, del, repeat int64, folds int) {
	fam := res.Distiller
	if fam == "" {
		fam = "none"
	}
	bucketOf(rep.ByFamily, fam).add(raw, del, repeat, folds)
	bucketOf(rep.ByDoor, strings.TrimSpace(res.Event+" "+hostTool)).add(raw, del, repeat, folds)
	bucketOf(rep.ByReason, reasonOf(res, raw, del)).add(raw, del, repeat, folds)
}

// The origin bench records with each replayed call
// (hooks.HookInput.Origin, hooks.CallInput.Origin), so a stream it wrote
// says which corpus call each invocation stands for: omni bench --store
// and omni log --corpus read them back.
const (
	OriginSeq      = "seq"       // the call's seq in its session
	OriginTool     = "tool"      // the corpus tool kind (Read, Bash, Grep, ...)
	OriginAgent    = "agent"     // the corpus agent ("main", "subagent-...")
	OriginEpoch    = "epoch"     // its compaction_epoch
	OriginExitCode = "exit_code" // the corpus exit_code, when it has one
	// OriginExitLine is the host's "Exit code N" line (with its newline)
	// before a failing call's output that the PreToolUse rewrite's filter
	// shortened ("" when the output had none): the pipe door records the
	// output after it.
	OriginExitLine = "exit_line"
	// OriginInput is the agent's whole command line of a call the
	// rewrite's filter shortened (the pipe door records the runner alone).
	OriginInput = "input"
)

// originOf returns the origin bench records for a corpus call.
func originOf(r Record) map[string]string {
	o := map[string]string{OriginSeq: strconv.Itoa(r.Seq), OriginTool: r.Tool, OriginAgent: r.Agent}
	if r.CompactionEpoch != 0 {
		o[OriginEpoch] = strconv.Itoa(r.CompactionEpoch)
	}
	if r.ExitCode != nil {
		o[OriginExitCode] = strconv.Itoa(*r.ExitCode)
	}
	return o
}

func agentOf(payload map[string]any) string {
	a, _ := payload["agent_id"].(string)
	return a
}

// printRecall writes the recall rate of each mechanism: the share of its
// handles the agent retrieved later in the replay; "HIGH" marks a flagged
// one (stats.RecallFlagPct).
func printRecall(w io.Writer, r *Report) {
	if len(r.RecallFolds)+len(r.RecallCuts) == 0 {
		return
	}
	fmt.Fprintf(w, "recall (handles the agent retrieved later; flagged at %.0f%% over %d handles):\n", stats.RecallFlagPct, stats.RecallFlagMinHandles)
	row := func(kind string, f stats.FoldReport) {
		flag := ""
		if f.Flagged {
			flag = "  HIGH"
		}
		fmt.Fprintf(w, "  %-6s %-24s %6d handles %5d retrieved %5.1f%%%s\n", kind, f.Marker, f.Handles, f.RetrievedHandles, f.RetrievedPct, flag)
	}
	for _, f := range r.RecallFolds {
		row("fold", f)
	}
	for _, f := range r.RecallCuts {
		row("cut", f)
	}
}
