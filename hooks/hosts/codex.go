package hosts

// Codex CLI (measured on 0.169.0, docs/HOSTS.md): PostToolUse payloads
// carry turn_id, and its session files are named rollout-*.jsonl. Every
// shell tool arrives as tool_name "Bash"; the exit code is not in the
// payload but in the session file, read before the Engine's lock
// (codexOutside). The one replacement Codex applies is a block decision.

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Codex is the OpenAI Codex CLI (PostToolUse payloads carry turn_id).
const Codex = "codex"

func init() {
	register(Protocol{Name: Codex,
		Rules: []Rule{
			{RankOwnKey, func(s Signature) bool { return len(s.TurnID) > 0 && string(s.TurnID) != "null" }},
			// SessionStart and SessionEnd carry no turn_id (0.169.0); the
			// session file's name tells Codex from Claude Code.
			{RankOwnFile, func(s Signature) bool {
				return strings.HasPrefix(filepath.Base(s.TranscriptPath), "rollout-") && strings.HasSuffix(s.TranscriptPath, ".jsonl")
			}},
		},
		ReadOutside: codexOutside,
		Deliver:     codexDelivery,
	})
}

// codexOutside reads, for a Codex PostToolUse of its shell tool, the exit
// code Codex keeps in its session file (codexExitCode) into
// o.HostExitCode: the decimal code, or ExitUnknown. Any other payload is
// left alone; the payload itself is returned unchanged.
func codexOutside(stdin []byte, o *Outside) []byte {
	// Byte searches first: a payload with neither Codex's key nor its
	// session file's name is not Codex's. One that spells them otherwise
	// (JSON escapes, a key in other case) is read as Codex's later with
	// its exit code unknown, so its output passes whole.
	if !containsQuoted(stdin, "PostToolUse") ||
		!bytes.Contains(stdin, []byte("turn_id")) && !bytes.Contains(stdin, []byte("rollout-")) {
		return stdin
	}
	// Those bytes are often in the tool's output (a grep of this very
	// code): one pass over the top-level keys tells most such payloads
	// from Codex's before the whole payload is decoded.
	if !mayBeCodex(stdin) {
		return stdin
	}
	var p Payload
	if DecodePayload(stdin, &p) != nil || Detect(p.Signature()) != Codex || p.HookEventName != "PostToolUse" || p.ToolName != "Bash" {
		return stdin
	}
	o.HostExitCode = ExitUnknown
	if code, ok := codexExitCode(p.TranscriptPath, p.ToolUseID); ok {
		o.HostExitCode = strconv.Itoa(code)
	}
	return stdin
}

// mayBeCodex reports whether Detect may name the JSON object b Codex's:
// false only when b scans as an object (jsonMembers) whose keys are plain
// ASCII with no escape, none of which encoding/json would read into
// Payload.TurnID with a value other than null, and none of which it would
// read into Payload.TranscriptPath with a value that holds "rollout-" or an
// escape. Codex's rules (a turn_id that is not null; a transcript path
// whose file name starts "rollout-") cannot claim such a payload. On
// anything else it is true, and the caller decodes.
func mayBeCodex(b []byte) bool {
	may := false
	ok := jsonMembers(b, func(key, val []byte) bool {
		switch {
		case bytes.IndexByte(key, '\\') >= 0 || !isASCII(key):
			may = true
		case bytes.EqualFold(key, []byte("turn_id")):
			may = string(val) != "null"
		case bytes.EqualFold(key, []byte("transcript_path")):
			may = bytes.Contains(val, []byte("rollout-")) || bytes.IndexByte(val, '\\') >= 0
		}
		return !may
	})
	return may || !ok
}

// codexDelivery: Codex reports every shell tool as tool_name "Bash" with
// tool_input {"command": …}; tool_response is untyped (a bare string of
// stdout and stderr merged, with no exit code, on 0.169.0; an object with
// stdout/stderr/output and exit_code is accepted too). A failing command
// fires the same PostToolUse, so a string result is shortened only when
// the exit code was found where Codex keeps it (p.HostExit, from its
// session file) and is 0; unknown means the output may be failing and it
// passes whole. The only replacement Codex applies is
// {"decision":"block","reason":TEXT}: TEXT becomes the whole tool result
// the model reads, replacing Codex's own "Process exited with code N"
// header, so the reply writes that header itself (measured, docs/HOSTS.md).
// Caveats (reported by Codex users, not measured here): the TUI marks the hook "Blocked" and still shows the raw output; nested
// code-mode calls ignore it.
func codexDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	if p.ToolName != "Bash" {
		return d, false
	}
	text, failed, ok := shellText(p.ToolResponse)
	if !ok {
		return d, false
	}
	code, known := 0, false
	if p.HostExit != nil {
		code, known = *p.HostExit, true
		failed = failed || code != 0
	}
	cmd := sourceOf("Bash", p.ToolInput)
	d.Source = cmd
	d.Req.Text, d.Req.Source, d.Req.Failed = text, cmd, failed
	fr, framed := hostFrame{}, false
	if !p.FrameLegacy && !p.CodexLegacy {
		// Codex's truncation header is its frame, not the command's output.
		if fr, framed = codexFrame(text); framed {
			d.Framed = true
			d.Req.Text = fr.body
		}
	}
	if failed {
		return d, true
	}
	if isOmniExec(cmd) {
		return d, false
	}
	d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
	if p.CodexLegacy {
		d.Render = legacyCodexReply
		return d, true
	}
	var s string
	if d.Req.NoFold == "" && json.Unmarshal(p.ToolResponse, &s) == nil && !known {
		d.Req.NoFold = "exit-unknown"
	}
	if framed {
		d.Render = fr.wrap(codexReply(code))
		return d, true
	}
	d.Render = codexReply(code)
	return d, true
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
	f, st, err := openRegular(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	const window = 8 << 20
	if st.Size() > window {
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

// codexTruncHead matches the header Codex CLI 0.169.0 puts before an output
// it cut (its PostToolUse tool_response is then its own truncated text:
// "Warning: truncated output (original token count: N)", "Total output
// lines: N", a blank line; measured, docs/HOSTS.md). The mark Codex puts
// where it cut ("…N tokens truncated…") joins the ends of two output lines
// on one line and stays in the body.
var codexTruncHead = regexp.MustCompile(`\AWarning: truncated output \(original token count: \d+\)\nTotal output lines: \d+\n\n?`)

// codexFrame splits Codex's truncation header from a shell output; ok is
// false when there is none.
func codexFrame(text string) (hostFrame, bool) {
	loc := codexTruncHead.FindStringIndex(text)
	if loc == nil {
		return hostFrame{}, false
	}
	return hostFrame{head: text[:loc[1]], body: text[loc[1]:]}, true
}
