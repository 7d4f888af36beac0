package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// OpenCode 1.18.33 (its measured behaviour is in docs/HOSTS.md): the binary of the platform package,
// `opencode run`, against a mock Chat Completions API (SSE) reached through
// an OpenAI-compatible provider. omni's plugin shim (written by `omni init
// --opencode`) rewrites tool results; what the model read is the role
// "tool" messages of later requests.
const (
	openCodeSpec = "opencode-ai@1.18.33"
	openCodeRel  = "node_modules/opencode-linux-x64/bin/opencode"
)

// ocRequest is the part of a Chat Completions request the mock reads.
type ocRequest struct {
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// ocText reads content that is a string or an array of {type,text} parts.
func ocText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// ocConversation returns the conversation's text (user, assistant and
// system messages, for the tag), the tool results by call id, the system
// text, and whether the request offers tools.
func ocConversation(body []byte) (text, system string, results map[string]string, tools bool, err error) {
	var req ocRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return "", "", nil, false, err
	}
	results = map[string]string{}
	var tb strings.Builder
	for _, m := range req.Messages {
		c, err := ocText(m.Content)
		if err != nil {
			return "", "", nil, false, fmt.Errorf("%s message content: %w", m.Role, err)
		}
		switch m.Role {
		case "tool":
			results[m.ToolCallID] = c
		case "system":
			system += c
		default:
			tb.WriteString(c)
			tb.WriteByte('\n')
		}
	}
	return tb.String(), system, results, len(req.Tools) > 0, nil
}

func ocID(name string) string { return "call_e2e_" + name }

// openCodeMock serves POST /v1/chat/completions. The reply that asks for
// the main script's last call reports a context nearly full, so OpenCode
// compacts on its own after it; the summary it asks for carries the tag
// of the script played after the compaction.
func openCodeMock(t *testing.T, project string) *mock {
	var mu sync.Mutex
	compacted := false
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("opencode mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, system, results, tools, err := ocConversation(body)
		if err != nil {
			t.Errorf("opencode mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		if !tools {
			if strings.Contains(system, "summar") {
				ocChunks(w, nil, tagAfter+": the script ran; run the rest.", 1000)
			} else {
				ocChunks(w, nil, "E2E title", 1000)
			}
			return
		}
		tag := findTag(text)
		var st *step
		if tag != "" {
			st = nextStep(scriptFor(tag, true), results, ocID)
		}
		if st == nil {
			ocChunks(w, nil, "E2E done.", 1000)
			return
		}
		arg := st.arg(byName(results, ocID, mainScript(true), subScript, afterScript))
		var name string
		var input any
		switch st.kind {
		case "read":
			name, input = "read", map[string]any{"filePath": filepath.Join(project, arg)}
		case "shell":
			name, input = "bash", map[string]any{"command": arg, "description": "e2e " + st.name}
		case "agent":
			name, input = "task", map[string]any{"description": "e2e subagent", "prompt": arg, "subagent_type": "general"}
		}
		usage := 1000
		mu.Lock()
		if tag == tagMain && st.name == "retrieve" && !compacted {
			compacted, usage = true, 195000
		}
		mu.Unlock()
		ocChunks(w, &[3]string{ocID(st.name), name, js(input)}, "", usage)
	})
}

// ocChunks streams one assistant message: a tool call {id, name, args}
// or text, with usage prompt tokens.
func ocChunks(w http.ResponseWriter, call *[3]string, text string, promptTokens int) {
	chunk := func(delta any, finish any, usage any) [2]string {
		c := map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "e2e",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		return [2]string{"", js(c)}
	}
	usage := map[string]int{"prompt_tokens": promptTokens, "completion_tokens": 10, "total_tokens": promptTokens + 10}
	var evs [][2]string
	if call != nil {
		evs = append(evs, chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": call[0], "type": "function", "function": map[string]string{"name": call[1], "arguments": call[2]}}}}, nil, nil),
			chunk(map[string]any{}, "tool_calls", usage))
	} else {
		evs = append(evs, chunk(map[string]any{"role": "assistant", "content": text}, nil, nil),
			chunk(map[string]any{}, "stop", usage))
	}
	sse(w, append(evs, [2]string{"", "[DONE]"})...)
}

// openCodeRun plays the script on OpenCode in a fresh sandbox.
func openCodeRun(t *testing.T, oc string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := openCodeMock(t, s.project)
	cfgDir := filepath.Join(s.home, ".config", "opencode")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"model":   "mock/e2e", "small_model": "mock/e2e",
		"autoupdate": false, "share": "disabled",
		"provider": map[string]any{"mock": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "e2e mock",
			"options": map[string]any{"baseURL": m.URL + "/v1", "apiKey": "sk-e2e"},
			"models":  map[string]any{"e2e": map[string]any{"name": "e2e", "limit": map[string]int{"context": 200000, "output": 8000}}},
		}},
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "opencode.json"), []byte(js(cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	linkPluginAPI(t, cfgDir)
	if withOmni {
		s.omniInit("--opencode")
	}
	env := []string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_SHARE=1"}
	s.run(runTimeout, env, oc, "run", "--format", "json", tagMain+": run the script.")

	all := map[string]string{}
	for _, r := range m.requests() {
		_, _, res, _, _ := ocConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, ocID, mainScript(true), subScript, afterScript)
	if withOmni {
		s.checkClaims(read, stepOrder(mainScript(true), afterScript))
		s.checkClaims(read, stepOrder(subScript))
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// TestOpenCode plays the script on the real OpenCode with and without
// omni. OpenCode never shows the model an exit code.
func TestOpenCode(t *testing.T) {
	t.Parallel()
	oc := cliPath(t, "opencode", openCodeSpec, openCodeRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return openCodeRun(t, oc, withOmni) })
	checkRead(t, with, without, hostFacts{sub: true, compaction: true,
		readFrame: []string{"src.txt</path>", "(End of file - total 120 lines)"}})
	report(t, "OpenCode "+openCodeSpec, with, without)
}

// linkPluginAPI gives a sandbox's OpenCode config directory the plugin API
// install.sh prepared, so OpenCode does not install it from npm at start.
func linkPluginAPI(t *testing.T, cfgDir string) {
	src := filepath.Join(clisDir(), "opencode-config")
	if _, err := os.Stat(filepath.Join(src, "node_modules")); err != nil {
		t.Logf("no prepared %s: OpenCode installs its plugin API from npm at start (slow)", src)
		return
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfgDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(src, "node_modules"), filepath.Join(cfgDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
}
