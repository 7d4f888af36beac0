package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Factory Droid 0.225.2 (docs/HOSTS.md "Factory Droid"): the native binary
// of @factory/cli-linux-x64 (the @factory/cli 0.225.1 wrapper names a
// platform package 0.225.1 that was never published), `droid exec`
// against a mock Chat Completions API reached as a BYOK custom model
// (customModels in ~/.factory/settings.json, provider
// generic-chat-completion-api): no Factory login. FACTORY_AIRGAP_ENABLED,
// its air-gapped mode, makes a one-prompt run take 1.2 s wall instead of
// 7.3 s (2026-12-02). Droid's PostToolUse cannot replace a tool's output, so `omni init
// --droid` registers the MCP server with omni_run only; Droid defers MCP
// tools, named omni___<tool>, behind its ToolSearch tool.
const (
	droidSpec = "@factory/cli-linux-x64@0.225.2"
	droidRel  = "node_modules/@factory/cli-linux-x64/bin/droid"
)

// droidSteps are the MCP steps Droid plays: a command run twice and a
// failing one through omni_run, then a file shown by Droid's own Execute
// and run again through omni_run. No retrieve: under Droid omni_run never
// folds, so there is no handle to follow (TestDroid says why).
var droidSteps = []step{
	{"mrun1", "mcp_run", fixed("cat big.txt")},
	{"mrun2", "mcp_run", fixed("cat big.txt")},
	{"mfail", "mcp_run", fixed(failCmd)},
	{"bashsrc", "shell", fixed("cat src.txt")},
	{"mrunsrc", "mcp_run", fixed("cat src.txt")},
}

// droidScript is droidSteps as Droid plays them: with omni, the model
// first loads the deferred MCP tools; without omni, every omni_run step
// runs the same command through Droid's own Execute tool.
func droidScript(withOmni bool) []step {
	if !withOmni {
		return droidSteps
	}
	return append([]step{{"load", "toolsearch", fixed("select:omni___omni_run")}}, droidSteps...)
}

// droidMock serves POST /v1/chat/completions for one run.
func droidMock(t *testing.T, withOmni bool) *mock {
	script := droidScript(withOmni)
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("droid mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, _, results, tools, err := ocConversation(body)
		if err != nil {
			t.Errorf("droid mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		var st *step
		if tools && findTag(text) == tagMCP {
			st = nextStep(script, results, ocID)
		}
		if st == nil {
			ocChunks(w, nil, "E2E done.", 1000)
			return
		}
		arg := st.arg(byName(results, ocID, script))
		execute := func(cmd string) (string, any) {
			return "Execute", map[string]any{"command": cmd, "summary": "e2e " + st.name, "riskLevelReason": "reads files of the project", "riskLevel": "low"}
		}
		var name string
		var input any
		switch {
		case st.kind == "toolsearch":
			name, input = "ToolSearch", map[string]any{"query": arg}
		case st.kind == "shell" || st.kind == "mcp_run" && !withOmni:
			name, input = execute(arg)
		case st.kind == "mcp_run":
			name, input = "omni___omni_run", map[string]any{"command": arg}
		}
		ocChunks(w, &[3]string{ocID(st.name), name, js(input)}, "", 1000)
	})
}

// droidRun plays droidScript on Droid in a fresh sandbox and returns
// what the model read, by step.
func droidRun(t *testing.T, droid string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := droidMock(t, withOmni)
	dir := filepath.Join(s.home, ".factory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{"customModels": []any{map[string]any{
		"model": "e2e", "displayName": "E2E mock", "baseUrl": m.URL + "/v1", "apiKey": "sk-e2e",
		"provider": "generic-chat-completion-api", "maxOutputTokens": 8000,
	}}}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(js(settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	if withOmni {
		s.omniInit("--droid")
	}
	env := []string{"FACTORY_AIRGAP_ENABLED=1", "FACTORY_DROID_AUTO_UPDATE_ENABLED=false", "FACTORY_DISABLE_KEYRING=1"}
	s.run(runTimeout, env, droid, "exec", "--skip-permissions-unsafe", "-m", "custom:e2e", tagMCP+": run the MCP script.")
	all := map[string]string{}
	for _, r := range m.requests() {
		_, _, res, _, _ := ocConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	read := byName(all, ocID, droidScript(withOmni))
	if withOmni {
		s.checkClaims(read, stepOrder(droidScript(true)))
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// TestDroid plays omni_run on the real Droid, as `omni init --droid`
// registers it, and the same commands through Droid's Execute without
// omni. It proves that Droid loads the server from ~/.factory/mcp.json
// with omni_run offered and that its model reads omni_run's text as omni
// wrote it; and what omni_run is there: Droid starts MCP servers with no
// session of its own in their environment (no OMNI_SESSION, no
// CLAUDE_CODE_SESSION_ID), so omni_run has no reader and claims nothing as
// shown: a repeat comes back whole, never folded, and a file Droid's own
// Execute showed is never claimed either. Droid's Execute keeps the first
// and last 30 lines of a long output ("[... N lines skipped ...]"), so the
// model reads more through omni_run than through Execute: report logs it.
func TestDroid(t *testing.T) {
	t.Parallel()
	droid := cliPath(t, "droid", droidSpec, droidRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return droidRun(t, droid, withOmni) })
	get := func(name string) string {
		t.Helper()
		r, ok := with[name]
		if !ok {
			t.Fatalf("%s: the model never read a result (steps read: %v)", name, keys(with))
		}
		return r
	}
	if r := get("load"); !strings.Contains(r, "omni___omni_run") {
		t.Errorf("load: ToolSearch did not load omni_run:\n%s", tail(r, 600))
	}
	for _, name := range []string{"mrun1", "mrun2"} {
		if r := get(name); !strings.HasPrefix(r, "Exit code 0\n") || missingLines(r, bigText) > 0 || strings.Contains(r, "[OMNI:") {
			t.Errorf("%s: want exit code 0 and big.txt whole, no marker (no reader, no claim):\n%s", name, tail(r, 600))
		}
	}
	if r := get("mfail"); !strings.HasPrefix(r, fmt.Sprintf("Exit code %d\n", exitFail)) || missingLines(r, bigText) > 0 || strings.Contains(r, "[OMNI:") {
		t.Errorf("mfail: want exit code %d and the output whole:\n%s", exitFail, tail(r, 1500))
	}
	// Execute is Droid's, untouched: the same text as without omni.
	if r := get("bashsrc"); r != without["bashsrc"] || missingLines(r, srcText) > 0 {
		t.Errorf("bashsrc: want Droid's own output of cat src.txt, as without omni:\n%s", tail(r, 600))
	}
	if r := get("mrunsrc"); missingLines(r, srcText) > 0 || strings.Contains(r, "[OMNI:") {
		t.Errorf("mrunsrc: want src.txt whole (omni never saw Droid's own Execute):\n%s", tail(r, 600))
	}
	if r := without["mrun1"]; !strings.Contains(r, "lines skipped") {
		t.Logf("Droid's Execute no longer cuts a 300-line output:\n%s", tail(r, 300))
	}
	delete(with, "load")
	report(t, "Droid "+droidSpec+" (omni_run against Execute)", with, without)
}
