package hooks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
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
	// failure path: the text passes untouched and is recorded as delivered.
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
	// priorRedacted is the recorded redaction count a replay reruns with.
	priorRedacted int
	// priorGrew is the recorded growth flag of the redaction.
	priorGrew bool
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
	e.mu.Lock()
	defer e.mu.Unlock()
	project := ""
	if in.Cwd != "" {
		project = e.opt.ProjectOf(in.Cwd)
	}
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
	params := map[string]string{"command": in.Command, "exit_code": strconv.Itoa(in.ExitCode)}
	if in.Passthrough {
		params["env_passthrough"] = "1"
	}
	if e.opt.LedgerOnly {
		params["ledger_only"] = "1"
	}
	if in.KeepSecrets {
		params["keep_secrets"] = "1"
	}
	if in.Host != "" {
		params["host"] = in.Host
	}
	inv.Invoked = &events.Invoked{Door: in.Door, Codec: events.CodecZstd, Input: e.compress([]byte(in.Text)),
		InputBytes: len(in.Text), Params: params}
	red.record(&inv, in.priorRedacted, in.priorGrew)
	ls := shellcmd.FileRead(in.Command) // a plain file read: the file is the lines' source
	d := delivery{reader: reader, project: project, now: now, tool: "Bash", source: in.Command, lineSource: ls,
		req: pipeline.Request{Text: in.Text, Source: lineSourceOr(ls, in.Command), Failed: in.ExitCode != 0}}
	d.req.NoFold = noFoldReason(in.Command, in.Passthrough, "", nil)
	d.shorten = &pipeline.ShortenRequest{Command: in.Command, Tool: "Bash", ExitCode: in.ExitCode}
	d.redacted, d.doorGrew = red.visible, red.grew
	d.noLedger = in.Session == ""
	var dec pipeline.Decision
	var evs []events.Event
	for round := 0; ; round++ {
		dec, evs = e.decide(d, inv.ID)
		if in.Host == HostClaudeCode && !d.unshown && !HostShows(dec.Text, in.ExitCode) {
			d.unshown = true
			dec, evs = e.decide(d, inv.ID)
		}
		evs[len(evs)-1].Emitted.Output = sha([]byte(dec.Text))
		if red.visible > 0 {
			evs[len(evs)-1].Emitted.Replied = true // the door changed the text: redaction
		}
		e.stamp(evs, t0)
		// On a shared log, another machine may append first: decide again
		// with its batches folded (appendDecision).
		if err = e.appendDecision(ctx, &inv, evs); !errors.Is(err, errStale) || round == maxRedecide {
			break
		}
	}
	if err != nil {
		if dec.Text == in.Text || errors.Is(err, errStale) {
			return res, fmt.Errorf("append: %w", err)
		}
		params["nofold"] = "archive-failed"
		d.req.NoFold = "archive-failed"
		_, evs = e.decide(d, inv.ID)
		evs[len(evs)-1].Emitted.Output = sha([]byte(in.Text))
		if err2 := e.appendDecision(ctx, &inv, evs); err2 != nil {
			return res, fmt.Errorf("append: %w", err2)
		}
		res.Recorded, res.Reason = true, "archive-failed"
		return res, nil
	}
	res.Recorded = true
	res.Delivered = dec.Text
	res.Unshown = d.unshown
	res.Folds = dec.Folds
	res.Reason = dec.Reason
	res.Distiller, res.ShortenReason = distilledOf(evs)
	res.RepeatBytes = dec.RepeatBytes
	return res, nil
}

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
