package hooks

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/redact"
)

// ErrRedaction: the door's redaction stage could not run on an input. The
// input is not recorded (fail closed for the log) and the caller delivers
// the raw output (fail open for the reader).
var ErrRedaction = fmt.Errorf("redaction failed: input not recorded")

// doorRedaction is what the redaction stage at a door's entry replaced in
// one input.
type doorRedaction struct {
	// total counts values replaced anywhere in the input (tool_input, the
	// error, the command, the output).
	total int
	// visible counts values replaced in the text the model reads (the
	// hook's tool_response, an exec or pipe output).
	visible int
	// kept: the user asked to keep secrets; nothing was redacted.
	kept bool
	// grew: the masks made the input longer than it arrived (a value
	// shorter than "[REDACTED]"), so a payload that passes in place has
	// grown and must say why (pipeline.ShortenRequest.DoorGrew).
	grew bool
}

// redactPayload runs the redaction stage over a hook payload: every string
// of the JSON document (tool_response, tool_input, error) loses its
// credentials before anything is parsed, recorded, archived or printed.
// keep skips it. A panic inside redaction is ErrRedaction.
func redactPayload(stdin []byte, keep bool) (out []byte, r doorRedaction, err error) {
	if keep {
		return stdin, doorRedaction{kept: true}, nil
	}
	defer func() {
		if p := recover(); p != nil {
			out, r, err = nil, doorRedaction{}, ErrRedaction
		}
	}()
	out, fields := redact.JSON(stdin, nil)
	r.total = fields.Total()
	r.visible = fields["tool_response"]
	r.grew = len(out) > len(stdin)
	return out, r, nil
}

// redactCall runs the redaction stage over an exec, pipe or distill input:
// its output text and its command line. keep skips it. A panic inside
// redaction is ErrRedaction.
func redactCall(in CallInput, keep bool) (out CallInput, r doorRedaction, err error) {
	if keep {
		return in, doorRedaction{kept: true}, nil
	}
	defer func() {
		if p := recover(); p != nil {
			out, r, err = in, doorRedaction{}, ErrRedaction
		}
	}()
	var n, m int
	before := len(in.Text)
	// The output is read knowing the command that printed it (a command
	// that prints a credential prints it bare).
	in.Text, n = redact.Output(in.Command, in.Text)
	in.Command, m = redact.Text(in.Command)
	return in, doorRedaction{total: n + m, visible: n, grew: len(in.Text) > before}, nil
}

// record writes the redaction stage's outcome into an Invoked event's
// parameters. prior is the visible count a replay read from the recorded
// event (the stored input is already redacted); the larger count wins.
// priorGrew is the growth flag a replay read from it.
func (r *doorRedaction) record(inv *events.Event, prior int, priorGrew bool) {
	if inv.Invoked == nil {
		return
	}
	if r.kept {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamKeepSecrets), "1")
		return
	}
	r.visible = max(r.visible, prior)
	r.total = max(r.total, r.visible)
	if r.total > 0 {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamRedacted), strconv.Itoa(r.visible))
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamRedactedTotal), strconv.Itoa(r.total))
	}
	r.grew = r.grew || priorGrew
	if r.grew && r.total > 0 {
		inv.Invoked.Params = withParam(inv.Invoked.Params, string(events.ParamRedactedGrew), "1")
	}
}

// untouchedReplyTools echo what the agent wrote; their results are not
// rewritten even when redaction changed them (the agent typed the value).
var untouchedReplyTools = map[string]bool{
	"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true, "TodoWrite": true,
}

// redactedEcho renders the Claude Code reply for a tool omni otherwise
// leaves alone (WebSearch, BashOutput, Task/Agent, MCP tools, …) whose
// result held credentials: tool_response echoed with only its redacted
// strings changed, so its shape is the tool's own (Claude Code drops a reply
// of another shape, docs/HOSTS.md).
func redactedEcho(resp json.RawMessage) []byte {
	if len(resp) == 0 {
		return nil
	}
	b, err := marshal(struct {
		HookSpecificOutput struct {
			HookEventName     string          `json:"hookEventName"`
			UpdatedToolOutput json.RawMessage `json:"updatedToolOutput"`
		} `json:"hookSpecificOutput"`
	}{HookSpecificOutput: struct {
		HookEventName     string          `json:"hookEventName"`
		UpdatedToolOutput json.RawMessage `json:"updatedToolOutput"`
	}{"PostToolUse", resp}})
	if err != nil {
		return nil
	}
	return append(b, '\n')
}

// redactedEchoUncapped is redactedEcho for a result left to the host's
// cap: an object tool_response loses persistedOutputPath and
// persistedOutputSize, so the host shows the redacted text (inline under
// its cap, or persisted and previewed) instead of its persisted original.
func redactedEchoUncapped(resp json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) == nil && m != nil {
		_, p := m["persistedOutputPath"]
		_, z := m["persistedOutputSize"]
		if p || z {
			delete(m, "persistedOutputPath")
			delete(m, "persistedOutputSize")
			if b, err := marshal(m); err == nil {
				resp = b
			}
		}
	}
	return redactedEcho(resp)
}
