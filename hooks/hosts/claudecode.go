package hosts

// Claude Code, the main host (measured on 2.1.328, docs/HOSTS.md): the
// shared payload shape is its own. PostToolUse for Bash, Read, Grep, Glob
// and WebFetch is rewritten by echoing tool_response with only the text
// changed; PostToolUseFailure carries the failure's text in "error" and is
// never answered; a Bash output over ClaudeCodeOutputCap is persisted by
// the host to a file, read back before the Engine's lock
// (inlinePersisted); SessionStart takes additionalContext.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/rewrite"
	"github.com/omnictx/omni/internal/shellcmd"
	"github.com/omnictx/omni/pipeline"
)

// ClaudeCode names the Claude Code hook protocol in Invoked events; a
// payload no other host's rule claims is Claude Code's.
const ClaudeCode = "claude-code"

func init() {
	register(Protocol{Name: ClaudeCode,
		ReadOutside: func(stdin []byte, _ *Outside) []byte { return inlinePersisted(stdin) },
		Deliver:     toolDelivery,
		SessionContext: func(text string) ([]byte, error) {
			b, err := marshal(map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "SessionStart", "additionalContext": text}})
			if err != nil {
				return nil, err
			}
			return append(b, '\n'), nil
		},
	})
}

// FailureDelivery reads a PostToolUseFailure payload (Claude Code's
// shape, whichever host sent it): the failure's text is "error", decided on
// the failure path with no reply. ok is false when the PreToolUse rewrite's
// filter already shortened and recorded the output (it holds a marker);
// the error is for a payload without an error string.
func FailureDelivery(p *Payload) (d Delivery, ok bool, err error) {
	var msg string
	if err := json.Unmarshal(p.Error, &msg); err != nil {
		return d, false, fmt.Errorf("PostToolUseFailure without an error string")
	}
	d.Req = pipeline.Request{Text: msg, Failed: true}
	d.Source = sourceOf(p.ToolName, p.ToolInput)
	if p.ToolName == "Bash" {
		if line, _, ok := rewrite.Unwrap(d.Source); ok {
			if pipeline.HasMarker(msg) {
				// The rewrite's filter shortened and recorded this
				// output for the same reader (hooks.Deferred).
				return d, false, nil
			}
			d.Source = line // read as the call the agent made
		}
	}
	if p.ToolName == "Bash" {
		d.LineSource = shellcmd.FileRead(d.Source)
	}
	d.Req.Source = lineSourceOr(d.LineSource, d.Source)
	return d, true, nil
}

// The tool outputs omni rewrites in a Claude Code PostToolUse payload:
// where each tool's text sits in its tool_response, and the reply that
// echoes that response with only the text changed.

// toolDelivery extracts the text of a Claude Code PostToolUse payload for
// the tools omni rewrites (Bash, Read, Grep, Glob, WebFetch) and returns the
// reply renderer. Each renderer echoes the tool's own tool_response with
// only its text values changed: Claude Code drops a reply that is not in
// the tool's own output shape (measured, docs/HOSTS.md). ok is false for tools and
// shapes left alone (the subagent tool Agent, formerly Task, among them).
func toolDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	switch p.ToolName {
	case "Agent", "Task":
		// A subagent's final message: new text, and its shape (a content
		// array) is not one omni rewrites.
		return d, false
	case "Grep":
		return grepDelivery(p, passthrough)
	case "Glob":
		return globDelivery(p, passthrough)
	case "WebFetch":
		return webFetchDelivery(p, passthrough)
	case "Bash":
		resp, err := decodeObject(p.ToolResponse)
		if err != nil {
			// A bare-string tool_response is an older failure shape (a failed
			// Bash on PostToolUse, docs/HOSTS.md).
			var s string
			if json.Unmarshal(p.ToolResponse, &s) == nil {
				d.Req = pipeline.Request{Text: s, Failed: true}
				d.Source = sourceOf("Bash", p.ToolInput)
				d.Req.Source = d.Source
				return d, true
			}
			return d, false
		}
		stdout, err := jsonText(resp["stdout"])
		if err != nil {
			return d, false
		}
		var stderr string
		if raw, ok := resp["stderr"]; ok {
			stderr, _ = jsonText(raw)
		}
		text := joinOutErr(stdout, stderr)
		// The host caps stdout alone: a long stderr beside a short stdout
		// is still shown inline.
		cmd := sourceOf("Bash", p.ToolInput)
		if isOmniExec(cmd) {
			// `omni exec` already decided and recorded this output for the
			// same reader.
			return d, false
		}
		if line, _, ok := rewrite.Unwrap(cmd); ok {
			if pipeline.HasMarker(text) {
				// The PreToolUse rewrite's filter shortened and recorded
				// this output (CallInput.Deferred).
				return d, false
			}
			cmd = line // read as the call the agent made
		}
		d.Source = cmd
		d.LineSource = shellcmd.FileRead(cmd) // a plain file read: the file is the lines' source
		d.Req = pipeline.Request{Text: text, Source: lineSourceOr(d.LineSource, cmd)}
		_, d.Persisted = resp[persistedFromKey]
		if !d.Persisted && overHostCap(stdout, resp) {
			d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
			return d, true
		}
		d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
		d.Shorten = &pipeline.ShortenRequest{Command: cmd, Tool: "Bash"}
		render := func(t string) ([]byte, error) {
			out := make(map[string]json.RawMessage, len(resp))
			for k, v := range resp {
				out[k] = v
			}
			delete(out, persistedFromKey)
			var err error
			if out["stdout"], err = marshal(t); err != nil {
				return nil, err
			}
			out["stderr"] = json.RawMessage(`""`)
			return replyJSON("PostToolUse", out)
		}
		d.Render = render
		return d, true
	case "Read":
		resp, err := decodeObject(p.ToolResponse)
		if err != nil {
			return d, false
		}
		var typ string
		if json.Unmarshal(resp["type"], &typ) != nil || typ != "text" {
			return d, false
		}
		file, err := decodeObject(resp["file"])
		if err != nil {
			return d, false
		}
		var path string
		content, err := jsonText(file["content"])
		if err != nil {
			return d, false
		}
		_ = json.Unmarshal(file["filePath"], &path)
		if path == "" {
			path = sourceOf("Read", p.ToolInput)
		}
		d.Source = path
		d.Req = pipeline.Request{Text: content, Source: path, Read: true}
		// Redaction only (in place, no marker line): a Read keeps its lines.
		d.Shorten = &pipeline.ShortenRequest{Tool: "Read", Path: path}
		d.Req.NoFold = NoFoldReason("", passthrough, content, p.ToolResponse)
		render := func(t string) ([]byte, error) {
			nf := make(map[string]json.RawMessage, len(file))
			for k, v := range file {
				nf[k] = v
			}
			var err error
			if nf["content"], err = marshal(t); err != nil {
				return nil, err
			}
			nf["numLines"] = json.RawMessage(strconv.Itoa(pipeline.CountLines(t)))
			out := make(map[string]json.RawMessage, len(resp))
			for k, v := range resp {
				out[k] = v
			}
			if out["file"], err = marshal(nf); err != nil {
				return nil, err
			}
			return replyJSON("PostToolUse", out)
		}
		d.Render = render
		return d, true
	}
	return d, false
}

// overHostCap reports text the host will not show inline (ClaudeCodeOutputCap):
// the payload carries persistedOutputPath, or the text (a Bash result's
// stdout alone) has ClaudeCodeOutputCap characters or more.
func overHostCap(text string, resp map[string]json.RawMessage) bool {
	if _, persisted := resp["persistedOutputPath"]; persisted {
		return true
	}
	// A text of fewer bytes than the cap has fewer characters too.
	return len(text) >= ClaudeCodeOutputCap && utf8.RuneCountInString(text) >= ClaudeCodeOutputCap
}

// echoWith copies a tool_response object with key set to the JSON of v.
func echoWith(resp map[string]json.RawMessage, key string, v any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(resp))
	for k, x := range resp {
		out[k] = x
	}
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	out[key] = b
	return out, nil
}

// grepDelivery: Grep in content or count mode returns its matches as the
// string "content"; files_with_matches mode has only "filenames" and is left
// alone. The reply echoes tool_response with "content" replaced (numFiles,
// filenames, numLines and the rest unchanged).
func grepDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, false
	}
	var content string
	if json.Unmarshal(resp["content"], &content) != nil {
		return d, false
	}
	src := sourceOf("Grep", p.ToolInput)
	d.Source = src
	d.Req = pipeline.Request{Text: content, Source: src}
	if overHostCap(content, resp) {
		d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
		return d, true
	}
	d.Req.NoFold = NoFoldReason("", passthrough, content, p.ToolResponse)
	d.Render = func(t string) ([]byte, error) {
		out, err := echoWith(resp, "content", t)
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}
	return d, true
}

// globDelivery: Glob returns "filenames", one path per element; the model
// reads them one per line. The text is those lines; the reply echoes
// tool_response with "filenames" holding the delivered lines (a marker is
// one element), numFiles, truncated and the rest unchanged.
func globDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, false
	}
	var names []string
	if json.Unmarshal(resp["filenames"], &names) != nil || len(names) == 0 {
		return d, false
	}
	for _, n := range names {
		if strings.ContainsAny(n, "\r\n") {
			return d, false
		}
	}
	text := strings.Join(names, "\n") + "\n"
	src := sourceOf("Glob", p.ToolInput)
	d.Source = src
	d.Req = pipeline.Request{Text: text, Source: src}
	if overHostCap(text, resp) {
		d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
		return d, true
	}
	d.Req.NoFold = NoFoldReason("", passthrough, text, p.ToolResponse)
	d.Render = func(t string) ([]byte, error) {
		out, err := echoWith(resp, "filenames", strings.Split(strings.TrimSuffix(t, "\n"), "\n"))
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}
	return d, true
}

// webFetchDelivery: WebFetch's "result" is the prompt-processed page text.
// The reply echoes tool_response with "result" replaced (bytes, code,
// codeText, durationMs and url unchanged).
func webFetchDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, false
	}
	var result string
	if json.Unmarshal(resp["result"], &result) != nil {
		return d, false
	}
	src := sourceOf("WebFetch", p.ToolInput)
	d.Source = src
	d.Req = pipeline.Request{Text: result, Source: src}
	if overHostCap(result, resp) {
		d.Unrecorded, d.Reason = true, string(events.ReasonHostCap)
		return d, true
	}
	d.Req.NoFold = NoFoldReason("", passthrough, result, p.ToolResponse)
	d.Render = func(t string) ([]byte, error) {
		out, err := echoWith(resp, "result", t)
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}
	return d, true
}

// ClaudeCodeOutputCap is Claude Code's inline output cap, in characters, measured
// on a Bash result's stdout alone (stderr is not counted): at or above it
// the host cuts stdout at exactly this many characters, adds
// persistedOutputPath to the hook payload, persists the output to a file
// and shows the model a ~2 KB preview (measured on Claude Code 2.1.328,
// docs/HOSTS.md). omni leaves such output alone and records none of it
// as delivered, since the model saw only the preview. A rewrite of this many
// characters or more is persisted again, so omni never replies with one.
const ClaudeCodeOutputCap = 30000

// persistedFromKey marks a Bash tool_response whose stdout omni read back
// from the host's persisted file (inlinePersisted); its value is the path.
// It is recorded with the payload, so a replay decides the same way, and
// never echoed to the host.
const persistedFromKey = "omniPersistedFrom"

// inlinePersisted rewrites a Claude Code Bash PostToolUse payload whose
// output the host persisted (over ClaudeCodeOutputCap: tool_response.stdout is cut
// at 30,000 characters and persistedOutputPath names the whole output,
// measured, docs/HOSTS.md): stdout becomes the file's content, the two persisted keys
// go, and persistedFromKey records the path. The pipeline then sees the
// whole output; the reply is inline only when what it delivers is under the
// cap (hooks). Any other payload, an unreadable file, or one over MaxPayload
// is returned unchanged.
func inlinePersisted(stdin []byte) []byte {
	if !containsQuoted(stdin, "persistedOutputPath") {
		return stdin
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(stdin, &top) != nil {
		return stdin
	}
	var name, event string
	_ = json.Unmarshal(top["tool_name"], &name)
	_ = json.Unmarshal(top["hook_event_name"], &event)
	if name != "Bash" || event != "PostToolUse" {
		return stdin
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(top["tool_response"], &resp) != nil {
		return stdin
	}
	var path, transcript string
	if json.Unmarshal(resp["persistedOutputPath"], &path) != nil || !filepath.IsAbs(path) {
		return stdin
	}
	_ = json.Unmarshal(top["transcript_path"], &transcript)
	if !hostPersisted(path, transcript) {
		return stdin
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxPayload {
		return stdin
	}
	full, err := readRegular(path, MaxPayload)
	if err != nil || !utf8.Valid(full) {
		return stdin
	}
	if resp["stdout"], err = marshal(string(full)); err != nil {
		return stdin
	}
	delete(resp, "persistedOutputPath")
	delete(resp, "persistedOutputSize")
	if resp[persistedFromKey], err = marshal(path); err != nil {
		return stdin
	}
	if top["tool_response"], err = marshal(resp); err != nil {
		return stdin
	}
	out, err := json.Marshal(top)
	if err != nil || len(out) > MaxPayload {
		return stdin
	}
	return out
}

// hostPersisted reports whether path is where Claude Code persists a
// session's large outputs: a file directly inside the session's
// tool-results directory beside its transcript ("<dir>/<session>.jsonl" has
// "<dir>/<session>/tool-results/<id>.txt", measured with Claude Code
// 2.1.328, docs/HOSTS.md), reached without a link. Any other path (a
// payload naming ~/.ssh/id_rsa) is never read.
func hostPersisted(path, transcript string) bool {
	if !filepath.IsAbs(transcript) || !strings.HasSuffix(transcript, ".jsonl") || filepath.Clean(path) != path {
		return false
	}
	dir := filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "tool-results")
	if filepath.Dir(path) != dir {
		return false
	}
	// Every directory on the way resolves to itself: no link leads out.
	real, err := filepath.EvalSymlinks(path)
	return err == nil && real == path
}

// replyJSON renders {"hookSpecificOutput":{"hookEventName":ev,"updatedToolOutput":out}}
// and a newline: Marshal's bytes, written directly (replyJSONMarshal is
// the reference, FuzzReplyJSON holds them equal). encoding/json compacts
// every json.RawMessage value with its scanner, some ten times slower
// than jsonValid; a value that is one valid string is its own compact
// form and is copied as it is. Errors: a value that is not JSON
// (json.Compact's error, where Marshal's would name the type).
func replyJSON(ev string, out map[string]json.RawMessage) ([]byte, error) {
	if out == nil {
		return replyJSONMarshal(ev, out)
	}
	keys := make([]string, 0, len(out))
	n := 64 + len(ev)
	for k, v := range out {
		keys = append(keys, k)
		n += len(k) + len(v) + 8
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	b = append(b, `{"hookSpecificOutput":{"hookEventName":`...)
	q, err := marshal(ev)
	if err != nil {
		return nil, err
	}
	b = append(append(b, q...), `,"updatedToolOutput":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if q, err = marshal(k); err != nil {
			return nil, err
		}
		b = append(append(b, q...), ':')
		switch v := out[k]; {
		case v == nil:
			b = append(b, "null"...)
		case compactString(v):
			b = append(b, v...)
		default:
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return nil, err
			}
			b = append(b, c.Bytes()...)
		}
	}
	return append(b, "}}}\n"...), nil
}

// compactString reports whether v is one valid JSON string with no
// blanks around it: json.Compact (without HTML escaping) returns it as it
// is.
func compactString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	valid, known := jsonValid(v)
	return valid && known
}

// replyJSONMarshal is replyJSON through Marshal.
func replyJSONMarshal(ev string, out map[string]json.RawMessage) ([]byte, error) {
	type hso struct {
		HookEventName     string                     `json:"hookEventName"`
		UpdatedToolOutput map[string]json.RawMessage `json:"updatedToolOutput"`
	}
	b, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{hso{ev, out}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
