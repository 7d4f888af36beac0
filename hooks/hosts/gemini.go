package hosts

// Gemini CLI (measured on 0.61.0, docs/HOSTS.md): its own event names
// (AfterTool, BeforeTool, PreCompress, ...), a timestamp in every payload,
// the model's text in tool_response.llmContent, and a deny as the one reply
// that replaces it.

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
)

// Gemini is the Google Gemini CLI (AfterTool, BeforeTool, PreCompress).
const Gemini = "gemini-cli"

func init() {
	register(Protocol{Name: Gemini,
		Rules: []Rule{
			{RankEventName, func(s Signature) bool { return geminiEvents[s.HookEventName] }},
			// Gemini's tool events have names of their own; a timestamp on a
			// Claude-named tool event never switches the reply shape.
			{RankSharedKey, func(s Signature) bool { return len(s.Timestamp) > 0 && !claudeToolEvents[s.HookEventName] }},
		},
		Event:   geminiEvent,
		Deliver: geminiDelivery,
	})
}

// geminiEvents are hook event names only Gemini CLI sends.
var geminiEvents = map[string]bool{
	"BeforeTool": true, "AfterTool": true, "PreCompress": true, "BeforeAgent": true, "AfterAgent": true,
	"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true,
}

// claudeToolEvents are the events whose reply shape depends on the host.
var claudeToolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true}

// geminiEvent maps Gemini's tool events onto the Claude Code names.
// PreCompress is not mapped: Gemini CLI 0.61.0 fires it before every model
// request, compression or not, so it says nothing about what the model
// still holds (measured, docs/HOSTS.md).
func geminiEvent(ev string) string {
	switch ev {
	case "AfterTool":
		return "PostToolUse"
	case "BeforeTool":
		return "PreToolUse"
	}
	return ev
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
// replacement is a deny with the text as reason (geminiReply). A result
// over GeminiOutputCap characters is recorded as not shown: Gemini keeps
// only its head and tail after the hook ran. A tail call a hook asked for
// (original_request_name set) is left alone.
func geminiDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	kind, known := geminiTools[p.ToolName]
	if !known {
		return d, false
	}
	var resp struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	}
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, false
	}
	var text string
	if json.Unmarshal(resp.LLMContent, &text) != nil {
		return d, false // parts arrays and other shapes are left alone
	}
	if len(p.OriginalRequestName) > 0 {
		return d, false
	}
	src := sourceOf(p.ToolName, p.ToolInput)
	d.Source = src
	d.Req.Text, d.Req.Source = text, src
	pre, inner, post, enveloped := untrustedEnvelope(text)
	if !enveloped {
		pre, inner, post = "", text, ""
	}
	fr, framed := hostFrame{}, false
	if kind == "shell" && !p.FrameLegacy {
		// The ledger, the failure path included, sees the command's output
		// alone: Gemini's "Output: " prefix and status lines are its frame.
		if fr, framed = geminiShellFrame(inner); framed {
			d.Framed = true
			d.Req.Text = fr.body
		}
	}
	if e := strings.TrimSpace(string(resp.Error)); e != "" && e != "null" && e != `""` {
		d.Req.Failed = true
		return d, true
	}
	cmd := ""
	if kind == "shell" {
		cmd = src
		if m := geminiExit.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n != 0 {
				d.Req.Failed = true
				return d, true
			}
		}
		if isOmniExec(cmd) {
			return d, false
		}
	}
	d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
	if utf8.RuneCountInString(text) > GeminiOutputCap {
		d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
	}
	if framed {
		fr.head, fr.tail = pre+fr.head, fr.tail+post
		d.Render = fr.wrap(geminiReply)
		return d, true
	}
	if enveloped {
		// The tags frame the tool's text as untrusted for the model: they
		// stay around whatever the ledger folds inside, so a fold never
		// leaves new lines outside the frame.
		d.Req.Text = inner
		d.Render = func(t string) ([]byte, error) { return geminiReply(pre + t + post) }
		return d, true
	}
	d.Render = geminiReply
	return d, true
}

// Gemini CLI 0.61.0 frames a shell result for the model as
// "<untrusted_context>\nOutput: …\n</untrusted_context>" (measured,
// docs/HOSTS.md).
const (
	untrustedOpen  = "<untrusted_context>\n"
	untrustedClose = "</untrusted_context>"
)

// untrustedEnvelope splits a text framed by Gemini's untrusted-context
// tags into the opening tag line, the text inside, and the closing tag
// with what follows it (whitespace only; ok is false otherwise).
func untrustedEnvelope(text string) (pre, inner, post string, ok bool) {
	if !strings.HasPrefix(text, untrustedOpen) {
		return "", "", "", false
	}
	rest := text[len(untrustedOpen):]
	k := strings.LastIndex(rest, untrustedClose)
	if k < 0 || strings.TrimSpace(rest[k+len(untrustedClose):]) != "" {
		return "", "", "", false
	}
	return untrustedOpen, rest[:k], rest[k:], true
}

// GeminiOutputCap is the longest tool result, in characters, Gemini CLI
// hands the model whole: above it, 0.61.0 keeps the first 8,000 and the
// last 32,000 characters and saves the rest to a file, after the AfterTool
// hook has seen the whole text (measured, docs/HOSTS.md).
const GeminiOutputCap = 40000

// geminiReply renders {"decision":"deny","reason":t}: Gemini CLI 0.61.0
// hands the model {"error": t} in place of the tool's output. Its AfterTool
// reads no tool_output key (measured: the reply was ignored); a deny is the
// one reply that replaces the text without a second tool call, at the cost
// of framing it as a failed call.
func geminiReply(t string) ([]byte, error) {
	b, err := marshal(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"deny", t})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// geminiStatus matches a status line Gemini CLI 0.61.0 appends after a
// shell command's output, each on a line of its own: "Exit Code: N" (only
// when not 0), "Signal: S", "Background PIDs: P, Q" and "Process Group
// PGID: N" (its run_shell_command llmContent, read in the bundled
// packages/core shell tool; "Error: M" is not matched: its message may span
// lines, so it stays in the body and counts as content).
var geminiStatus = regexp.MustCompile(`^(?:Exit Code: -?\d+|Signal: \S+|Background PIDs: [\d, ]+|Process Group PGID: \d+)$`)

// geminiShellFrame splits a run_shell_command llmContent (the text inside
// the untrusted-context tags, when there are tags): "Output: " before the
// output, and the status lines after it. ok is false when the text does not
// start with "Output: " or has no status line: then nothing is split.
func geminiShellFrame(text string) (hostFrame, bool) {
	const prefix = "Output: "
	if !strings.HasPrefix(text, prefix) {
		return hostFrame{}, false
	}
	rest := text[len(prefix):]
	// Walk the lines from the end while they are status lines.
	cut := len(rest)
	end := len(rest)
	if strings.HasSuffix(rest[:end], "\n") {
		end--
	}
	for end > 0 {
		start := strings.LastIndexByte(rest[:end], '\n') + 1
		if start == 0 || !geminiStatus.MatchString(rest[start:end]) {
			break
		}
		cut = start
		end = start - 1
	}
	if cut == len(rest) {
		return hostFrame{}, false
	}
	return hostFrame{head: prefix, body: rest[:cut], tail: rest[cut:]}, true
}
