package hooks

// Hosts other than Claude Code: Codex CLI, Gemini CLI and OpenCode, as
// measured on their pinned releases (docs/HOSTS.md). One binary answers
// every host: the payload says which host sent it, the host's own failure
// signal sends the text down the failure path, and each host gets its reply
// in the one shape it applies. Everything else (ledger, pipeline, events) is
// shared with Claude Code.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
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
	// HostCopilot is GitHub Copilot CLI: its camelCase postToolUse payload
	// (sessionId, toolName, toolArgs, toolResult) is rewritten on arrival
	// into the shared shape with "host":"copilot-cli" (CopilotPayload).
	HostCopilot = "copilot-cli"
)

// hostPayload holds the keys that tell the hosts apart.
type hostPayload struct {
	HookEventName  string          `json:"hook_event_name"`
	TurnID         json.RawMessage `json:"turn_id"`
	Host           string          `json:"host"`
	Timestamp      json.RawMessage `json:"timestamp"`
	TranscriptPath string          `json:"transcript_path"`
}

// geminiEvents are hook event names only Gemini CLI sends.
var geminiEvents = map[string]bool{
	"BeforeTool": true, "AfterTool": true, "PreCompress": true, "BeforeAgent": true, "AfterAgent": true,
	"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true,
}

// DetectHost returns the host protocol of a hook payload (HostClaudeCode,
// HostCodex, HostGemini, HostOpenCode, HostCopilot, HostCline or HostCursor), by key
// signature, first match wins: Copilot CLI's camelCase tool payload
// (CopilotPayload); a "cursor_version" (CursorPayload); a transcript under
// ~/.factory/sessions (HostDroid);
// "host":"opencode" or "host":"cline" (omni's plugins); a Gemini-only event name; turn_id
// (Codex); a timestamp key (Gemini's base input) on an event that is not a
// Claude tool event; else Claude Code. A payload that is not a JSON object
// is reported as Claude Code.
func DetectHost(stdin []byte) string {
	var p hostPayload
	_ = json.Unmarshal(CursorPayload(CopilotPayload(stdin)), &p)
	return detectHost(p)
}

func detectHost(p hostPayload) string {
	switch {
	case p.Host == HostOpenCode:
		return HostOpenCode
	case p.Host == HostCopilot:
		return HostCopilot
	case p.Host == HostCline:
		return HostCline
	case p.Host == HostCursor:
		return HostCursor
	case isDroidTranscript(p.TranscriptPath):
		return HostDroid
	case geminiEvents[p.HookEventName]:
		return HostGemini
	case len(p.TurnID) > 0 && string(p.TurnID) != "null":
		return HostCodex
	case strings.HasPrefix(filepath.Base(p.TranscriptPath), "rollout-") && strings.HasSuffix(p.TranscriptPath, ".jsonl"):
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
		}
		// PreCompress is not mapped: Gemini CLI 0.61.0 fires it before every
		// model request, compression or not, so it says nothing about what
		// the model still holds (measured, docs/HOSTS.md).
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
	case HostCopilot:
		return copilotDelivery(d, p, in)
	case HostCline:
		return clineDelivery(d, p, in)
	case HostCursor:
		return cursorDelivery(d, p, in)
	case HostDroid:
		return d, nil, false // Droid applies no replacement of a tool's output
	}
	return d, nil, false
}

// codexDelivery: Codex reports every shell tool as tool_name "Bash" with
// tool_input {"command": …}; tool_response is untyped (a bare string of
// stdout and stderr merged, with no exit code, on 0.169.0; an object with
// stdout/stderr/output and exit_code is accepted too). A failing command
// fires the same PostToolUse, so a string result is shortened only when
// the exit code was found where Codex keeps it (p.hostExit, from its
// session file) and is 0; unknown means the output may be failing and it
// passes whole. The only replacement Codex applies is
// {"decision":"block","reason":TEXT}: TEXT becomes the whole tool result
// the model reads, replacing Codex's own "Process exited with code N"
// header, so the reply writes that header itself (measured, docs/HOSTS.md).
// Caveats (reported by Codex users, not measured here): the TUI marks the hook "Blocked" and still shows the raw output; nested
// code-mode calls ignore it.
func codexDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	if p.ToolName != "Bash" {
		return d, nil, false
	}
	text, failed, ok := shellText(p.ToolResponse)
	if !ok {
		return d, nil, false
	}
	code, known := 0, false
	if p.hostExit != nil {
		code, known = *p.hostExit, true
		failed = failed || code != 0
	}
	cmd := sourceOf("Bash", p.ToolInput)
	d.source = cmd
	d.req.Text, d.req.Source, d.req.Failed = text, cmd, failed
	fr, framed := hostFrame{}, false
	if !p.frameLegacy && !p.codexLegacy {
		// Codex's truncation header is its frame, not the command's output.
		if fr, framed = codexFrame(text); framed {
			d.framed = true
			d.req.Text = fr.body
		}
	}
	if failed {
		return d, nil, true
	}
	if isOmniExec(cmd) {
		return d, nil, false
	}
	d.req.NoFold = noFoldReason(cmd, in.Passthrough, text, p.ToolResponse)
	if p.codexLegacy {
		return d, legacyCodexReply, true
	}
	var s string
	if d.req.NoFold == "" && json.Unmarshal(p.ToolResponse, &s) == nil && !known {
		d.req.NoFold = "exit-unknown"
	}
	if framed {
		return d, fr.wrap(codexReply(code)), true
	}
	return d, codexReply(code), true
}

// codexExitCode finds the exit code Codex recorded for the call callID in
// its session file (transcript_path, JSON lines): the "item_completed"
// event whose item has that id and an exit_code. Codex writes it before
// the PostToolUse hook runs (10 of 10 calls on 0.169.0, undocumented). Only
// the file's last 8 MiB are read; ok is false when nothing is found.
func codexExitCode(path, callID string) (code int, ok bool) {
	if path == "" || callID == "" {
		return 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	const window = 8 << 20
	if st, err := f.Stat(); err == nil && st.Size() > window {
		if _, err := f.Seek(st.Size()-window, io.SeekStart); err != nil {
			return 0, false
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, window))
	if err != nil {
		return 0, false
	}
	id, _ := json.Marshal(callID)
	lines := bytes.Split(b, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !bytes.Contains(l, id) || !bytes.Contains(l, []byte(`"exit_code"`)) {
			continue
		}
		var ev struct {
			Payload struct {
				Type string `json:"type"`
				Item struct {
					ID       string `json:"id"`
					ExitCode *int   `json:"exit_code"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(l, &ev) == nil && ev.Payload.Item.ID == callID && ev.Payload.Item.ExitCode != nil {
			return *ev.Payload.Item.ExitCode, true
		}
	}
	return 0, false
}

// exitUnknown is the value of events.ParamHostExitCode when the exit code
// could not be read outside the payload (codexExitCode).
const exitUnknown = "unknown"

// legacyCodexReply is the reply of omni before it read Codex's exit code
// (no header), for replays of calls recorded then.
func legacyCodexReply(t string) ([]byte, error) {
	b, err := marshal(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", t})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// codexReply renders Codex's replacement {"decision":"block","reason":R},
// R being Codex's own exit header for code then t.
func codexReply(code int) func(string) ([]byte, error) {
	return func(t string) ([]byte, error) {
		b, err := marshal(struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}{"block", "Process exited with code " + strconv.Itoa(code) + "\nOutput:\n" + t})
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
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
// replacement is a deny with the text as reason (geminiReply). A result
// over GeminiOutputCap characters is recorded as not shown: Gemini keeps
// only its head and tail after the hook ran. A tail call a hook asked for
// (original_request_name set) is left alone.
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
	if len(p.OriginalRequestName) > 0 {
		return d, nil, false
	}
	src := sourceOf(p.ToolName, p.ToolInput)
	d.source = src
	d.req.Text, d.req.Source = text, src
	pre, inner, post, enveloped := untrustedEnvelope(text)
	if !enveloped {
		pre, inner, post = "", text, ""
	}
	fr, framed := hostFrame{}, false
	if kind == "shell" && !p.frameLegacy {
		// The ledger, the failure path included, sees the command's output
		// alone: Gemini's "Output: " prefix and status lines are its frame.
		if fr, framed = geminiShellFrame(inner); framed {
			d.framed = true
			d.req.Text = fr.body
		}
	}
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
	if utf8.RuneCountInString(text) > GeminiOutputCap {
		d.unrecorded, d.reason = true, string(events.ReasonHostCap)
	}
	if framed {
		fr.head, fr.tail = pre+fr.head, fr.tail+post
		return d, fr.wrap(geminiReply), true
	}
	if enveloped {
		// The tags frame the tool's text as untrusted for the model: they
		// stay around whatever the ledger folds inside, so a fold never
		// leaves new lines outside the frame.
		d.req.Text = inner
		return d, func(t string) ([]byte, error) { return geminiReply(pre + t + post) }, true
	}
	return d, geminiReply, true
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
	if p.ToolName == "grep" && strings.HasPrefix(text, "Found ") {
		// OpenCode puts a blank line after every match; the ledger and its
		// markers count the matches only (a reply drops the blank lines).
		d.req.Text = dropBlankLines(text)
	}
	if p.ToolName == "read" {
		if r, ok := parseOpenCodeRead(text); ok {
			// The ledger sees the file's own lines: a re-read folds, and so
			// does a read of a file an earlier cat showed.
			d.req.Text = r.body()
			return d, func(t string) ([]byte, error) {
				out, err := r.render(t)
				if err != nil {
					return nil, err
				}
				return openCodeReply(out)
			}, true
		}
	}
	return d, openCodeReply, true
}

// openCodeRead is an OpenCode 1.18.33 read result taken apart:
// "<path>P</path>\n<type>file</type>\n<content>\n" (head), lines numbered
// "N: " (the numbers in num, the text in lines), then the rest (tail:
// "\n(End of file - total N lines)\n</content>" or a "use offset"
// note). Measured, docs/HOSTS.md.
type openCodeRead struct {
	head, tail string
	num        []int
	lines      []string
}

// parseOpenCodeRead takes a read result apart; ok is false for any other
// shape (left whole by the caller's plain reply).
func parseOpenCodeRead(text string) (openCodeRead, bool) {
	var r openCodeRead
	const open = "<content>\n"
	i := strings.Index(text, open)
	if !strings.HasPrefix(text, "<path>") || i < 0 {
		return r, false
	}
	r.head = text[:i+len(open)]
	rest := text[i+len(open):]
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		n, body, ok := numberedLine(line)
		if !ok || !found || (len(r.num) > 0 && n != r.num[len(r.num)-1]+1) {
			break
		}
		r.num = append(r.num, n)
		r.lines = append(r.lines, body)
		rest = after
	}
	r.tail = rest
	return r, len(r.lines) > 0
}

// numberedLine splits "N: text" (N decimal, at least 1).
func numberedLine(l string) (int, string, bool) {
	d := 0
	for d < len(l) && l[d] >= '0' && l[d] <= '9' {
		d++
	}
	if d == 0 || d > 9 || !strings.HasPrefix(l[d:], ":") {
		return 0, "", false
	}
	n, err := strconv.Atoi(l[:d])
	if err != nil || n < 1 {
		return 0, "", false
	}
	body := strings.TrimPrefix(l[d+1:], " ")
	return n, body, true
}

// body is the file's text as the ledger sees it: the lines, unnumbered.
func (r openCodeRead) body() string {
	return strings.Join(r.lines, "\n") + "\n"
}

// markerCount reads the line count a ledger marker states.
var markerCount = regexp.MustCompile(`^\[OMNI: (?:identical to (?:the )?|all )?(\d+) lines `)

// render puts a decision over body() back in OpenCode's frame: kept lines
// get their own numbers again, a marker stands unnumbered in place of the
// lines it counts, head and tail are kept. A decided text that does not
// line up with the original is an error (the caller fails open).
func (r openCodeRead) render(t string) (string, error) {
	var b strings.Builder
	b.WriteString(r.head)
	i := 0
	for _, l := range strings.Split(strings.TrimSuffix(t, "\n"), "\n") {
		if i < len(r.lines) && l == r.lines[i] {
			b.WriteString(strconv.Itoa(r.num[i]))
			b.WriteString(": ")
			b.WriteString(l)
			b.WriteByte('\n')
			i++
			continue
		}
		m := markerCount.FindStringSubmatch(l)
		if m == nil {
			return "", fmt.Errorf("opencode read: line %q is neither the file's line %d nor a marker", l, i+1)
		}
		n, _ := strconv.Atoi(m[1])
		b.WriteString(l)
		b.WriteByte('\n')
		i += n
	}
	if i != len(r.lines) {
		return "", fmt.Errorf("opencode read: the decision accounts for %d of %d lines", i, len(r.lines))
	}
	b.WriteString(r.tail)
	return b.String(), nil
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

// dropBlankLines removes the lines that hold only whitespace.
func dropBlankLines(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(l)
		}
	}
	return b.String()
}
