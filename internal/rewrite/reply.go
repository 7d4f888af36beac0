package rewrite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// PreTool configures Reply.
type PreTool struct {
	// Omni is the omni binary the rewritten command runs (an absolute
	// path; "" rewrites nothing).
	Omni string
	// Form is which commands are taken (Narrow when empty).
	Form Form
	// Sources returns the settings files to read for a call whose payload
	// names cwd (nil: SourcesFor with the process environment).
	Sources func(cwd string) Sources
}

// DefaultBashTimeoutMS is Claude Code's Bash timeout when the call names
// none, in milliseconds (the Bash tool's documented default, 2 minutes).
const DefaultBashTimeoutMS = 120000

// prePayload is the part of a Claude Code PreToolUse payload Reply reads,
// with the keys that tell another host's payload apart.
type prePayload struct {
	HookEventName  string                     `json:"hook_event_name"`
	SessionID      string                     `json:"session_id"`
	AgentID        string                     `json:"agent_id"`
	Cwd            string                     `json:"cwd"`
	PermissionMode string                     `json:"permission_mode"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
	TranscriptPath string                     `json:"transcript_path"`
	// Codex sends turn_id, omni's OpenCode shim and the Copilot adapter
	// "host", Gemini CLI a timestamp (on BeforeTool, never PreToolUse):
	// any of them means the payload is not Claude Code's.
	TurnID    json.RawMessage `json:"turn_id"`
	Host      string          `json:"host"`
	Timestamp json.RawMessage `json:"timestamp"`
}

// claudeCode reports a payload only Claude Code sends: no key of another
// host (the checks of hooks.DetectHost that apply to PreToolUse) and a
// transcript that is not a Codex session file (rollout-*.jsonl).
func (p *prePayload) claudeCode() bool {
	if (len(p.TurnID) > 0 && string(p.TurnID) != "null") || p.Host != "" || len(p.Timestamp) > 0 {
		return false
	}
	base := filepath.Base(p.TranscriptPath)
	return !(strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl"))
}

// Reply answers a Claude Code PreToolUse payload for Bash (stdin, JSON)
// with a command wrapped in `OMNI exec --session S [--agent A] --host
// claude-code --timeout-ms T -- 'CMD'`, or nil when the command is left
// alone. The decision is Decide on the payload's command,
// run_in_background and permission_mode and the settings files Claude Code
// merges (measured, docs/HOSTS.md: the host matches its permission rules
// against the rewritten command only; a settings file that cannot be read
// stops every rewrite). The host replaces the whole input, so every
// original tool_input key is echoed. When an allow rule permitted the
// original command outside bypass mode, the reply carries
// permissionDecision "allow" (the rewritten command would match no rule
// and ask). T is the call's own timeout (tool_input.timeout, else
// DefaultBashTimeoutMS): exec stops the command and prints its partial
// output before it. Never a Codex, Gemini, OpenCode or Copilot payload.
// Standard library only, so the thin hook client (cmd/omni-hook) answers
// it without starting the omni binary.
func Reply(stdin []byte, o PreTool) []byte {
	var p prePayload
	if json.Unmarshal(stdin, &p) != nil || p.HookEventName != "PreToolUse" || p.ToolName != "Bash" ||
		p.SessionID == "" || !p.claudeCode() || o.Omni == "" {
		return nil
	}
	var cmd string
	if json.Unmarshal(p.ToolInput["command"], &cmd) != nil {
		return nil
	}
	var bg bool
	if raw, ok := p.ToolInput["run_in_background"]; ok && json.Unmarshal(raw, &bg) != nil {
		return nil // an unknown shape: leave it to the host
	}
	timeout := DefaultBashTimeoutMS
	if raw, ok := p.ToolInput["timeout"]; ok {
		var f float64
		if json.Unmarshal(raw, &f) != nil || f <= 0 {
			return nil
		}
		timeout = int(f)
	}
	form := o.Form
	if form == "" {
		form = Narrow
	}
	sources := o.Sources
	if sources == nil {
		sources = func(cwd string) Sources { return SourcesFor(cwd, os.Getenv) }
	}
	src := sources(p.Cwd)
	rules, err := Load(src)
	if err != nil {
		rules = nil // unknown rules: nothing is rewritten
	}
	projectDir := p.Cwd
	if len(src.Project) > 0 {
		projectDir = src.Project[0]
	}
	d := Decide(Call{Command: cmd, Background: bg, Mode: p.PermissionMode, ProjectDir: projectDir}, rules, form)
	if !d.Rewrite {
		return nil
	}
	var b strings.Builder
	b.WriteString(shellcmd.Quote(o.Omni))
	b.WriteString(" exec --session ")
	b.WriteString(shellcmd.Quote(p.SessionID))
	if p.AgentID != "" {
		b.WriteString(" --agent ")
		b.WriteString(shellcmd.Quote(p.AgentID))
	}
	b.WriteString(" --host claude-code --timeout-ms ")
	b.WriteString(strconv.Itoa(timeout))
	b.WriteString(" -- ")
	b.WriteString(shellcmd.Quote(strings.TrimSpace(cmd)))
	out := make(map[string]json.RawMessage, len(p.ToolInput))
	for k, v := range p.ToolInput {
		out[k] = v
	}
	if out["command"], err = marshal(b.String()); err != nil {
		return nil
	}
	type hso struct {
		HookEventName            string                     `json:"hookEventName"`
		PermissionDecision       string                     `json:"permissionDecision,omitempty"`
		PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
		UpdatedInput             map[string]json.RawMessage `json:"updatedInput"`
	}
	h := hso{HookEventName: "PreToolUse", UpdatedInput: out}
	if d.Allow {
		h.PermissionDecision = "allow"
		h.PermissionDecisionReason = "omni: the original command is allowed by " + d.Why
	}
	reply, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{h})
	if err != nil {
		return nil
	}
	return append(reply, '\n')
}

// marshal encodes v as JSON without HTML escaping and without the
// encoder's trailing newline.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
