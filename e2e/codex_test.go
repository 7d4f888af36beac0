package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/hostsetup"
)

// Codex CLI 0.169.0 (its measured behaviour is in docs/HOSTS.md): the native binary of the platform
// package, `codex exec`, against a mock of the Responses API (SSE) through
// a custom provider. Codex has no file-read tool: the script's reads are
// shell reads. What the model read is the function_call_output items of
// later requests.
const (
	codexSpec = "@openai/codex@0.169.0"
	codexRel  = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
)

// cxItem is one input item of a Responses request.
type cxItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
}

// cxText reads a string, or an array of parts with text.
func cxText(raw json.RawMessage) (string, error) {
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

// cxConversation returns the user text (for the tag) and the function call
// outputs by call id.
func cxConversation(body []byte) (text string, results map[string]string, err error) {
	var req struct {
		Input []cxItem `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", nil, err
	}
	results = map[string]string{}
	var tb strings.Builder
	for _, it := range req.Input {
		switch it.Type {
		case "message":
			if it.Role == "user" {
				c, err := cxText(it.Content)
				if err != nil {
					return "", nil, fmt.Errorf("message content: %w", err)
				}
				tb.WriteString(c)
				tb.WriteByte('\n')
			}
		case "function_call_output":
			c, err := cxText(it.Output)
			if err != nil {
				return "", nil, fmt.Errorf("function_call_output: %w", err)
			}
			results[it.CallID] = c
		}
	}
	return tb.String(), results, nil
}

func cxID(name string) string { return "call_e2e_" + name }

// cxShellReads turns a script's file reads into shell reads (Codex has no
// file-read tool).
func cxShellReads(script []step) []step {
	var out []step
	for _, s := range script {
		if s.kind == "read" {
			s = step{s.name, "shell", func(f func(map[string]string) string) func(map[string]string) string {
				return func(r map[string]string) string { return "cat " + f(r) }
			}(s.arg)}
		}
		out = append(out, s)
	}
	return out
}

// codexScript is the main script, reads as shell reads; after the subagent
// is spawned the parent waits for it (wait_agent on the id spawn_agent
// returned).
func codexScript() []step {
	var out []step
	for _, s := range cxShellReads(mainScript(true)) {
		out = append(out, s)
		if s.kind == "agent" {
			out = append(out, step{"subwait", "wait", func(read map[string]string) string {
				var sp struct {
					AgentID string `json:"agent_id"`
				}
				_ = json.Unmarshal([]byte(read["sub"]), &sp)
				return sp.AgentID
			}})
		}
	}
	return out
}

// cxAfterScript is afterScript with shell reads.
var cxAfterScript = cxShellReads(afterScript)

// cxCompactPrompt opens the request Codex 0.169.0 sends to have the
// conversation summarised (local auto-compaction).
const cxCompactPrompt = "You are performing a CONTEXT CHECKPOINT COMPACTION"

// cxCompactLimit is the model_auto_compact_token_limit the runs set; the
// reply that gives the main script's last call reports more input tokens
// than that, so Codex compacts before its next request.
const cxCompactLimit = 200000

// codexMock serves POST /v1/responses: the main script, the subagent's
// (spawn_agent and wait_agent in the multi_agent_v1 namespace), the
// compaction summary (tagged so the script after it plays) and the script
// after the compaction.
func codexMock(t *testing.T) *mock {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path != "/v1/responses" {
			t.Logf("codex mock: %s %s (answered 404)", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, results, err := cxConversation(body)
		if err != nil {
			t.Errorf("codex mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		if strings.Contains(text, cxCompactPrompt) {
			cxReply(w, cxMessage(tagAfter+": the script ran; run the rest."), 0)
			return
		}
		var st *step
		if tag := findTag(text); tag != "" {
			script := map[string][]step{tagMain: codexScript(), tagSub: subScript, tagAfter: cxAfterScript}[tag]
			st = nextStep(script, results, cxID)
		}
		if st == nil {
			cxReply(w, cxMessage("E2E done."), 0)
			return
		}
		arg := st.arg(byName(results, cxID, codexScript(), subScript, cxAfterScript))
		call := map[string]any{"type": "function_call", "id": "fc_" + st.name, "call_id": cxID(st.name)}
		switch st.kind {
		case "shell":
			call["name"], call["arguments"] = "exec_command", js(map[string]any{"cmd": arg})
		case "agent":
			call["namespace"], call["name"], call["arguments"] = "multi_agent_v1", "spawn_agent", js(map[string]any{"message": arg})
		case "wait":
			call["namespace"], call["name"], call["arguments"] = "multi_agent_v1", "wait_agent", js(map[string]any{"targets": []string{arg}, "timeout_ms": 300000})
		}
		tokens := 0
		if st.name == "retrieve" {
			tokens = 2 * cxCompactLimit
		}
		cxReply(w, call, tokens)
	})
}

// cxMessage is an assistant message output item.
func cxMessage(text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "id": "msg_e2e",
		"content": []any{map[string]any{"type": "output_text", "text": text}}}
}

// cxReply streams a response holding one output item; its usage reports
// tokens input tokens (1000 when 0).
func cxReply(w http.ResponseWriter, item map[string]any, tokens int) {
	if tokens == 0 {
		tokens = 1000
	}
	resp := map[string]any{"id": "resp_e2e", "object": "response", "status": "in_progress", "output": []any{}}
	done := map[string]any{"id": "resp_e2e", "object": "response", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": tokens, "output_tokens": 10, "total_tokens": tokens + 10,
			"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}}
	sse(w,
		[2]string{"response.created", js(map[string]any{"type": "response.created", "response": resp})},
		[2]string{"response.output_item.added", js(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})},
		[2]string{"response.output_item.done", js(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})},
		[2]string{"response.completed", js(map[string]any{"type": "response.completed", "response": done})},
	)
}

// codexRun plays the script on Codex in a fresh sandbox.
func codexRun(t *testing.T, codex string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := codexMock(t)
	codexHome := filepath.Join(s.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_auto_compact_token_limit = %d

[model_providers.mock]
name = "e2e mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "E2E_MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0
`, cxCompactLimit, m.URL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"CODEX_HOME=" + codexHome, "E2E_MOCK_KEY=sk-e2e"}
	if withOmni {
		s.omniInit("--codex", env...)
		// Approve omni's hooks as a user does in codex: the hashes omni
		// doctor computes. Codex skips hooks whose approval does not match,
		// so a wrong hash fails this test (nothing folds).
		approveCodexHooks(t, s.home, codexHome)
	}
	s.run(runTimeout, env, codex, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"-C", s.project, tagMain+": run the script.")

	if d := os.Getenv("E2E_DEBUG_DIR"); d != "" && withOmni {
		_ = exec.Command("cp", "-r", codexHome, filepath.Join(d, "codex")).Run()
	}
	all := map[string]string{}
	for _, r := range m.requests() {
		if r.Path != "/v1/responses" {
			continue
		}
		_, res, _ := cxConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, cxID, codexScript(), subScript, cxAfterScript)
	if withOmni {
		// The subagent's reader is its own: its claims are checked apart.
		s.checkClaims(read, stepOrder(codexScript(), cxAfterScript))
		s.checkClaims(read, stepOrder(subScript))
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// cxVolatile matches the lines of Codex's output header that change from
// run to run.
var cxVolatile = regexp.MustCompile(`(?m)^(Chunk ID|Wall time): .*\n`)

// approveCodexHooks writes, in codexHome's config.toml, Codex's approval
// of every omni hook in its hooks.json: [hooks.state."<key>"] with the
// trusted_hash omni doctor computes (hostsetup.CodexHookTrust).
func approveCodexHooks(t *testing.T, home, codexHome string) {
	t.Helper()
	hs, err := hostsetup.CodexHookTrust(hostsetup.Options{Home: home, CodexHome: codexHome})
	if err != nil || len(hs) == 0 {
		t.Fatalf("omni's Codex hooks: %v %v", hs, err)
	}
	cfg := filepath.Join(codexHome, "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		b = fmt.Appendf(b, "\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.Hash)
	}
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCodex plays the script on the real Codex CLI with and without omni.
func TestCodex(t *testing.T) {
	t.Parallel()
	codex := cliPath(t, "codex", codexSpec, codexRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return codexRun(t, codex, withOmni) })
	checkRead(t, with, without, hostFacts{
		exitText:   func(c int) string { return fmt.Sprintf("Process exited with code %d", c) },
		normalize:  func(s string) string { return cxVolatile.ReplaceAllLiteralString(s, "") },
		sub:        true,
		compaction: true,
	})
	report(t, "Codex CLI "+codexSpec, with, without)
}
