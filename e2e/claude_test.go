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
	"time"
)

// Claude Code 2.1.328 (its measured behaviour is in docs/HOSTS.md): the native binary of the platform
// package, in print mode, against a mock of the Anthropic Messages API
// (SSE). What the model read is the tool_result blocks of later requests.
const (
	claudeSpec = "@anthropic-ai/claude-code@2.1.328"
	claudeRel  = "node_modules/@anthropic-ai/claude-code-linux-x64/claude"
)

// ccMessage is one message of a Messages API request.
type ccMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ccBlock is one content block.
type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ccBlocks reads content that is a string or an array of blocks.
func ccBlocks(raw json.RawMessage) ([]ccBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []ccBlock{{Type: "text", Text: s}}, nil
	}
	var bs []ccBlock
	err := json.Unmarshal(raw, &bs)
	return bs, err
}

// ccConversation reads a Messages request: the user text (for the tag) and
// the tool results by tool_use_id (text as the model reads it).
func ccConversation(body []byte) (text string, results map[string]string, err error) {
	var req struct {
		Messages []ccMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", nil, err
	}
	results = map[string]string{}
	var tb strings.Builder
	for _, m := range req.Messages {
		bs, err := ccBlocks(m.Content)
		if err != nil {
			return "", nil, fmt.Errorf("message content: %w", err)
		}
		for _, b := range bs {
			switch {
			case b.Type == "text" && m.Role == "user":
				tb.WriteString(b.Text)
				tb.WriteByte('\n')
			case b.Type == "tool_result":
				inner, err := ccBlocks(b.Content)
				if err != nil {
					return "", nil, fmt.Errorf("tool_result content: %w", err)
				}
				var rb strings.Builder
				for _, x := range inner {
					rb.WriteString(x.Text)
				}
				results[b.ToolUseID] = rb.String()
			}
		}
	}
	return tb.String(), results, nil
}

func ccID(name string) string { return "toolu_e2e_" + name }

// claudeMock serves POST /v1/messages (SSE) and count_tokens. When the main
// script is done it answers 400 "prompt is too long" once, which makes
// Claude Code compact on its own (PreCompact, SessionStart "compact",
// PostCompact); the summary it then asks for carries the tag of the script
// played after the compaction.
func claudeMock(t *testing.T, project string) *mock {
	var mu sync.Mutex
	compacted := false
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens":100}`)
			return
		}
		if r.URL.Path != "/v1/messages" {
			t.Errorf("claude mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, results, err := ccConversation(body)
		if err != nil {
			t.Errorf("claude mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		tag := findTag(text)
		var st *step
		script := scriptFor(tag, true)
		if tag == tagMain {
			script = ccMainScript()
		}
		if tag != "" {
			st = nextStep(script, results, ccID)
		}
		if st == nil {
			mu.Lock()
			first := tag == tagMain && !compacted
			compacted = compacted || first
			mu.Unlock()
			switch {
			case first:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`)
			case tag == "" && strings.Contains(text, "<summary>"):
				ccText(w, "<analysis>e2e</analysis>\n<summary>"+tagAfter+": the script ran; run the rest.</summary>")
			default:
				ccText(w, "E2E done.")
			}
			return
		}
		arg := st.arg(byName(results, ccID, ccMainScript(), subScript, afterScript, mcpScript))
		if st.kind == "par" {
			// This step and the "par" steps after it, in one response: the
			// model calls the tools in parallel, in one turn.
			var uses []ccUse
			for i := range script {
				if sc := script[i]; sc.kind == "par" && len(uses) < 8 {
					if _, done := results[ccID(sc.name)]; !done {
						uses = append(uses, ccUse{ccID(sc.name), "Bash", map[string]any{"command": sc.arg(nil), "description": "e2e " + sc.name}})
					}
				}
			}
			ccToolUses(w, uses)
			return
		}
		var name string
		var input any
		switch st.kind {
		case "read":
			name, input = "Read", map[string]any{"file_path": filepath.Join(project, arg)}
		case "shell":
			name, input = "Bash", map[string]any{"command": arg, "description": "e2e " + st.name}
		case "agent":
			name, input = "Agent", map[string]any{"description": "e2e subagent", "prompt": arg, "subagent_type": "general-purpose", "run_in_background": false}
		case "mcp_run":
			// An extra argument, as models add: omni_run ignores it.
			name, input = "mcp__omni__omni_run", map[string]any{"command": arg, "description": "e2e " + st.name}
		case "mcp_retrieve":
			name, input = "mcp__omni__omni_retrieve", map[string]any{"handle": arg}
		}
		ccToolUse(w, ccID(st.name), name, input)
	})
}

func ccStart() [2]string {
	return [2]string{"message_start", js(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_e2e", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})}
}

func ccEnd(reason string) [][2]string {
	return [][2]string{
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", js(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})},
		{"message_stop", `{"type":"message_stop"}`},
	}
}

func ccText(w http.ResponseWriter, text string) {
	evs := [][2]string{ccStart(),
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", js(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": text}})},
	}
	sse(w, append(evs, ccEnd("end_turn")...)...)
}

// ccUse is one tool_use block of a response.
type ccUse struct {
	id, name string
	input    any
}

// ccToolUses answers with several tool_use blocks at once (parallel calls).
func ccToolUses(w http.ResponseWriter, uses []ccUse) {
	evs := [][2]string{ccStart()}
	for i, u := range uses {
		evs = append(evs,
			[2]string{"content_block_start", js(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": u.id, "name": u.name, "input": map[string]any{}}})},
			[2]string{"content_block_delta", js(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "input_json_delta", "partial_json": js(u.input)}})},
			[2]string{"content_block_stop", js(map[string]any{"type": "content_block_stop", "index": i})})
	}
	end := ccEnd("tool_use")[1:] // the blocks are closed above
	sse(w, append(evs, end...)...)
}

func ccToolUse(w http.ResponseWriter, id, name string, input any) {
	evs := [][2]string{ccStart(),
		{"content_block_start", js(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})},
		{"content_block_delta", js(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "input_json_delta", "partial_json": js(input)}})},
	}
	sse(w, append(evs, ccEnd("tool_use")...)...)
}

// claudeRun plays the script on Claude Code in a fresh sandbox, omni
// registered or not, and returns what the model read per step.
func claudeRun(t *testing.T, claude string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := claudeMock(t, s.project)
	if withOmni {
		s.omniInit("--claude")
	}
	env := []string{
		"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1",
	}
	// The tools Claude Code offers by default (no --tools): its native
	// build has no Grep or Glob tool; grep and find run in Bash through
	// its shell functions over the ugrep and bfs it embeds.
	common := []string{"--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose",
		"--model", "claude-sonnet-4-5"}
	s.run(runTimeout, env, claude, append([]string{"-p", tagMain + ": run the script."}, common...)...)

	all := map[string]string{}
	for _, r := range m.requests() {
		if r.Path != "/v1/messages" {
			continue
		}
		txt, res, _ := ccConversation(r.Body)
		if os.Getenv("E2E_DEBUG") != "" {
			t.Logf("req %d bytes tag=%q results=%d text=%q", len(r.Body), findTag(txt), len(res), tail(txt, 300))
		}
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, ccID, ccMainScript(), subScript, afterScript)
	if withOmni {
		// The subagent's reader is its own: its claims are checked apart.
		// The parallel calls read each other's results in the same turn:
		// their claims are checked against the steps before them and both.
		var serial []step
		for _, st := range ccMainScript() {
			if st.kind != "par" {
				serial = append(serial, st)
			}
		}
		s.checkClaims(read, stepOrder(serial, afterScript))
		s.checkClaims(read, stepOrder(subScript))
		var before []string
		for _, st := range serial {
			if st.name != "sub" {
				before = append(before, st.name)
			}
		}
		s.checkParallelClaims(read, before, ccParallel)
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// ccSearch is the pattern of Claude Code's grep steps: 20 lines of each
// script file.
const ccSearch = "config_value_1[0-9] "

// ccParallel names the steps the model calls in one turn.
var ccParallel = []string{"par1", "par2"}

// ccMainScript is Claude Code's main script: the shared one, then a
// search as users get it (grep and find in Bash, answered by the ugrep
// and bfs Claude Code embeds), twice for grep, and two calls of one new
// command in one turn (Claude Code runs their PostToolUse hooks at once).
func ccMainScript() []step {
	par := fixed("sed 's/^/par /' src.txt")
	return append(mainScript(true),
		step{"grep1", "shell", fixed("grep -rn '" + ccSearch + "' .")},
		step{"grep2", "shell", fixed("grep -rn '" + ccSearch + "' .")},
		step{"find1", "shell", fixed("find . -name '*.txt'")},
		step{"par1", "par", par},
		step{"par2", "par", par})
}

// checkParallelClaims asserts that every "already shown" marker in the
// results of calls made in one turn names lines the model holds: in a
// result read before that turn, or in a result of the same turn.
func (s *sandbox) checkParallelClaims(read map[string]string, before, turn []string) {
	t := s.t
	t.Helper()
	var held strings.Builder
	for _, n := range append(append([]string(nil), before...), turn...) {
		held.WriteString(read[n])
	}
	for _, name := range turn {
		for _, m := range markerRe.FindAllStringSubmatch(read[name], -1) {
			got := s.run(time.Minute, nil, filepath.Join(binDir, "omni"), "retrieve", m[1])
			if n := missingLines(held.String(), got); n > 0 {
				t.Errorf("%s: marker %q claims %d lines the model does not hold", name, m[0], n)
			}
		}
	}
}

// TestClaudeCode plays the script on the real Claude Code with and
// without omni, with the tools it offers by default.
func TestClaudeCode(t *testing.T) {
	t.Parallel()
	claude := cliPath(t, "claude-code", claudeSpec, claudeRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return claudeRun(t, claude, withOmni) })
	checkRead(t, with, without, hostFacts{
		exitText:   func(c int) string { return fmt.Sprintf("Exit code %d", c) },
		sub:        true,
		compaction: true,
	})
	// grep through ugrep: the first search whole, its repeat folded.
	if g := with["grep1"]; !strings.Contains(without["grep1"], "big line 015: config_value_15") || missingLines(g, without["grep1"]) > 0 {
		t.Errorf("grep1: want every line ugrep printed (%d chars without omni):\n%s\nwith omni:\n%s", len(without["grep1"]), tail(without["grep1"], 600), tail(g, 600))
	}
	if g := with["grep2"]; !handleRe.MatchString(g) || len(g) >= len(with["grep1"])/2 {
		t.Errorf("grep2: want the repeated search folded, the model read %d chars against %d:\n%s", len(g), len(with["grep1"]), tail(g, 600))
	}
	if with["find1"] != without["find1"] || !strings.Contains(without["find1"], "big.txt") {
		t.Errorf("find1: want bfs's output as is:\n%q\nwithout omni:\n%q", with["find1"], without["find1"])
	}
	// Two calls in one turn: the model holds the text once, whole, beside
	// at most a marker for the other.
	par := strings.TrimSuffix(with["par1"]+with["par2"], "\n")
	want := strings.ReplaceAll("par "+strings.TrimSuffix(srcText, "\n"), "\n", "\npar ")
	if missingLines(par, want) > 0 || without["par1"] == "" {
		t.Errorf("par1, par2: the model does not hold the command's lines (%d missing):\n%s\n---\n%s", missingLines(par, want), tail(with["par1"], 400), tail(with["par2"], 400))
	}
	t.Logf("parallel calls: %d and %d chars with omni, %d and %d without", len(with["par1"]), len(with["par2"]), len(without["par1"]), len(without["par2"]))
	report(t, "Claude Code "+claudeSpec, with, without)
}

// TestClaudeCodeMCP plays omni's MCP tools on the real Claude Code, as
// `omni init --claude` registers the server, with omni_run asked for
// (OMNI_MCP_TOOLS): the model calls mcp__omni__omni_run and
// mcp__omni__omni_retrieve directly.
func TestClaudeCodeMCP(t *testing.T) {
	t.Parallel()
	claude := cliPath(t, "claude-code", claudeSpec, claudeRel)
	s := newSandbox(t)
	m := claudeMock(t, s.project)
	s.omniInit("--claude")
	env := []string{
		"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1", "OMNI_MCP_TOOLS=omni_run",
	}
	s.run(runTimeout, env, claude, "-p", tagMCP+": run the MCP script.", "--dangerously-skip-permissions",
		"--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5")
	all := map[string]string{}
	for _, r := range m.requests() {
		if r.Path == "/v1/messages" {
			_, res, _ := ccConversation(r.Body)
			for k, v := range res {
				all[k] = v
			}
		}
	}
	read := byName(all, ccID, mcpScript)
	if l := s.omniLog(); l != "" {
		t.Logf("omni.log:\n%s", tail(l, 2000))
	}
	get := func(name string) string {
		t.Helper()
		r, ok := read[name]
		if !ok {
			t.Fatalf("%s: the model never read a result (steps read: %v)", name, keys(read))
		}
		return r
	}
	if r := get("mrun1"); !strings.HasPrefix(r, "Exit code 0\n") || missingLines(r, bigText) > 0 {
		t.Errorf("mrun1: want exit code 0 and big.txt whole:\n%s", tail(r, 600))
	}
	if r := get("mrun2"); !strings.HasPrefix(r, "Exit code 0\n") || !handleRe.MatchString(r) || len(r) > len(read["mrun1"])/2 {
		t.Errorf("mrun2: want the repeat folded to a marker with a handle (%d chars against %d):\n%s", len(r), len(read["mrun1"]), tail(r, 600))
	}
	// A failing run through omni_run (the exec door) folds the lines this
	// reader was shown already (never a failure line): whole, or its
	// repeated lines behind a session marker (checkClaims checks it).
	if r := get("mfail"); !strings.HasPrefix(r, fmt.Sprintf("Exit code %d\n", exitFail)) ||
		(missingLines(r, bigText) > 0 && !strings.Contains(r, "lines already shown, omni retrieve")) || strings.Contains(r, "not shown here") {
		t.Errorf("mfail: want exit code %d and the output whole or folded as already shown (%d lines missing):\n%s", exitFail, missingLines(r, bigText), tail(r, 1500))
	}
	// Claude Code appends a <system-reminder> block to an MCP result.
	if r := get("mretrieve"); !strings.HasPrefix(r, bigText) {
		t.Errorf("mretrieve: want big.txt's exact %d bytes, the model read %d:\n%s", len(bigText), len(r), tail(r, 600))
	}
	if r := get("bashsrc"); missingLines(r, srcText) > 0 {
		t.Errorf("bashsrc: want src.txt whole:\n%s", tail(r, 600))
	}
	if r := get("mrunsrc"); !strings.Contains(r, "[OMNI:") || len(r) > len(srcText)/2 {
		t.Errorf("mrunsrc: want the file the hook delivered folded in omni_run (one reader: the session):\n%s", tail(r, 600))
	}
	s.checkClaims(read, stepOrder(mcpScript))
	t.Logf("Claude Code MCP: omni_run read %d chars for cat big.txt, %d for its repeat", len(read["mrun1"]), len(read["mrun2"]))
}
