package hooks

// Hosts other than Claude Code (HOSTS.md §2–§4, §10). One binary answers
// every host: the payload says which host sent it, the host's own failure
// signal sends the text down the failure path, and each host gets its reply
// in the one shape it applies. Everything else (ledger, pipeline, events) is
// shared with Claude Code.

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// Host protocol names recorded in Invoked events, besides HostClaudeCode.
const (
	// HostCodex is the OpenAI Codex CLI (PostToolUse payloads carry turn_id).
	HostCodex = "codex"
	// HostGemini is the Google Gemini CLI (AfterTool, BeforeTool, PreCompress).
	HostGemini = "gemini-cli"
	// HostOpenCode is OpenCode through omni's plugin shim ("host":"opencode").
	HostOpenCode = "opencode"
)

// hostPayload holds the keys that tell the hosts apart.
type hostPayload struct {
	HookEventName string          `json:"hook_event_name"`
	TurnID        json.RawMessage `json:"turn_id"`
	Host          string          `json:"host"`
	Timestamp     json.RawMessage `json:"timestamp"`
}

// geminiEvents are hook event names only Gemini CLI sends.
var geminiEvents = map[string]bool{
	"BeforeTool": true, "AfterTool": true, "PreCompress": true, "BeforeAgent": true, "AfterAgent": true,
	"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true,
}

// DetectHost returns the host protocol of a hook payload (HostClaudeCode,
// HostCodex, HostGemini or HostOpenCode), by key signature, first match
// wins: "host":"opencode" (omni's shim); a Gemini-only event name; turn_id
// (Codex); a timestamp key (Gemini's base input) on an event that is not a
// Claude tool event; else Claude Code. A payload that is not a JSON object
// is reported as Claude Code.
func DetectHost(stdin []byte) string {
	var p hostPayload
	_ = json.Unmarshal(stdin, &p)
	return detectHost(p)
}

func detectHost(p hostPayload) string {
	switch {
	case p.Host == HostOpenCode:
		return HostOpenCode
	case geminiEvents[p.HookEventName]:
		return HostGemini
	case len(p.TurnID) > 0 && string(p.TurnID) != "null":
		return HostCodex
	case len(p.Timestamp) > 0 && !claudeToolEvents[p.HookEventName]:
		// Gemini's tool events have names of their own; a timestamp on a
		// Claude-named tool event never switches the reply shape.
		return HostGemini
	}
	return HostClaudeCode
}

// claudeToolEvents are the events whose reply shape depends on the host.
var claudeToolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true}

// normalizeEvent maps a host's event name onto the Claude Code name omni
// dispatches on.
func normalizeEvent(host, ev string) string {
	if host == HostGemini {
		switch ev {
		case "AfterTool":
			return "PostToolUse"
		case "BeforeTool":
			return "PreToolUse"
		case "PreCompress":
			return "PreCompact"
		}
	}
	return ev
}

// hostDelivery extracts the text of a tool result for the hosts other than
// Claude Code and returns the reply renderer (nil on the failure path). ok
// is false for tools and shapes left alone.
func (e *Engine) hostDelivery(host string, d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	switch host {
	case HostCodex:
		return codexDelivery(d, p, in)
	case HostGemini:
		return geminiDelivery(d, p, in)
	case HostOpenCode:
		return openCodeDelivery(d, p, in)
	}
	return d, nil, false
}

// codexDelivery: Codex reports every shell tool as tool_name "Bash" with
// tool_input {"command": …}; tool_response is untyped (a string of output
// in the versions checked; an object with stdout/stderr/output and
// exit_code is accepted too). The only replacement Codex applies is
// {"decision":"block","reason":TEXT}: the reason becomes the tool result the
// model reads. Caveats (HOSTS.md §2): some Codex versions frame it as a
// failed call, the TUI marks the hook "Blocked" and still shows the raw
// output, nested code-mode calls ignore it.
func codexDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	if p.ToolName != "Bash" {
		return d, nil, false
	}
	text, failed, ok := shellText(p.ToolResponse)
	if !ok {
		return d, nil, false
	}
	cmd := sourceOf("Bash", p.ToolInput)
	d.source = cmd
	d.req.Text, d.req.Source, d.req.Failed = text, cmd, failed
	if failed {
		return d, nil, true
	}
	if isOmniExec(cmd) {
		return d, nil, false
	}
	d.req.NoFold = noFoldReason(cmd, in.Passthrough, text, p.ToolResponse)
	return d, codexReply, true
}

// codexReply renders Codex's replacement: {"decision":"block","reason":t}.
func codexReply(t string) ([]byte, error) {
	b, err := marshal(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", t})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// shellText reads a shell result that is a string, or an object with
// stdout/stderr, output or aggregated_output, and an optional exit code.
func shellText(raw json.RawMessage) (text string, failed, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false, false
	}
	for _, k := range []string{"exit_code", "exitCode", "exit"} {
		var code int
		if v, has := m[k]; has && json.Unmarshal(v, &code) == nil && code != 0 {
			failed = true
		}
	}
	var stdout, stderr string
	if json.Unmarshal(m["stdout"], &stdout) == nil {
		_ = json.Unmarshal(m["stderr"], &stderr)
		return joinOutErr(stdout, stderr), failed, true
	}
	for _, k := range []string{"output", "aggregated_output", "formatted_output"} {
		if json.Unmarshal(m[k], &s) == nil {
			return s, failed, true
		}
	}
	return "", false, false
}

// geminiTools maps Gemini CLI tool names to the kind of text they return.
var geminiTools = map[string]string{
	"run_shell_command":   "shell",
	"read_file":           "file",
	"read_many_files":     "file",
	"search_file_content": "search",
	"grep_search":         "search",
	"grep":                "search",
	"glob":                "search",
	"list_directory":      "search",
	"web_fetch":           "web",
}

// geminiExit finds a shell result's "Exit Code: N" line.
var geminiExit = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)\s*$`)

// geminiDelivery: AfterTool's tool_response is {llmContent, returnDisplay,
// error?}; llmContent (a string) is what the model reads. A set error, or a
// shell result stating a non-zero exit code, is the failure path. The
// replacement is hookSpecificOutput.tool_output (plain text).
func geminiDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	kind, known := geminiTools[p.ToolName]
	if !known {
		return d, nil, false
	}
	var resp struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	}
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, nil, false
	}
	var text string
	if json.Unmarshal(resp.LLMContent, &text) != nil {
		return d, nil, false // parts arrays and other shapes are left alone
	}
	src := sourceOf(p.ToolName, p.ToolInput)
	d.source = src
	d.req.Text, d.req.Source = text, src
	if e := strings.TrimSpace(string(resp.Error)); e != "" && e != "null" && e != `""` {
		d.req.Failed = true
		return d, nil, true
	}
	cmd := ""
	if kind == "shell" {
		cmd = src
		if m := geminiExit.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n != 0 {
				d.req.Failed = true
				return d, nil, true
			}
		}
		if isOmniExec(cmd) {
			return d, nil, false
		}
	}
	d.req.NoFold = noFoldReason(cmd, in.Passthrough, text, p.ToolResponse)
	return d, geminiReply, true
}

// geminiReply renders {"hookSpecificOutput":{"hookEventName":"AfterTool","tool_output":t}}.
func geminiReply(t string) ([]byte, error) {
	type hso struct {
		HookEventName string `json:"hookEventName"`
		ToolOutput    string `json:"tool_output"`
	}
	b, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{hso{"AfterTool", t}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// openCodeDelivery: omni's OpenCode plugin sends
// {"host":"opencode","hook_event_name":"PostToolUse","session_id",…,
// "tool_name":"bash","tool_input":ARGS,"tool_response":{"output":TEXT,"exit":N}}
// from tool.execute.after and assigns the reply's "output" to the tool
// result, which OpenCode hands to the model.
func openCodeDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	switch p.ToolName {
	case "bash", "read", "grep", "glob", "list", "webfetch":
	default:
		return d, nil, false
	}
	var resp struct {
		Output *string          `json:"output"`
		Exit   *json.RawMessage `json:"exit"`
	}
	if json.Unmarshal(p.ToolResponse, &resp) != nil || resp.Output == nil {
		return d, nil, false
	}
	text := *resp.Output
	src := sourceOf(p.ToolName, p.ToolInput)
	d.source = src
	d.req.Text, d.req.Source = text, src
	if resp.Exit != nil {
		var code int
		if json.Unmarshal(*resp.Exit, &code) == nil && code != 0 {
			d.req.Failed = true
			return d, nil, true
		}
	}
	cmd := ""
	if p.ToolName == "bash" {
		cmd = src
		if isOmniExec(cmd) {
			return d, nil, false
		}
	}
	d.req.NoFold = noFoldReason(cmd, in.Passthrough, text, p.ToolResponse)
	return d, openCodeReply, true
}

// openCodeReply renders {"output":t} for the plugin shim.
func openCodeReply(t string) ([]byte, error) {
	b, err := marshal(struct {
		Output string `json:"output"`
	}{t})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// isOmniExec reports whether a shell command runs `omni exec` (its output
// was already decided and recorded by that door, so the hook leaves it
// alone). Leading assignments are skipped; the program token must be omni.
func isOmniExec(cmd string) bool {
	words := shellcmd.LeadingWords(cmd, 8)
	i := 0
	for i < len(words) && shellcmd.IsAssignment(words[i]) {
		i++
	}
	return i+1 < len(words) && shellcmd.Base(words[i]) == "omni" && words[i+1] == "exec"
}

// rewritePrograms are the programs whose commands PreToolRewrite wraps.
var rewritePrograms = map[string]bool{
	"git": true, "go": true, "cargo": true, "npm": true, "pnpm": true, "yarn": true, "pytest": true,
	"make": true, "kubectl": true, "docker": true, "terraform": true, "python": true, "python3": true,
	"node": true, "mvn": true, "gradle": true, "dotnet": true, "ls": true, "cat": true, "find": true,
	"grep": true, "rg": true, "tree": true,
}

// PreToolRewrite answers a Claude Code PreToolUse payload for Bash with a
// command wrapped in `OMNI exec --session S [--agent A] -- 'CMD'`, or nil
// when the command is left alone. It is an opt-in (HOSTS.md §1.9): the host
// replaces the whole input, so every original tool_input key is echoed; no
// permissionDecision is sent, so the user's permission rules still decide
// (they see the rewritten command). Only a plain command of a known
// program is wrapped: nothing with a pipe, redirection, list, background,
// substitution, newline, leading assignment or cd; never omni itself; never
// a Codex or Gemini payload.
func PreToolRewrite(stdin []byte, omni string) []byte {
	var p struct {
		HookEventName string                     `json:"hook_event_name"`
		SessionID     string                     `json:"session_id"`
		AgentID       string                     `json:"agent_id"`
		ToolName      string                     `json:"tool_name"`
		ToolInput     map[string]json.RawMessage `json:"tool_input"`
	}
	if json.Unmarshal(stdin, &p) != nil || p.HookEventName != "PreToolUse" || p.ToolName != "Bash" ||
		p.SessionID == "" || DetectHost(stdin) != HostClaudeCode || omni == "" {
		return nil
	}
	var cmd string
	if json.Unmarshal(p.ToolInput["command"], &cmd) != nil {
		return nil
	}
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || strings.ContainsAny(cmd, "|><;&`\n\r\\") || strings.Contains(cmd, "$(") {
		return nil
	}
	words := shellcmd.LeadingWords(cmd, 2)
	if len(words) == 0 || shellcmd.IsAssignment(words[0]) || !rewritePrograms[words[0]] {
		return nil
	}
	var b strings.Builder
	b.WriteString(shellcmd.Quote(omni))
	b.WriteString(" exec --session ")
	b.WriteString(shellcmd.Quote(p.SessionID))
	if p.AgentID != "" {
		b.WriteString(" --agent ")
		b.WriteString(shellcmd.Quote(p.AgentID))
	}
	b.WriteString(" -- ")
	b.WriteString(shellcmd.Quote(cmd))
	out := make(map[string]json.RawMessage, len(p.ToolInput))
	for k, v := range p.ToolInput {
		out[k] = v
	}
	var err error
	if out["command"], err = marshal(b.String()); err != nil {
		return nil
	}
	type hso struct {
		HookEventName string                     `json:"hookEventName"`
		UpdatedInput  map[string]json.RawMessage `json:"updatedInput"`
	}
	reply, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{hso{"PreToolUse", out}})
	if err != nil {
		return nil
	}
	return append(reply, '\n')
}
