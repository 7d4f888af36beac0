package hosts

// Cline CLI (measured on 3.0.65, docs/HOSTS.md "Cline CLI 3.0.65"): file
// hooks cannot replace a tool result, a plugin's afterTool can. omni's
// plugin (written by omni init --cline) sends one payload per command of a
// run_commands call:
//
//	{"host":"cline","hook_event_name":"PostToolUse","session_id":CONV,
//	 "tool_use_id":ID,"cwd":DIR,"tool_name":"run_commands",
//	 "tool_input":{"command":CMD},"tool_response":{"output":TEXT,"success":B}}
//
// and puts the reply's "output" in place of that command's result string;
// the model reads the array of entries as JSON, each entry keeping its own
// query, error and success fields.

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/omnictx/omni/events"
)

// Cline is Cline CLI through omni's plugin ("host":"cline").
const Cline = "cline"

func init() {
	register(Protocol{Name: Cline,
		Rules:   []Rule{{RankHostKey, func(s Signature) bool { return s.Host == Cline }}},
		Deliver: clineDelivery,
	})
}

// ClineOutputCap is the longest result string, in UTF-16 code units (a
// JavaScript string's length), Cline CLI 3.0.65 hands the model whole: when
// it builds a request it cuts a longer one to its head and tail around
// "...[truncated N chars]..." (measured: an 11,784-character cat reached
// the model cut by 3,816; docs/HOSTS.md). The hook sees the whole text
// before that cut, so a longer output is left alone and nothing of it is
// recorded as shown.
const ClineOutputCap = 8000

// clineExitPrefix starts the result of a command that exited non-zero.
const clineExitPrefix = "[Command exited with code "

// clineDelivery: only run_commands is shortened. A result marked
// success:false, or one that starts with Cline's "[Command exited with code
// N]" line, is the failure path and passes whole; so does a result without
// a success field (an unknown shape), and one over ClineOutputCap.
// read_files results are left alone: Cline replaces older reads of a file
// read again with "[outdated - see the latest file content]" once that
// frees 64 KiB, so a fold of a re-read could point at text the model no
// longer holds.
func clineDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	if p.ToolName != "run_commands" {
		return d, false
	}
	var resp struct {
		Output  *string `json:"output"`
		Success *bool   `json:"success"`
	}
	if json.Unmarshal(p.ToolResponse, &resp) != nil || resp.Output == nil || resp.Success == nil {
		return d, false
	}
	text := *resp.Output
	cmd := sourceOf(p.ToolName, p.ToolInput)
	d.Source = cmd
	d.Req.Text, d.Req.Source = text, cmd
	if !*resp.Success || strings.HasPrefix(text, clineExitPrefix) {
		if fr, ok := clineFrame(text); ok {
			// Cline's exit line is its frame, not the command's output.
			d.Req.Text = fr.body
		}
		d.Req.Failed = true
		return d, true
	}
	if isOmniExec(cmd) {
		return d, false
	}
	if utf16Len(text) > ClineOutputCap {
		d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
		return d, true
	}
	d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
	d.Render = openCodeReply
	return d, true
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// clineExitLine matches the line Cline CLI 3.0.65 starts a failing
// command's result with ("[Command exited with code N]").
var clineExitLine = regexp.MustCompile(`\A\[Command exited with code -?\d+\]\n?`)

// clineFrame splits Cline's exit line from a failing command's result; ok
// is false when there is none.
func clineFrame(text string) (hostFrame, bool) {
	loc := clineExitLine.FindStringIndex(text)
	if loc == nil {
		return hostFrame{}, false
	}
	return hostFrame{head: text[:loc[1]], body: text[loc[1]:]}, true
}
