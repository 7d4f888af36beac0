package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
)

// GitHub Copilot CLI 1.0.102 (docs/HOSTS.md): the native binary of the
// platform package, `copilot -p`, against a mock of the Chat Completions
// API (BYOK: COPILOT_PROVIDER_BASE_URL). What the model read is the tool
// messages of later requests. Copilot has no hook event for a compaction,
// so the script plays none.
const (
	copilotSpec = "@github/copilot@1.0.102"
	copilotRel  = "node_modules/@github/copilot-linux-x64/copilot"
)

func cpID(name string) string { return "call_e2e_" + name }

// copilotMock serves POST /v1/chat/completions: the main script (file
// reads with view, commands with bash, the subagent with task) and the
// subagent's.
func copilotMock(t *testing.T, project string) *mock {
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
		var st *step
		if tag := findTag(text); tag == tagMain || tag == tagSub {
			st = nextStep(scriptFor(tag, true), results, cpID)
		}
		if st == nil {
			ocChunks(w, nil, "E2E done.", 1000)
			return
		}
		arg := st.arg(byName(results, cpID, mainScript(true), subScript))
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
		ocChunks(w, &[3]string{cpID(st.name), name, js(input)}, "", 1000)
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
		"COPILOT_MODEL=gpt-4.1", "COPILOT_AUTO_UPDATE=false", "COPILOT_OFFLINE=true"}
	s.run(runTimeout, env, copilot, "-p", tagMain+": run the script.", "--allow-all", "--disable-client-telemetry")
	all := map[string]string{}
	for _, r := range m.requests() {
		_, _, res, _, _ := ocConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, cpID, mainScript(true), subScript)
	if withOmni {
		// The subagent's reader is its own: its claims are checked apart.
		s.checkClaims(read, stepOrder(mainScript(true)))
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
		exitText:  func(c int) string { return fmt.Sprintf("completed with exit code %d>", c) },
		sub:       true,
		normalize: func(s string) string { return cpShellID.ReplaceAllLiteralString(s, "<shellId: N ") },
	})
	report(t, "Copilot CLI "+copilotSpec, with, without)
}
