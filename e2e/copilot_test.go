package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// GitHub Copilot CLI 1.0.102 (docs/HOSTS.md): the native binary of the
// platform package, `copilot -p`, against a mock of the Chat Completions
// API (BYOK: COPILOT_PROVIDER_BASE_URL). What the model read is the tool
// messages of later requests.
const (
	copilotSpec = "@github/copilot@1.0.102"
	copilotRel  = "node_modules/@github/copilot-linux-x64/copilot"
)

func cpID(name string) string { return "call_e2e_" + name }

// cpCompactPrompt is in the request Copilot CLI 1.0.102 sends to have the
// conversation summarised.
const cpCompactPrompt = "The history is being compacted"

// cpPromptLimit is the COPILOT_PROVIDER_MAX_PROMPT_TOKENS of the runs; the
// reply that gives the main script's last call reports nearly that many
// prompt tokens, so Copilot compacts.
const cpPromptLimit = 100000

// copilotMock serves POST /v1/chat/completions: the main script (file
// reads with view, commands with bash, the subagent with task), the
// subagent's, the compaction summary (tagged so the script after it
// plays) and the script after it. Copilot compacts in the background:
// until the conversation holds the summary, the main conversation gets
// harmless waits (sleep 1) instead of an end.
func copilotMock(t *testing.T, project string) *mock {
	var mu sync.Mutex
	full, waits := false, 0
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("copilot mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, _, results, _, err := ocConversation(body)
		if err != nil {
			t.Errorf("copilot mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		if strings.Contains(text, cpCompactPrompt) {
			ocChunks(w, nil, "<summary>"+tagAfter+": the script ran; run the rest.</summary>", 1000)
			return
		}
		tag := findTag(text)
		var st *step
		if tag != "" {
			st = nextStep(map[string][]step{tagMain: mainScript(true), tagSub: subScript, tagAfter: afterScript}[tag], results, cpID)
		}
		if st == nil {
			mu.Lock()
			wait := tag == tagMain && full && waits < 60
			waits++
			n := waits
			mu.Unlock()
			if wait {
				ocChunks(w, &[3]string{fmt.Sprintf("call_e2e_wait%d", n), "bash", js(map[string]any{"command": "sleep 1", "description": "wait"})}, "", 1000)
				return
			}
			ocChunks(w, nil, "E2E done.", 1000)
			return
		}
		arg := st.arg(byName(results, cpID, mainScript(true), subScript, afterScript))
		var name string
		var input any
		switch st.kind {
		case "read":
			name, input = "view", map[string]any{"path": filepath.Join(project, arg)}
		case "shell":
			name, input = "bash", map[string]any{"command": arg, "description": "e2e " + st.name}
		case "agent":
			name, input = "task", map[string]any{"name": "e2esub", "prompt": arg, "agent_type": "general-purpose",
				"description": "e2e subagent", "mode": "sync"}
		}
		tokens := 1000
		mu.Lock()
		if tag == tagMain && st.name == "retrieve" && !full {
			full, tokens = true, cpPromptLimit*95/100
		}
		mu.Unlock()
		ocChunks(w, &[3]string{cpID(st.name), name, js(input)}, "", tokens)
	})
}

// copilotRun plays the script on Copilot CLI in a fresh sandbox.
func copilotRun(t *testing.T, copilot string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := copilotMock(t, s.project)
	if withOmni {
		s.omniInit("--copilot")
	}
	env := []string{"COPILOT_PROVIDER_BASE_URL=" + m.URL + "/v1", "COPILOT_PROVIDER_API_KEY=sk-e2e",
		"COPILOT_MODEL=gpt-4.1", "COPILOT_AUTO_UPDATE=false", "COPILOT_OFFLINE=true",
		fmt.Sprintf("COPILOT_PROVIDER_MAX_PROMPT_TOKENS=%d", cpPromptLimit)}
	s.run(runTimeout, env, copilot, "-p", tagMain+": run the script.", "--allow-all", "--disable-client-telemetry")
	all := map[string]string{}
	for _, r := range m.requests() {
		_, _, res, _, _ := ocConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, cpID, mainScript(true), subScript, afterScript)
	if withOmni {
		// The subagent's reader is its own: its claims are checked apart.
		s.checkClaims(read, stepOrder(mainScript(true), afterScript))
		s.checkClaims(read, stepOrder(subScript))
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// cpShellID is the shell counter in Copilot's closing exit line.
var cpShellID = regexp.MustCompile(`<shellId: [^ >]+ `)

// TestCopilot plays the script on the real Copilot CLI with and without
// omni.
func TestCopilot(t *testing.T) {
	t.Parallel()
	copilot := cliPath(t, "copilot", copilotSpec, copilotRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return copilotRun(t, copilot, withOmni) })
	checkRead(t, with, without, hostFacts{
		exitText:   func(c int) string { return fmt.Sprintf("completed with exit code %d>", c) },
		sub:        true,
		compaction: true,
		normalize:  func(s string) string { return cpShellID.ReplaceAllLiteralString(s, "<shellId: N ") },
	})
	report(t, "Copilot CLI "+copilotSpec, with, without)
}
