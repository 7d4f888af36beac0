package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/omnictx/omni/internal/rewrite"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/shellcmd"
	"github.com/omnictx/omni/pipeline"
)

// HostOutputCap is Claude Code's inline output cap, in characters, measured
// on a Bash result's stdout alone (stderr is not counted): at or above it
// the host cuts stdout at exactly this many characters, adds
// persistedOutputPath to the hook payload, persists the output to a file
// and shows the model a ~2 KB preview (measured on Claude Code 2.1.328,
// docs/HOSTS.md). omni leaves such output alone and records none of it
// as delivered, since the model saw only the preview. A rewrite of this many
// characters or more is persisted again, so omni never replies with one.
const HostOutputCap = 30000

// MaxInput is the largest hook stdin omni reads, in bytes: 16 MiB.
// Larger input passes through untouched.
const MaxInput = 16 << 20

// HostClaudeCode names the Claude Code hook protocol in Invoked events.
const HostClaudeCode = "claude-code"

// HookInput is one hook invocation as the host delivered it.
type HookInput struct {
	// Stdin is the raw hook payload (JSON).
	Stdin []byte `json:"stdin"`
	// Passthrough reports OMNI_PASSTHROUGH set in the hook's environment.
	Passthrough bool `json:"passthrough,omitempty"`
	// Origin says where the input came from, recorded with the invocation
	// (keys events.ParamOriginPrefix*; omni bench: the corpus call it replays); the
	// decision never reads it.
	Origin map[string]string `json:"origin,omitempty"`
	// Masked counts credential values a redaction before omni already
	// replaced in the payload's tool_response (an export of a stored
	// stream: omni log --corpus); MaskedGrew says those masks made it
	// longer. The larger of Masked and the door's own count is reported
	// and recorded.
	Masked     int  `json:"masked,omitempty"`
	MaskedGrew bool `json:"masked_grew,omitempty"`
}

// Result is everything one invocation produced.
type Result struct {
	// Reply is what the hook prints (nil: print nothing, the host keeps its
	// own bytes). For exec and pipe it is unused.
	Reply []byte
	// Event is the host event name; Tool the host tool.
	Event, Tool string
	// Raw is the text the host would show the model; Delivered what the
	// model reads after omni (equal to Raw when nothing changed). Both are
	// empty for events that carry no tool output.
	Raw, Delivered string
	// Folds lists the folds made (empty when nothing folded).
	Folds []pipeline.Fold
	// Reason says why nothing changed.
	Reason string
	// Distiller and ShortenReason are what the first-seen stages reported
	// (pipeline.ShortenResult's Distiller and Reason) when they ran: the
	// distiller chosen ("" for none) and why the output passed them
	// unshortened ("" when they shortened it). Reports group by them.
	Distiller, ShortenReason string
	// Reader is who received the text.
	Reader events.Reader
	// RepeatBytes is the available repetition in Raw (see pipeline.Decision).
	RepeatBytes int
	// Recorded reports whether the invocation's events reached the log.
	Recorded bool
	// Unshown reports an exec output the host will not show whole
	// (CallInput.Host): nothing of it was recorded as shown.
	Unshown bool
}

type ccPayload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	AgentID        string          `json:"agent_id"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Error          json.RawMessage `json:"error"`
	Source         string          `json:"source"`
	Trigger        string          `json:"trigger"`
	Reason         string          `json:"reason"`
	TurnID         json.RawMessage `json:"turn_id"`
	Host           string          `json:"host"`
	Timestamp      json.RawMessage `json:"timestamp"`
	TranscriptPath string          `json:"transcript_path"`
	ToolUseID      string          `json:"tool_use_id"`
	// OriginalRequestName marks a Gemini tail call a hook asked for.
	OriginalRequestName json.RawMessage `json:"original_request_name"`
	// hostExit is the command's exit code where the host keeps it outside
	// the payload (Codex: its session file); nil when unknown.
	hostExit *int
	// codexLegacy: a replay of a Codex call recorded before omni read its
	// exit code (no host_exit_code param); decided as then.
	codexLegacy bool
	// frameLegacy: a replay of a call recorded without events.ParamHostFrame;
	// the host's frame stays in the text, as it was decided then.
	frameLegacy bool
}

// Hook handles one Claude Code hook payload and returns what to print (nil
// for nothing). It never returns an error the caller must act on: every
// failure is logged and answered with nil, so the host keeps its raw output
// (fail open); a panic inside is recovered the same way.
func (e *Engine) Hook(ctx context.Context, in HookInput) []byte {
	r, err := e.HookResult(ctx, in)
	if err != nil {
		e.opt.Logf("hook: %v", err)
		return nil
	}
	return r.Reply
}

// HookResult is Hook with the details (bench and tests use it; it is the
// same code path). On error the Result's Reply is nil.
func (e *Engine) HookResult(ctx context.Context, in HookInput) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res = Result{}
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	if tm := timingOf(ctx); tm != nil {
		t0 := time.Now()
		defer func() { tm.Decide = max(0, time.Since(t0)-tm.Redact-tm.Append) }()
	}
	in.Stdin = CursorPayload(CopilotPayload(inlinePersisted(in.Stdin)))
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hookAt(ctx, in, e.opt.Now().UTC(), nil)
}

// distilledOf returns the Distilled event's distiller and reason in a
// batch, or "".
func distilledOf(evs []events.Event) (string, string) {
	for _, ev := range evs {
		if ev.Distilled != nil {
			return ev.Distilled.Distiller, ev.Distilled.Reason
		}
	}
	return "", ""
}

// persistedFromKey marks a Bash tool_response whose stdout omni read back
// from the host's persisted file (inlinePersisted); its value is the path.
// It is recorded with the payload, so a replay decides the same way, and
// never echoed to the host.
const persistedFromKey = "omniPersistedFrom"

// inlinePersisted rewrites a Claude Code Bash PostToolUse payload whose
// output the host persisted (over HostOutputCap: tool_response.stdout is cut
// at 30,000 characters and persistedOutputPath names the whole output,
// measured, docs/HOSTS.md): stdout becomes the file's content, the two persisted keys
// go, and persistedFromKey records the path. The pipeline then sees the
// whole output; the reply is inline only when what it delivers is under the
// cap (hookAt). Any other payload, an unreadable file, or one over MaxInput
// is returned unchanged.
func inlinePersisted(stdin []byte) []byte {
	if !bytes.Contains(stdin, []byte(`"persistedOutputPath"`)) {
		return stdin
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(stdin, &top) != nil {
		return stdin
	}
	var name, event string
	_ = json.Unmarshal(top["tool_name"], &name)
	_ = json.Unmarshal(top["hook_event_name"], &event)
	if name != "Bash" || event != "PostToolUse" {
		return stdin
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(top["tool_response"], &resp) != nil {
		return stdin
	}
	var path, transcript string
	if json.Unmarshal(resp["persistedOutputPath"], &path) != nil || !filepath.IsAbs(path) {
		return stdin
	}
	_ = json.Unmarshal(top["transcript_path"], &transcript)
	if !hostPersisted(path, transcript) {
		return stdin
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxInput {
		return stdin
	}
	full, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(full) {
		return stdin
	}
	if resp["stdout"], err = marshal(string(full)); err != nil {
		return stdin
	}
	delete(resp, "persistedOutputPath")
	delete(resp, "persistedOutputSize")
	if resp[persistedFromKey], err = marshal(path); err != nil {
		return stdin
	}
	if top["tool_response"], err = marshal(resp); err != nil {
		return stdin
	}
	out, err := json.Marshal(top)
	if err != nil || len(out) > MaxInput {
		return stdin
	}
	return out
}

// hostPersisted reports whether path is where Claude Code persists a
// session's large outputs: a file directly inside the session's
// tool-results directory beside its transcript ("<dir>/<session>.jsonl" has
// "<dir>/<session>/tool-results/<id>.txt", measured with Claude Code
// 2.1.328, docs/HOSTS.md), reached without a link. Any other path (a
// payload naming ~/.ssh/id_rsa) is never read.
func hostPersisted(path, transcript string) bool {
	if !filepath.IsAbs(transcript) || !strings.HasSuffix(transcript, ".jsonl") || filepath.Clean(path) != path {
		return false
	}
	dir := filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "tool-results")
	if filepath.Dir(path) != dir {
		return false
	}
	// Every directory on the way resolves to itself: no link leads out.
	real, err := filepath.EvalSymlinks(path)
	return err == nil && real == path
}

// replayCtx carries what a replay takes from the recorded events instead of
// the environment.
type replayCtx struct {
	project string
	params  map[string]string // the Invoked event's params
}

func (e *Engine) hookAt(ctx context.Context, in HookInput, now time.Time, rc *replayCtx) (Result, error) {
	t0 := time.Now()
	if len(in.Stdin) == 0 {
		return Result{}, fmt.Errorf("empty stdin")
	}
	if len(in.Stdin) > MaxInput {
		return Result{}, fmt.Errorf("stdin of %d bytes is over the %d byte limit", len(in.Stdin), MaxInput)
	}
	// The redaction stage, before anything is parsed, recorded or printed.
	// omni bench --ledger-only measures the ledger alone over a corpus's
	// own text (which its output file carries as raw anyway): no stage but
	// the guard and the ledger runs, and the input is recorded as kept.
	stdin, red, err := redactPayload(in.Stdin, e.opt.KeepSecrets && !e.opt.Shared || e.opt.LedgerOnly)
	if tm := timingOf(ctx); tm != nil {
		tm.Redact = time.Since(t0)
	}
	if err != nil {
		return Result{}, err
	}
	in.Stdin = stdin
	var p ccPayload
	if err := decodePayload(in.Stdin, &p); err != nil {
		return Result{}, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	if p.HookEventName == "" {
		return Result{}, fmt.Errorf("payload has no hook_event_name")
	}
	host := detectHost(hostPayload{HookEventName: p.HookEventName, TurnID: p.TurnID, Host: p.Host, Timestamp: p.Timestamp, TranscriptPath: p.TranscriptPath})
	event := normalizeEvent(host, p.HookEventName)
	reader := events.Reader{Session: p.SessionID, Agent: p.AgentID}
	project := ""
	if rc != nil {
		project = rc.project
	} else if p.Cwd != "" {
		project = e.opt.ProjectOf(p.Cwd)
	}
	res := Result{Event: p.HookEventName, Tool: p.ToolName, Reader: reader}
	inv := events.Event{ID: e.newID(now), Kind: events.KindInvoked, Time: now, Project: project,
		Session: reader.Session, Agent: reader.Agent}
	inv.Invoked = &events.Invoked{Door: events.DoorHook, Host: host, Codec: events.CodecZstd,
		Input: e.compress(in.Stdin), InputBytes: len(in.Stdin)}
	if in.Passthrough {
		inv.Invoked.Params = map[string]string{string(events.ParamEnvPassthrough): "1"}
	}
	inv.Invoked.Params = withOrigin(inv.Invoked.Params, in.Origin)
	prior, priorGrew := in.Masked, in.MaskedGrew
	if rc != nil {
		prior, _ = strconv.Atoi(rc.params[string(events.ParamRedacted)])
		priorGrew = rc.params[string(events.ParamRedactedGrew)] == "1"
	}
	red.record(&inv, prior, priorGrew)
	if host == HostCodex && event == "PostToolUse" && p.ToolName == "Bash" {
		// The exit code lives in Codex's session file; it is read once, live,
		// and recorded, so a replay uses the recorded value.
		v := exitUnknown
		if rc != nil {
			var recorded bool
			if v, recorded = rc.params[string(events.ParamHostExitCode)]; !recorded {
				// Recorded before omni read Codex's exit code: replay the
				// decision as it was made then.
				p.codexLegacy = true
			}
		} else {
			if code, ok := codexExitCode(p.TranscriptPath, p.ToolUseID); ok {
				v = strconv.Itoa(code)
			}
			inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamHostExitCode), v)
		}
		if code, err := strconv.Atoi(v); err == nil {
			p.hostExit = &code
		}
	}
	p.frameLegacy = rc != nil && rc.params[string(events.ParamHostFrame)] != "1"
	base := events.Event{Time: now, Project: project, Session: reader.Session, Agent: reader.Agent, Call: inv.ID}
	simple := func(k events.Kind, set func(*events.Event)) (Result, error) {
		ev := base
		ev.ID, ev.Kind = e.newID(now), k
		set(&ev)
		if err := e.append(ctx, []events.Event{inv, ev}); err != nil {
			return res, fmt.Errorf("append %s: %w", k, err)
		}
		res.Recorded = true
		return res, nil
	}
	switch event {
	case "PreCompact", "PostCompact":
		// Gemini's PreCompress arrives here as PreCompact; the trigger keeps
		// the host's own name.
		return simple(events.KindCompacted, func(ev *events.Event) { ev.Compacted = &events.Compacted{Trigger: p.HookEventName} })
	case "SessionStart":
		var r Result
		var err error
		switch p.Source {
		case "compact", "clear":
			// The model no longer holds earlier output: every reader of the
			// session forgets what it was shown.
			r, err = simple(events.KindCompacted, func(ev *events.Event) {
				ev.Compacted = &events.Compacted{Trigger: "SessionStart:" + p.Source}
			})
		default:
			// startup, resume and fork keep what the context holds: a resumed
			// session keeps its transcript (and its ledger); a fork gets a new
			// session id, so its reader starts empty.
			r, err = simple(events.KindReaderStarted, func(ev *events.Event) { ev.ReaderStarted = &events.ReaderStarted{Source: p.Source} })
		}
		if err == nil && host == HostClaudeCode {
			// The pinned goal, hot files and last active error of the
			// project; never a savings claim (a banner of savings would count
			// rewrites the host had rejected).
			if c := e.sessionContext(project); c != "" {
				r.Reply, _ = marshal(map[string]any{"hookSpecificOutput": map[string]any{
					"hookEventName": "SessionStart", "additionalContext": c}})
				r.Reply = append(r.Reply, '\n')
			}
		}
		return r, err
	case "SubagentStart":
		// The reader is (session_id, agent_id): a new agent id starts empty.
		return simple(events.KindReaderStarted, func(ev *events.Event) {
			ev.ReaderStarted = &events.ReaderStarted{Source: "SubagentStart"}
		})
	case "SubagentStop":
		// The subagent's context is gone with it; its agent id is never
		// reused, so nothing needs forgetting and nothing is answered.
		return res, nil
	case "SessionEnd":
		return simple(events.KindSessionEnded, func(ev *events.Event) { ev.SessionEnded = &events.SessionEnded{Reason: p.Reason} })
	case "PostToolUse", "PostToolUseFailure":
	default:
		// PreToolUse (see rewrite.Reply, outside the Engine),
		// UserPromptSubmit, Stop, …: nothing the ledger needs, no reply.
		return res, nil
	}

	d := delivery{reader: reader, project: project, now: now, tool: p.ToolName}
	var render func(text string) ([]byte, error)
	if event == "PostToolUseFailure" {
		var msg string
		if err := json.Unmarshal(p.Error, &msg); err != nil {
			return res, fmt.Errorf("PostToolUseFailure without an error string")
		}
		d.req = pipeline.Request{Text: msg, Failed: true}
		d.source = sourceOf(p.ToolName, p.ToolInput)
		if p.ToolName == "Bash" {
			if line, _, ok := rewrite.Unwrap(d.source); ok {
				if pipeline.HasMarker(msg) {
					// The rewrite's filter shortened and recorded this
					// output for the same reader (hooks.Deferred).
					return res, nil
				}
				d.source = line // read as the call the agent made
			}
		}
		if p.ToolName == "Bash" {
			d.lineSource = shellcmd.FileRead(d.source)
		}
		d.req.Source = lineSourceOr(d.lineSource, d.source)
	} else {
		var ok bool
		if host == HostClaudeCode {
			d, render, ok = e.toolDelivery(d, p, in)
		} else {
			d, render, ok = e.hostDelivery(host, d, p, in)
		}
		if !ok {
			if red.visible > 0 && event == "PostToolUse" && host == HostClaudeCode && !untouchedReplyTools[p.ToolName] {
				// A tool omni does not shorten still loses its credentials.
				res.Reply = redactedEcho(p.ToolResponse)
			}
			return res, nil // a tool or shape omni does not touch
		}
	}
	d.redacted, d.doorGrew = red.visible, red.grew
	if d.framed && rc == nil {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamHostFrame), "1")
	}
	if render == nil && d.unrecorded && red.visible > 0 && host == HostClaudeCode && event == "PostToolUse" {
		// Over the host's cap (or made so by the masks): nothing is
		// shortened, but the host must not show its own text, which holds
		// the credentials. The redacted tool_response is the reply, without
		// the persisted-output keys (a reply that keeps them is shown as
		// the host's persisted original; without them the host shows it
		// inline under its cap, or persists and previews it).
		resp := p.ToolResponse
		render = func(string) ([]byte, error) { return redactedEchoUncapped(resp), nil }
	}
	res.Raw = d.req.Text
	if e.opt.LedgerOnly {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamLedgerOnly), "1")
	}
	if e.opt.FoldFloor > 0 {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamFoldFloor), strconv.Itoa(e.opt.FoldFloor))
	}
	if d.persisted {
		// The stats count this call against the whole output, which the
		// model would otherwise have read from the host's file.
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamPersisted), "1")
	}
	dec, evs, reply, fellBack, err := e.commit(ctx, &inv, &d, t0, doorStep{
		decide: func(d *delivery) (pipeline.Decision, []events.Event) {
			dec, evs := e.decide(*d, inv.ID)
			if d.persisted && utf8.RuneCountInString(dec.Text) >= HostOutputCap {
				// Even shortened, the host would persist it again: leave the
				// preview and its file alone, and record nothing as delivered.
				// Unless the door masked a credential: then the redacted text
				// is the reply, which the host persists in its turn and
				// previews, so the preview the model reads holds no secret.
				d.unrecorded, d.reason = true, string(events.ReasonHostCap)
				if red.visible == 0 {
					render = nil
				}
				dec, evs = e.decide(*d, inv.ID)
			} else if host == HostClaudeCode && dec.Text != res.Raw && render != nil && d.req.NoFold == "" && utf8.RuneCountInString(dec.Text) >= HostOutputCap {
				d.req.NoFold = string(events.ReasonHostCapReply)
				dec, evs = e.decide(*d, inv.ID)
				if red.visible > 0 && utf8.RuneCountInString(dec.Text) >= HostOutputCap {
					// The redacted reply is sent (below) and the host persists
					// it: the model reads a preview, so nothing of it counts as
					// shown.
					d.unrecorded, d.reason = true, string(events.ReasonHostCap)
					dec, evs = e.decide(*d, inv.ID)
				}
			}
			return dec, evs
		},
		// A redacted output is rewritten even when nothing else changed,
		// past the host's cap too: the host persists a reply of
		// HostOutputCap characters or more and shows its preview, so no
		// reply at all would show the model the unredacted original.
		cut: func(dec pipeline.Decision) bool { return dec.Text != res.Raw || red.visible > 0 },
		print: func(dec pipeline.Decision) ([]byte, bool, error) {
			if (dec.Text == res.Raw && red.visible == 0) || render == nil {
				return nil, false, nil
			}
			reply, err := render(dec.Text)
			return reply, red.visible > 0 && reply != nil, err
		},
	})
	if err != nil {
		return res, err
	}
	if fellBack {
		res.Recorded, res.Delivered, res.Reason = true, res.Raw, string(events.ReasonArchiveFailed)
		return res, nil
	}
	res.Recorded = true
	res.Reply = reply
	res.Delivered = dec.Text
	res.Folds = dec.Folds
	res.Reason = dec.Reason
	res.Distiller, res.ShortenReason = distilledOf(evs)
	res.RepeatBytes = dec.RepeatBytes
	if reply == nil {
		res.Delivered = res.Raw
	}
	return res, nil
}

// noFoldReason returns why a text must pass unchanged ("" if it may fold):
// omni's own recovery commands (omni retrieve, omni diff: their output is
// the answer), the explicit opt-out (an OMNI_PASSTHROUGH= assignment before
// the command, or envPassthrough), and text the JSON decoder could not carry
// exactly (lone surrogate escapes decode to U+FFFD).
func noFoldReason(cmd string, envPassthrough bool, text string, raw json.RawMessage) string {
	if envPassthrough {
		return string(events.ReasonPassthrough)
	}
	if cmd != "" {
		words := shellcmd.LeadingWords(cmd, 8)
		i := 0
		for i < len(words) && shellcmd.IsAssignment(words[i]) {
			if strings.HasPrefix(words[i], "OMNI_PASSTHROUGH=") {
				return string(events.ReasonPassthrough)
			}
			i++
		}
		if i+1 < len(words) && shellcmd.Base(words[i]) == "omni" && (words[i+1] == "retrieve" || words[i+1] == "diff") {
			return string(events.ReasonOwnRecovery)
		}
	}
	if strings.ContainsRune(text, utf8.RuneError) && (!utf8.Valid(raw) || bytes.Contains(raw, []byte(`\ud`)) || bytes.Contains(raw, []byte(`\uD`))) {
		return string(events.ReasonLossyJSON)
	}
	return ""
}

// lineSourceOr returns ls, or fallback when ls is "".
func lineSourceOr(ls, fallback string) string {
	if ls != "" {
		return ls
	}
	return fallback
}

// sourceOf returns the command (Bash) or file path (Read and others) of a
// tool_input, or "".
func sourceOf(tool string, input json.RawMessage) string {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		FilePathJS   string `json:"filePath"`
		AbsolutePath string `json:"absolute_path"`
		Path         string `json:"path"`
		Pattern      string `json:"pattern"`
		URL          string `json:"url"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case in.Command != "":
		return in.Command
	case in.FilePath != "":
		return in.FilePath
	case in.FilePathJS != "":
		return in.FilePathJS
	case in.AbsolutePath != "":
		return in.AbsolutePath
	case in.Pattern != "":
		return in.Pattern
	case in.URL != "":
		return in.URL
	}
	return in.Path
}

// joinOutErr is how the model reads a Bash result: stdout, then stderr on a
// new line when both are present.
func joinOutErr(out, err string) string {
	if err == "" {
		return out
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		return out + "\n" + err
	}
	return out + err
}

func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// replyJSON renders {"hookSpecificOutput":{"hookEventName":ev,"updatedToolOutput":out}}.
func replyJSON(ev string, out map[string]json.RawMessage) ([]byte, error) {
	type hso struct {
		HookEventName     string                     `json:"hookEventName"`
		UpdatedToolOutput map[string]json.RawMessage `json:"updatedToolOutput"`
	}
	b, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{hso{ev, out}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
