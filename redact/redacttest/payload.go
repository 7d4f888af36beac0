package redacttest

import (
	"encoding/json"
	"strings"
)

// HookPayload builds a Claude Code PostToolUse (or, with event
// "PostToolUseFailure", failure) payload of session for one tool whose
// result carries text: tool_response in the tool's own shape (Bash,
// BashOutput, Read, Grep, Glob, WebFetch, WebSearch, Task/Agent, an MCP
// tool), or the error string "Exit code 1\n"+text for a failure.
func HookPayload(session, tool, event, cmd, text string) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": event, "tool_name": tool,
		"tool_input": map[string]any{"command": cmd}}
	switch tool {
	case "Bash":
		p["tool_response"] = map[string]any{"stdout": text, "stderr": "", "interrupted": false, "isImage": false}
	case "BashOutput":
		p["tool_response"] = map[string]any{"shellId": "b1", "command": cmd, "status": "completed", "exitCode": 0,
			"stdout": text, "stderr": "", "stdoutLines": 1, "stderrLines": 0, "timestamp": "2026-01-01T00:00:00Z"}
	case "Read":
		p["tool_input"] = map[string]any{"file_path": "/home/dev/proj/.env"}
		p["tool_response"] = map[string]any{"type": "text", "file": map[string]any{"filePath": "/home/dev/proj/.env",
			"content": text, "numLines": strings.Count(text, "\n"), "startLine": 1, "totalLines": strings.Count(text, "\n")}}
	case "Grep":
		p["tool_input"] = map[string]any{"pattern": "password", "output_mode": "content"}
		p["tool_response"] = map[string]any{"mode": "content", "numFiles": 1, "filenames": []string{}, "content": text,
			"numLines": strings.Count(text, "\n")}
	case "Glob":
		p["tool_input"] = map[string]any{"pattern": "**/*"}
		p["tool_response"] = map[string]any{"filenames": strings.Split(strings.TrimSuffix(text, "\n"), "\n"),
			"durationMs": 3, "numFiles": 1, "truncated": false}
	case "WebFetch":
		p["tool_input"] = map[string]any{"url": "https://docs.acme.dev/setup", "prompt": "setup"}
		p["tool_response"] = map[string]any{"bytes": len(text), "code": 200, "codeText": "OK", "result": text,
			"durationMs": 90, "url": "https://docs.acme.dev/setup"}
	case "WebSearch":
		p["tool_input"] = map[string]any{"query": "acme setup"}
		p["tool_response"] = map[string]any{"query": "acme setup", "results": []any{map[string]any{"tool_use_id": "x",
			"content": []any{map[string]any{"title": "Setup", "url": "https://acme.dev"}}}, text}, "durationSeconds": 1.2}
	case "Task", "Agent":
		p["tool_input"] = map[string]any{"description": "look", "prompt": "find the config"}
		p["tool_response"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}},
			"totalDurationMs": 100, "totalTokens": 10, "totalToolUseCount": 1}
	case "mcp__db__query":
		p["tool_input"] = map[string]any{"sql": "select * from settings"}
		p["tool_response"] = []any{map[string]any{"type": "text", "text": text}}
	}
	if event == "PostToolUseFailure" {
		delete(p, "tool_response")
		p["error"] = "Exit code 1\n" + text
	}
	b, _ := json.Marshal(p)
	return b
}

// Found returns the values found in s, raw or JSON-escaped.
func Found(s string, values []string) []string {
	var out []string
	for _, v := range values {
		ev, _ := json.Marshal(v)
		if strings.Contains(s, v) || strings.Contains(s, strings.Trim(string(ev), `"`)) {
			out = append(out, v)
		}
	}
	return out
}
