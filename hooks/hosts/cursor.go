package hosts

// Cursor (IDE and CLI), built from its documented hook payloads (not
// driven here: Cursor is not on npm; docs/HOSTS.md "Cursor"). Every
// payload carries "cursor_version" and Cursor's own event names
// (postToolUse, postToolUseFailure, preCompact, preToolUse, sessionStart);
// a tool's output is "tool_output", a JSON string. What a hook may change:
//   - postToolUse replaces the output of an MCP tool only
//     ({"updated_mcp_tool_output": V}, V a string or an MCP result
//     {"content":[{"type":"text","text":T}]}); a Shell or Read output can
//     only be followed by additional_context, which adds to what the model
//     reads, so omni leaves those alone and records nothing of them;
//   - preCompact only observes: the session's shown-set empties;
//   - preToolUse is a permission hook (invalid JSON blocks the tool, a
//     "permission" field approves or denies it in the user's place): omni
//     registers no preToolUse and answers none (it arrives as
//     "cursor:preToolUse" and, like every event omni does not act on, gets
//     nothing). A command rewrite, when it comes, answers there with
//     {"updated_input":{"command":C}} only, C the user's command text
//     intact piped into an omni filter, never a permission field.
//
// Cursor also runs the hooks of ~/.claude/settings.json with these same
// payloads; the hook clients drop them there (wire.CursorDuplicate) so
// only the registration of omni init --cursor does the work.

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Cursor is Cursor, its payload rewritten on arrival into the shared
// shape with "host":"cursor" (CursorPayload).
const Cursor = "cursor"

func init() {
	register(Protocol{Name: Cursor,
		Rules:     []Rule{{RankHostKey, func(s Signature) bool { return s.Host == Cursor }}},
		Normalize: CursorPayload,
		Deliver:   cursorDelivery,
	})
}

// cursorIn is the part of a Cursor hook payload omni reads.
type cursorIn struct {
	CursorVersion  *string         `json:"cursor_version"`
	Event          string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	ConversationID string          `json:"conversation_id"`
	Cwd            string          `json:"cwd"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolOutput     json.RawMessage `json:"tool_output"`
	ToolUseID      string          `json:"tool_use_id"`
	Trigger        string          `json:"trigger"`
}

// cursorEvents maps the Cursor events omni acts on to the names it
// dispatches on; any other Cursor event is answered with nothing.
var cursorEvents = map[string]string{"postToolUse": "PostToolUse", "preCompact": "PreCompact"}

// CursorPayload rewrites a Cursor hook payload (one with a
// "cursor_version" string) into the shared shape:
// {"host":"cursor","hook_event_name":E,"session_id","cwd","tool_name",
// "tool_input","tool_response","tool_use_id","trigger"}, E the Claude Code
// name of postToolUse (PostToolUse) and preCompact (PreCompact), or
// "cursor:" and Cursor's own name for the events omni leaves alone. The
// session is session_id, else conversation_id; cwd is cwd, else the first
// workspace root; tool_response is tool_output decoded when it is a JSON
// string holding a JSON document, else tool_output as sent. Any other
// stdin is returned as is.
func CursorPayload(stdin []byte) []byte {
	if !containsQuoted(stdin, "cursor_version") {
		return stdin
	}
	var c cursorIn
	if json.Unmarshal(stdin, &c) != nil || c.CursorVersion == nil || c.Event == "" {
		return stdin
	}
	ev, ok := cursorEvents[c.Event]
	if !ok {
		ev = "cursor:" + c.Event
	}
	session := c.SessionID
	if session == "" {
		session = c.ConversationID
	}
	cwd := c.Cwd
	if cwd == "" && len(c.WorkspaceRoots) > 0 {
		cwd = c.WorkspaceRoots[0]
	}
	out, err := marshal(struct {
		Host         string          `json:"host"`
		Event        string          `json:"hook_event_name"`
		SessionID    string          `json:"session_id"`
		Cwd          string          `json:"cwd,omitempty"`
		ToolName     string          `json:"tool_name,omitempty"`
		ToolInput    json.RawMessage `json:"tool_input,omitempty"`
		ToolResponse json.RawMessage `json:"tool_response,omitempty"`
		ToolUseID    string          `json:"tool_use_id,omitempty"`
		Trigger      string          `json:"trigger,omitempty"`
	}{Cursor, ev, session, cwd, c.ToolName, unquoteJSON(c.ToolInput), unquoteJSON(c.ToolOutput), c.ToolUseID, c.Trigger})
	if err != nil {
		return stdin
	}
	return out
}

// unquoteJSON returns the JSON document a JSON string holds (Cursor sends
// tool_input and tool_output as strings of JSON), else raw as it is.
func unquoteJSON(raw json.RawMessage) json.RawMessage {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return raw
	}
	t := strings.TrimSpace(s)
	if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return raw
}

// cursorMCPPrefix starts the tool_name Cursor gives an MCP tool.
const cursorMCPPrefix = "MCP:"

// cursorDelivery: only an MCP tool's result is shortened, and only one
// whose text the model reads whole: an MCP result {"content":[one
// {"type":"text","text":T}]} without isError or structuredContent, or a
// bare string. omni's own tools (omni_retrieve, omni_run, …) are left
// alone: their text was decided already or must come back whole. The
// reply is {"updated_mcp_tool_output": V}, V in the shape that arrived.
func cursorDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	if !strings.HasPrefix(p.ToolName, cursorMCPPrefix) || strings.Contains(p.ToolName, "omni_") {
		return d, false
	}
	text, wrap, ok := mcpText(p.ToolResponse)
	if !ok {
		return d, false
	}
	src := p.ToolName
	if len(p.ToolInput) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, p.ToolInput) == nil {
			src += " " + b.String()
		}
	}
	d.Source = src
	d.Req.Text, d.Req.Source = text, src
	d.Req.NoFold = NoFoldReason("", passthrough, text, p.ToolResponse)
	d.Render = func(t string) ([]byte, error) {
		b, err := marshal(map[string]any{"updated_mcp_tool_output": wrap(t)})
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	return d, true
}

// mcpText reads the text of an MCP tool result the model reads as is:
// a bare string, or {"content":[{"type":"text","text":T}]} (other keys but
// isError false and structuredContent absent are kept by wrap). ok is
// false for any other shape.
func mcpText(raw json.RawMessage) (text string, wrap func(string) any, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, func(t string) any { return t }, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", nil, false
	}
	if e, has := m["isError"]; has && string(e) != "false" {
		return "", nil, false
	}
	if _, has := m["structuredContent"]; has {
		return "", nil, false
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(m["content"], &parts) != nil || len(parts) != 1 {
		return "", nil, false
	}
	var typ string
	if json.Unmarshal(parts[0]["type"], &typ) != nil || typ != "text" || json.Unmarshal(parts[0]["text"], &text) != nil {
		return "", nil, false
	}
	part := parts[0]
	return text, func(t string) any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		np := map[string]any{}
		for k, v := range part {
			np[k] = v
		}
		np["text"] = t
		out["content"] = []any{np}
		return out
	}, true
}
