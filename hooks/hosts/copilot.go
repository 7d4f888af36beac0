package hosts

// GitHub Copilot CLI (measured on 1.0.102, docs/HOSTS.md "GitHub Copilot
// CLI"): a command hook registered for postToolUse gets
// {"sessionId","timestamp","cwd","toolName","toolArgs","toolResult":
// {"resultType","textResultForLlm"}} on stdin (a subagent's calls carry
// its own sessionId plus agentId, agentType and parentAgentId), and a
// reply {"modifiedResult":{"textResultForLlm":T,"resultType":"success"}}
// replaces the text the model reads.

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// Copilot is GitHub Copilot CLI: its camelCase postToolUse payload
// (sessionId, toolName, toolArgs, toolResult) is rewritten on arrival into
// the shared shape with "host":"copilot-cli" (CopilotPayload).
const Copilot = "copilot-cli"

func init() {
	register(Protocol{Name: Copilot,
		Rules:     []Rule{{RankHostKey, func(s Signature) bool { return s.Host == Copilot }}},
		Normalize: CopilotPayload,
		Deliver:   copilotDelivery,
	})
}

// copilotIn is Copilot CLI's postToolUse payload.
type copilotIn struct {
	SessionID  *string         `json:"sessionId"`
	AgentID    string          `json:"agentId"`
	Cwd        string          `json:"cwd"`
	Timestamp  json.RawMessage `json:"timestamp"`
	ToolName   *string         `json:"toolName"`
	ToolArgs   json.RawMessage `json:"toolArgs"`
	ToolResult json.RawMessage `json:"toolResult"`
	Event      string          `json:"hook_event_name"`
	// Trigger and TranscriptPath mark a preCompact payload.
	Trigger        *string `json:"trigger"`
	TranscriptPath *string `json:"transcriptPath"`
}

// CopilotPayload rewrites a Copilot CLI hook payload into the shape every
// host's payload is decided in. Copilot names no event in its payloads;
// omni registers two and tells them by their keys:
//   - postToolUse (a sessionId, a toolName and a toolResult) becomes
//     {"host":"copilot-cli","hook_event_name":"PostToolUse","session_id",
//     "agent_id","cwd","tool_name","tool_input","tool_response"}
//     (tool_input is toolArgs, tool_response is toolResult, as sent);
//   - preCompact (a sessionId, a trigger and a transcriptPath; 1.0.102
//     sends {"sessionId","timestamp","cwd","transcriptPath","trigger":
//     "auto","customInstructions"}) becomes {"host":"copilot-cli",
//     "hook_event_name":"PreCompact","session_id","cwd","trigger"}.
//
// A payload with a hook_event_name, or any other stdin, is returned as is.
func CopilotPayload(stdin []byte) []byte {
	// Without a key that may be sessionId no payload is Copilot's: one
	// pass over the keys instead of decoding the whole payload.
	if !mayHaveKey(stdin, "sessionid") {
		return stdin
	}
	var c copilotIn
	if json.Unmarshal(stdin, &c) != nil || c.Event != "" || c.SessionID == nil {
		return stdin
	}
	type common struct {
		Host      string `json:"host"`
		Event     string `json:"hook_event_name"`
		SessionID string `json:"session_id"`
		AgentID   string `json:"agent_id,omitempty"`
		Cwd       string `json:"cwd,omitempty"`
	}
	var v any
	switch {
	case c.ToolName != nil && len(c.ToolResult) > 0:
		v = struct {
			common
			ToolName     string          `json:"tool_name"`
			ToolInput    json.RawMessage `json:"tool_input,omitempty"`
			ToolResponse json.RawMessage `json:"tool_response"`
		}{common{Copilot, "PostToolUse", *c.SessionID, c.AgentID, c.Cwd}, *c.ToolName, c.ToolArgs, c.ToolResult}
	case c.ToolName == nil && c.Trigger != nil && c.TranscriptPath != nil:
		v = struct {
			common
			Trigger string `json:"trigger"`
		}{common{Copilot, "PreCompact", *c.SessionID, c.AgentID, c.Cwd}, *c.Trigger}
	default:
		return stdin
	}
	out, err := marshal(v)
	if err != nil {
		return stdin
	}
	return out
}

// copilotTools maps the Copilot CLI tools omni shortens to their kind.
var copilotTools = map[string]string{"bash": "shell", "view": "file", "grep": "search", "glob": "search"}

// copilotExit is the line Copilot CLI 1.0.102 ends a finished bash result
// with; it is the only place the exit code appears (resultType stays
// "success" for a failing command).
var copilotExit = regexp.MustCompile(`\n?<shellId: [^>\n]+ completed with exit code (-?\d+)>\n?$`)

// copilotDelivery: the text is toolResult.textResultForLlm. A resultType
// other than "success" is the failure path, and so is a bash result whose
// closing "<shellId: N completed with exit code K>" line says K is not 0;
// a bash result without that line (still running, detached) is left
// whole. The closing line is kept out of the ledger and put back after
// the decided text, so the model still reads the exit status.
func copilotDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	kind, known := copilotTools[p.ToolName]
	if !known {
		return d, false
	}
	var r struct {
		ResultType string  `json:"resultType"`
		Text       *string `json:"textResultForLlm"`
	}
	if json.Unmarshal(p.ToolResponse, &r) != nil || r.Text == nil {
		return d, false
	}
	text, trailer := *r.Text, ""
	src := sourceOf(p.ToolName, p.ToolInput)
	d.Source = src
	d.Req.Text, d.Req.Source = text, src
	if r.ResultType != "success" {
		d.Req.Failed = true
		return d, true
	}
	cmd := ""
	if kind == "shell" {
		cmd = src
		loc := copilotExit.FindStringSubmatchIndex(text)
		if loc == nil {
			return d, false
		}
		text, trailer = text[:loc[0]], text[loc[0]:]
		if text != "" && text[len(text)-1] != '\n' {
			// The ledger reads whole lines; the trailer's own newline
			// closes the last one.
			text += "\n"
			trailer = trailer[1:]
		}
		// The closing line is Copilot's frame: never content, on the
		// failure path too.
		d.Req.Text = text
		code, err := strconv.Atoi((*r.Text)[loc[2]:loc[3]])
		if err != nil || code != 0 {
			d.Req.Failed = true
			return d, true
		}
		if isOmniExec(cmd) {
			return d, false
		}
	}
	d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
	d.Render = func(t string) ([]byte, error) {
		if trailer != "" && len(t) > 0 && t[len(t)-1] != '\n' && trailer[0] != '\n' {
			t += "\n"
		}
		b, err := marshal(map[string]any{"modifiedResult": map[string]string{
			"textResultForLlm": t + trailer, "resultType": "success"}})
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	return d, true
}
