package hooks

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks/hosts"
	"github.com/omnictx/omni/internal/shellcmd"
	"github.com/omnictx/omni/pipeline"
)

// CallInput is one command output reaching omni outside a host hook:
// `omni exec CMD` or `CMD | omni`.
type CallInput struct {
	// Door is events.DoorExec or events.DoorPipe.
	Door events.Door `json:"door"`
	// Command is the command line that produced Text ("" when unknown, pipe).
	Command string `json:"command,omitempty"`
	// Text is the command's captured output.
	Text string `json:"text"`
	// ExitCode is the command's exit status (exec); non-zero takes the
	// failure path: its failure lines never fold; through the exec door
	// and the rewrite's pipe door the rest folds like any output
	// (pipeline.Request.FoldFailing), and a distiller claims the run only by
	// its runner's own failing verdict. ExitUnknown when the door cannot
	// know it (the pipe door), which takes the failure path too.
	ExitCode int `json:"exit_code"`
	// Session and Agent name the reader; without a Session there is no
	// ledger scope and the text passes unchanged, unrecorded.
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Cwd is the working directory (its project scopes project folds).
	Cwd string `json:"cwd,omitempty"`
	// Passthrough reports OMNI_PASSTHROUGH in the environment.
	Passthrough bool `json:"passthrough,omitempty"`
	// KeepSecrets turns redaction off for this output and keeps its raw
	// text in the log (`--keep-secrets`).
	KeepSecrets bool `json:"keep_secrets,omitempty"`
	// Host names the host whose tool prints the delivered text
	// (HostClaudeCode: `omni exec --host claude-code` under the PreToolUse
	// rewrite). The host's own cut then applies: a delivered text it would
	// not show whole (HostShows) is still distilled, but nothing of it is
	// recorded as shown and nothing in it folds.
	Host string `json:"host,omitempty"`
	// Deferred says a host's post-tool hook will see the printed text and
	// record it (the pipe door under the PreToolUse rewrite): a text this
	// door leaves as it arrived (redaction aside), or that shows no failure
	// (no recognised failing verdict, no failure line), is printed as it
	// arrived and not recorded here, so the post-tool hook decides it with
	// the real exit status and records it once; a text this door shortened
	// is recorded here, and the post-tool hook leaves it alone.
	Deferred bool `json:"deferred,omitempty"`
	// Origin says where the input came from, recorded with the invocation
	// (keys events.ParamOriginPrefix*; omni bench: the corpus call a rewrite replays);
	// the decision never reads it.
	Origin map[string]string `json:"origin,omitempty"`
	// Masked counts credential values a redaction before this door already
	// replaced in Text (a replay of a recorded input, an export of a
	// stored stream: omni log --corpus); MaskedGrew says those masks made
	// it longer. The larger of Masked and this door's own count is
	// reported and recorded.
	Masked     int  `json:"masked,omitempty"`
	MaskedGrew bool `json:"masked_grew,omitempty"`
}

// Call decides one exec/pipe output and returns what to print in Result.Delivered.
// On any error the caller prints the raw text (fail open).
func (e *Engine) Call(ctx context.Context, in CallInput) (res Result, err error) {
	raw := in.Text
	defer func() {
		if p := recover(); p != nil {
			res = Result{Raw: raw, Delivered: raw}
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	// The project's lookup reads the file system: before the lock.
	project := ""
	if in.Cwd != "" {
		project = e.opt.ProjectOf(in.Cwd)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.callAt(ctx, in, e.opt.Now().UTC(), project)
}

func (e *Engine) callAt(ctx context.Context, in CallInput, now time.Time, project string) (Result, error) {
	t0 := time.Now()
	// The redaction stage, before anything is recorded or printed: on
	// failure nothing is recorded and the raw output stands.
	// A shared log (a team's stream) is redacted whatever the caller
	// asked: every member's machine holds a copy, and no forget reaches
	// them all.
	if e.opt.Shared {
		in.KeepSecrets = false
	}
	in, red, err := redactCall(in, (in.KeepSecrets || e.opt.KeepSecrets) && !e.opt.Shared)
	if err != nil {
		return Result{Tool: "Bash", Raw: in.Text, Delivered: in.Text}, err
	}
	reader := events.Reader{Session: in.Session, Agent: in.Agent}
	res := Result{Tool: "Bash", Reader: reader, Raw: in.Text, Delivered: in.Text}
	// Without a session there is no reader: nothing folds and nothing is
	// recorded as shown (d.noLedger), but redaction and the distillers run
	// for every door, and whatever they cut is archived like any other cut.
	inv := events.Event{ID: e.newID(now), Kind: events.KindInvoked, Time: now, Project: project,
		Session: reader.Session, Agent: reader.Agent}
	params := map[string]string{string(events.ParamCommand): in.Command, string(events.ParamExitCode): strconv.Itoa(in.ExitCode)}
	if in.Passthrough {
		params[string(events.ParamEnvPassthrough)] = "1"
	}
	if e.opt.LedgerOnly {
		params[string(events.ParamLedgerOnly)] = "1"
	}
	if e.opt.FoldFloor > 0 {
		params[string(events.ParamFoldFloor)] = strconv.Itoa(e.opt.FoldFloor)
	}
	params = withOrigin(params, in.Origin)
	if in.KeepSecrets {
		params[string(events.ParamKeepSecrets)] = "1"
	}
	if in.Host != "" {
		params[string(events.ParamHost)] = in.Host
	}
	inv.Invoked = &events.Invoked{Door: in.Door, Codec: events.CodecZstd, Input: e.compress([]byte(in.Text)),
		InputBytes: len(in.Text), Params: params}
	red.record(&inv, in.Masked, in.MaskedGrew)
	ls := shellcmd.FileRead(in.Command) // a plain file read: the file is the lines' source
	src := in.Command
	if ls != "" {
		src = ls
	}
	d := delivery{reader: reader, project: project, now: now, tool: "Bash", source: in.Command, lineSource: ls,
		req: pipeline.Request{Text: in.Text, Source: src, Failed: in.ExitCode != 0,
			// omni ran the command itself: what the reader reads is omni's
			// delivery, so a failing run folds all but its failure lines.
			FoldFailing: in.Door == events.DoorExec || in.Door == events.DoorPipe}}
	d.req.NoFold = hosts.NoFoldReason(in.Command, in.Passthrough, "", nil)
	d.shorten = &pipeline.ShortenRequest{Command: in.Command, Tool: "Bash", ExitCode: in.ExitCode}
	d.redacted, d.doorGrew = red.visible, red.grew
	d.noLedger = in.Session == ""
	if in.Deferred {
		// Left to the post-tool hook, which knows the exit status: a text
		// this door would not change, and one that shows no failure (no
		// distiller recognised a failing verdict, no line states a
		// failure): most likely a passing run, which the hook distills
		// with its passing verdict.
		dec, evs := e.decide(d, inv.ID)
		dist, why := distilledOf(evs)
		if dec.Text == in.Text || ((dist == "" || why != "") && !anyFailureLine(in.Text)) {
			res.Reason = ReasonDeferred
			return res, nil
		}
	}
	dec, evs, _, fellBack, err := e.commit(ctx, &inv, &d, t0, doorStep{
		decide: func(d *delivery) (pipeline.Decision, []events.Event) {
			dec, evs := e.decide(*d, inv.ID)
			if in.Host == HostClaudeCode && !d.unshown && !HostShows(dec.Text, in.ExitCode) {
				d.unshown = true
				dec, evs = e.decide(*d, inv.ID)
			}
			return dec, evs
		},
		print: func(dec pipeline.Decision) ([]byte, bool, error) {
			return []byte(dec.Text), red.visible > 0, nil
		},
		cut:       func(dec pipeline.Decision) bool { return dec.Text != in.Text },
		unchanged: []byte(in.Text),
	})
	if err != nil {
		return res, err
	}
	if fellBack {
		res.Recorded, res.Reason = true, string(events.ReasonArchiveFailed)
		return res, nil
	}
	res.committed(dec, evs)
	res.Unshown = d.unshown
	return res, nil
}

// ExitUnknown is CallInput.ExitCode for an output whose exit status the
// door cannot know (a filter reading the runner's output through a pipe):
// it is decided as a failing run's.
const ExitUnknown = -1

// ReasonDeferred is Result.Reason for a Deferred call left as it arrived:
// nothing was recorded; the host's post-tool hook records the text.
const ReasonDeferred = "deferred"

// HostFailureCap is the length, in characters, past which Claude Code cuts
// the text of a failing Bash call ("Exit code N", a newline, then the
// output) in its middle before the model reads it: the corpus's cut
// outputs are 10,032 characters, about 5,000 from each end around a
// "... [N characters truncated] ..." line (docs/HOSTS.md calls it a
// middle cut to ~10,000 characters).
const HostFailureCap = 10000

// HostShows reports whether Claude Code shows text, printed by a Bash
// command that exited with code, whole to the model: under HostOutputCap
// characters when code is 0 (at or over it the host persists the output
// and shows a ~2 KB preview), at most HostFailureCap characters with its
// "Exit code N" line when code is not 0.
func HostShows(text string, code int) bool {
	if code == 0 {
		return utf8.RuneCountInString(text) < HostOutputCap
	}
	return utf8.RuneCountInString(text)+len("Exit code \n")+len(strconv.Itoa(code)) <= HostFailureCap
}

// anyFailureLine reports whether some line of text states a failure.
func anyFailureLine(text string) bool {
	for _, ln := range pipeline.SplitLines(nil, text) {
		if pipeline.IsFailureLine(text[ln.Start:ln.End]) {
			return true
		}
	}
	return false
}
