package hooks

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/rewrite"
	"github.com/omnictx/omni/internal/shellcmd"
	"github.com/omnictx/omni/pipeline"
)

// The tool outputs omni rewrites in a Claude Code PostToolUse payload:
// where each tool's text sits in its tool_response, and the reply that
// echoes that response with only the text changed.

// withParam sets m[k] = v, making m when it is nil, and returns m.
func withParam(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// toolDelivery extracts the text of a Claude Code PostToolUse payload for
// the tools omni rewrites (Bash, Read, Grep, Glob, WebFetch) and returns the
// reply renderer. Each renderer echoes the tool's own tool_response with
// only its text values changed: Claude Code drops a reply that is not in
// the tool's own output shape (measured, docs/HOSTS.md). ok is false for tools and
// shapes left alone (the subagent tool Agent, formerly Task, among them).
func (e *Engine) toolDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	switch p.ToolName {
	case "Agent", "Task":
		// A subagent's final message: new text, and its shape (a content
		// array) is not one omni rewrites.
		return d, nil, false
	case "Grep":
		return grepDelivery(d, p, in)
	case "Glob":
		return globDelivery(d, p, in)
	case "WebFetch":
		return webFetchDelivery(d, p, in)
	case "Bash":
		resp, err := decodeObject(p.ToolResponse)
		if err != nil {
			// A bare-string tool_response is an older failure shape (a failed
			// Bash on PostToolUse, docs/HOSTS.md).
			var s string
			if json.Unmarshal(p.ToolResponse, &s) == nil {
				d.req = pipeline.Request{Text: s, Failed: true}
				d.source = sourceOf("Bash", p.ToolInput)
				d.req.Source = d.source
				return d, nil, true
			}
			return d, nil, false
		}
		stdout, err := jsonText(resp["stdout"])
		if err != nil {
			return d, nil, false
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
			return d, nil, false
		}
		if line, _, ok := rewrite.Unwrap(cmd); ok {
			if pipeline.HasMarker(text) {
				// The PreToolUse rewrite's filter shortened and recorded
				// this output (CallInput.Deferred).
				return d, nil, false
			}
			cmd = line // read as the call the agent made
		}
		d.source = cmd
		d.lineSource = shellcmd.FileRead(cmd) // a plain file read: the file is the lines' source
		d.req = pipeline.Request{Text: text, Source: lineSourceOr(d.lineSource, cmd)}
		_, d.persisted = resp[persistedFromKey]
		if !d.persisted && overHostCap(stdout, resp) {
			d.unrecorded, d.reason = true, string(events.ReasonHostCap)
			return d, nil, true
		}
		d.req.NoFold = noFoldReason(cmd, in.Passthrough, text, p.ToolResponse)
		d.shorten = &pipeline.ShortenRequest{Command: cmd, Tool: "Bash"}
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
		return d, render, true
	case "Read":
		resp, err := decodeObject(p.ToolResponse)
		if err != nil {
			return d, nil, false
		}
		var typ string
		if json.Unmarshal(resp["type"], &typ) != nil || typ != "text" {
			return d, nil, false
		}
		file, err := decodeObject(resp["file"])
		if err != nil {
			return d, nil, false
		}
		var path string
		content, err := jsonText(file["content"])
		if err != nil {
			return d, nil, false
		}
		_ = json.Unmarshal(file["filePath"], &path)
		if path == "" {
			path = sourceOf("Read", p.ToolInput)
		}
		d.source = path
		d.req = pipeline.Request{Text: content, Source: path, Read: true}
		// Redaction only (in place, no marker line): a Read keeps its lines.
		d.shorten = &pipeline.ShortenRequest{Tool: "Read", Path: path}
		d.req.NoFold = noFoldReason("", in.Passthrough, content, p.ToolResponse)
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
		return d, render, true
	}
	return d, nil, false
}

// overHostCap reports text the host will not show inline (HostOutputCap):
// the payload carries persistedOutputPath, or the text (a Bash result's
// stdout alone) has HostOutputCap characters or more.
func overHostCap(text string, resp map[string]json.RawMessage) bool {
	if _, persisted := resp["persistedOutputPath"]; persisted {
		return true
	}
	return utf8.RuneCountInString(text) >= HostOutputCap
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
func grepDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, nil, false
	}
	var content string
	if json.Unmarshal(resp["content"], &content) != nil {
		return d, nil, false
	}
	src := sourceOf("Grep", p.ToolInput)
	d.source = src
	d.req = pipeline.Request{Text: content, Source: src}
	if overHostCap(content, resp) {
		d.unrecorded, d.reason = true, string(events.ReasonHostCap)
		return d, nil, true
	}
	d.req.NoFold = noFoldReason("", in.Passthrough, content, p.ToolResponse)
	return d, func(t string) ([]byte, error) {
		out, err := echoWith(resp, "content", t)
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}, true
}

// globDelivery: Glob returns "filenames", one path per element; the model
// reads them one per line. The text is those lines; the reply echoes
// tool_response with "filenames" holding the delivered lines (a marker is
// one element), numFiles, truncated and the rest unchanged.
func globDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, nil, false
	}
	var names []string
	if json.Unmarshal(resp["filenames"], &names) != nil || len(names) == 0 {
		return d, nil, false
	}
	for _, n := range names {
		if strings.ContainsAny(n, "\r\n") {
			return d, nil, false
		}
	}
	text := strings.Join(names, "\n") + "\n"
	src := sourceOf("Glob", p.ToolInput)
	d.source = src
	d.req = pipeline.Request{Text: text, Source: src}
	if overHostCap(text, resp) {
		d.unrecorded, d.reason = true, string(events.ReasonHostCap)
		return d, nil, true
	}
	d.req.NoFold = noFoldReason("", in.Passthrough, text, p.ToolResponse)
	return d, func(t string) ([]byte, error) {
		out, err := echoWith(resp, "filenames", strings.Split(strings.TrimSuffix(t, "\n"), "\n"))
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}, true
}

// webFetchDelivery: WebFetch's "result" is the prompt-processed page text.
// The reply echoes tool_response with "result" replaced (bytes, code,
// codeText, durationMs and url unchanged).
func webFetchDelivery(d delivery, p ccPayload, in HookInput) (delivery, func(string) ([]byte, error), bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &resp) != nil {
		return d, nil, false
	}
	var result string
	if json.Unmarshal(resp["result"], &result) != nil {
		return d, nil, false
	}
	src := sourceOf("WebFetch", p.ToolInput)
	d.source = src
	d.req = pipeline.Request{Text: result, Source: src}
	if overHostCap(result, resp) {
		d.unrecorded, d.reason = true, string(events.ReasonHostCap)
		return d, nil, true
	}
	d.req.NoFold = noFoldReason("", in.Passthrough, result, p.ToolResponse)
	return d, func(t string) ([]byte, error) {
		out, err := echoWith(resp, "result", t)
		if err != nil {
			return nil, err
		}
		return replyJSON("PostToolUse", out)
	}, true
}
