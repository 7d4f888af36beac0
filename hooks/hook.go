package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks/hosts"
	"github.com/omnictx/omni/pipeline"
)

// HostOutputCap is Claude Code's inline output cap, in characters
// (hosts.ClaudeCodeOutputCap, where its measurement is stated).
const HostOutputCap = hosts.ClaudeCodeOutputCap

// MaxInput is the largest hook stdin omni reads, in bytes: 16 MiB
// (hosts.MaxPayload). Larger input passes through untouched.
const MaxInput = hosts.MaxPayload

// HostClaudeCode names the Claude Code hook protocol in Invoked events
// (hosts.ClaudeCode).
const HostClaudeCode = hosts.ClaudeCode

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
	// outside is what hosts.Prepare read outside the payload before the
	// Engine's lock (HookResult); a rerun takes it from the recorded params.
	outside hosts.Outside
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
	// Every file a host keeps outside its payload is read here, and the
	// project found, before the lock: no file I/O under it.
	in.Stdin, in.outside = hosts.Prepare(in.Stdin)
	h, err := e.readHook(ctx, in, nil)
	if err != nil {
		return Result{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.decideHook(ctx, h, e.opt.Now().UTC(), nil)
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

// replayCtx carries what a replay takes from the recorded events instead of
// the environment.
type replayCtx struct {
	project string
	params  map[string]string // the Invoked event's params
}

// hookRead is a hook payload read, before the Engine's lock: redacted,
// parsed, its host and event named and its project found.
type hookRead struct {
	in      HookInput // Stdin redacted
	red     doorRedaction
	p       hosts.Payload
	host    string
	event   string
	project string
	// redact is how long the redaction stage took.
	redact time.Duration
}

// hookAt reads and decides one hook payload (readHook, then decideHook);
// reruns call it under the lock with rc set.
func (e *Engine) hookAt(ctx context.Context, in HookInput, now time.Time, rc *replayCtx) (Result, error) {
	h, err := e.readHook(ctx, in, rc)
	if err != nil {
		return Result{}, err
	}
	return e.decideHook(ctx, h, now, rc)
}

// readHook is the part of a hook call that needs none of the Engine's
// state, so a live call runs it before taking the lock: the size checks,
// the redaction stage, the parse, the host, and the project, whose lookup
// reads the file system (Options.ProjectOf; a replay takes the recorded
// one). It reads only Options, which change only during a rerun on an
// Engine that takes no live calls. Errors: an empty or oversized stdin, the
// redaction's, a payload that is not a JSON object or names no event.
func (e *Engine) readHook(ctx context.Context, in HookInput, rc *replayCtx) (hookRead, error) {
	t0 := time.Now()
	if len(in.Stdin) == 0 {
		return hookRead{}, fmt.Errorf("empty stdin")
	}
	if len(in.Stdin) > MaxInput {
		return hookRead{}, fmt.Errorf("stdin of %d bytes is over the %d byte limit", len(in.Stdin), MaxInput)
	}
	// The redaction stage, before anything is parsed, recorded or printed.
	// omni bench --ledger-only measures the ledger alone over a corpus's
	// own text (which its output file carries as raw anyway): no stage but
	// the guard and the ledger runs, and the input is recorded as kept.
	stdin, red, err := redactPayload(in.Stdin, e.opt.KeepSecrets && !e.opt.Shared || e.opt.LedgerOnly)
	took := time.Since(t0)
	if tm := timingOf(ctx); tm != nil {
		tm.Redact = took
	}
	if err != nil {
		return hookRead{}, err
	}
	in.Stdin = stdin
	h := hookRead{in: in, red: red, redact: took}
	if err := hosts.DecodePayload(in.Stdin, &h.p); err != nil {
		return hookRead{}, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	if h.p.HookEventName == "" {
		return hookRead{}, fmt.Errorf("payload has no hook_event_name")
	}
	h.host = hosts.Detect(h.p.Signature())
	h.event = hosts.EventOf(h.host, h.p.HookEventName)
	if rc != nil {
		h.project = rc.project
	} else if h.p.Cwd != "" {
		h.project = e.opt.ProjectOf(h.p.Cwd)
	}
	return h, nil
}

// decideHook decides a payload readHook read, under the Engine's lock:
// the events, the pipeline, the reply.
func (e *Engine) decideHook(ctx context.Context, h hookRead, now time.Time, rc *replayCtx) (Result, error) {
	// The decision's time counts the redaction before the lock, not the
	// wait for the lock.
	t0 := time.Now().Add(-h.redact)
	in, red, host, event, project := h.in, h.red, h.host, h.event, h.project
	p := &h.p
	reader := events.Reader{Session: p.SessionID, Agent: p.AgentID}
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
	if host == hosts.Codex && event == "PostToolUse" && p.ToolName == "Bash" {
		// The exit code lives in Codex's session file; it is read once, live,
		// before the lock (hosts.Prepare), and recorded, so a replay uses
		// the recorded value.
		v := hosts.ExitUnknown
		if rc != nil {
			var recorded bool
			if v, recorded = rc.params[string(events.ParamHostExitCode)]; !recorded {
				// Recorded before omni read Codex's exit code: replay the
				// decision as it was made then.
				p.CodexLegacy = true
			}
		} else {
			if in.outside.HostExitCode != "" {
				v = in.outside.HostExitCode
			}
			inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamHostExitCode), v)
		}
		if code, err := strconv.Atoi(v); err == nil {
			p.HostExit = &code
		}
	}
	p.FrameLegacy = rc != nil && rc.params[string(events.ParamHostFrame)] != "1"
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
		if proto, ok := hosts.Lookup(host); err == nil && ok && proto.SessionContext != nil {
			// The pinned goal, hot files and last active error of the
			// project; never a savings claim (a banner of savings would count
			// rewrites the host had rejected).
			if c := e.sessionContext(project); c != "" {
				r.Reply, _ = proto.SessionContext(c)
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
	var hd hosts.Delivery
	if event == "PostToolUseFailure" {
		var ok bool
		var err error
		if hd, ok, err = hosts.FailureDelivery(p); err != nil || !ok {
			return res, err
		}
	} else {
		proto, ok := hosts.Lookup(host)
		if ok {
			hd, ok = proto.Deliver(p, in.Passthrough)
		}
		if !ok {
			if red.visible > 0 && event == "PostToolUse" && host == HostClaudeCode && !untouchedReplyTools[p.ToolName] {
				// A tool omni does not shorten still loses its credentials.
				res.Reply = redactedEcho(p.ToolResponse)
			}
			return res, nil // a tool or shape omni does not touch
		}
	}
	d = d.withHost(hd)
	render := hd.Render
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
	res.committed(dec, evs)
	res.Reply = reply
	if reply == nil {
		res.Delivered = res.Raw
	}
	return res, nil
}

// marshal is hosts.Marshal, the JSON of every reply.
func marshal(v any) (json.RawMessage, error) { return hosts.Marshal(v) }
