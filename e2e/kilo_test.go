package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// Kilo Code 7.7.7 (docs/HOSTS.md): an OpenCode fork. The native binary of
// the platform package, `kilo run`, against the OpenCode mock (Chat
// Completions through an OpenAI-compatible provider); omni's OpenCode
// plugin shim is loaded from $XDG_CONFIG_HOME/kilo/plugins/. The npm
// package @kilocode/cli 7.8.1 names a platform binary that was never
// published; 7.7.7 is the newest release whose linux-x64 binary installs.
const (
	kiloSpec = "@kilocode/cli@7.7.7"
	kiloRel  = "node_modules/@kilocode/cli-linux-x64/bin/kilo"
)

// kiloRun plays the script on Kilo Code in a fresh sandbox.
func kiloRun(t *testing.T, kilo string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := openCodeMock(t, s.project)
	cfgDir := filepath.Join(s.home, ".config", "kilo")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"model": "mock/e2e", "small_model": "mock/e2e",
		"autoupdate": false, "share": "disabled",
		"provider": map[string]any{"mock": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "e2e mock",
			"options": map[string]any{"baseURL": m.URL + "/v1", "apiKey": "sk-e2e"},
			"models":  map[string]any{"e2e": map[string]any{"name": "e2e", "limit": map[string]int{"context": 200000, "output": 8000}}},
		}},
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "kilo.json"), []byte(js(cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	if withOmni {
		s.omniInit("--kilo")
	}
	s.run(runTimeout, nil, kilo, "run", "--format", "json", "--auto", tagMain+": run the script.")
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

// TestKilo plays the script on the real Kilo Code with and without omni.
func TestKilo(t *testing.T) {
	t.Parallel()
	kilo := cliPath(t, "kilo", kiloSpec, kiloRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return kiloRun(t, kilo, withOmni) })
	checkRead(t, with, without, hostFacts{sub: true, compaction: true,
		readFrame: []string{"src.txt</path>", "(End of file - total 120 lines)"}})
	report(t, "Kilo Code "+kiloSpec, with, without)
}
