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

// kiloEnv turns off what Kilo Code reaches the network for at start and at
// exit (docs/HOSTS.md measures each): its PostHog telemetry (a shutdown
// that waits about 3 s for a flush that cannot happen), the model lists,
// updates, sharing, session ingest, presence, LSP downloads, and the
// features a script run does not use.
var kiloEnv = []string{
	"KILO_TELEMETRY_LEVEL=off", "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_SHARE=1",
	"KILO_DISABLE_SESSION_INGEST=1", "KILO_DISABLE_PRESENCE=1", "KILO_DISABLE_LSP_DOWNLOAD=1", "KILO_DISABLE_CLAUDE_CODE=1",
	"KILO_DISABLE_DEFAULT_PLUGINS=1", "KILO_DISABLE_EXTERNAL_SKILLS=1", "KILO_DISABLE_CODEBASE_INDEXING=1",
	"KILO_EXPERIMENTAL_DISABLE_FILEWATCHER=1", "KILO_DISABLE_EMBEDDED_WEB_UI=1", "KILO_NO_DAEMON=1",
}

// kiloRun plays the script on Kilo Code in a fresh sandbox.
func kiloRun(t *testing.T, kilo string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := openCodeMock(t, s.project)
	cfgDir := filepath.Join(s.home, ".config", "kilo")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// enabled_providers: without it Kilo lists the models of its own
	// provider (kilo) before the first request and waits about 5 s for a
	// network error; snapshot: no git snapshot of the project per step.
	cfg := map[string]any{
		"model": "mock/e2e", "small_model": "mock/e2e",
		"autoupdate": false, "share": "disabled", "snapshot": false,
		"enabled_providers": []string{"mock"},
		"provider": map[string]any{"mock": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "e2e mock",
			"options": map[string]any{"baseURL": m.URL + "/v1", "apiKey": "sk-e2e"},
			"models":  map[string]any{"e2e": map[string]any{"name": "e2e", "limit": map[string]int{"context": 200000, "output": 8000}}},
		}},
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "kilo.json"), []byte(js(cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	prepareKiloConfig(t, cfgDir)
	if withOmni {
		s.omniInit("--kilo")
	}
	s.run(runTimeout, kiloEnv, kilo, "run", "--format", "json", "--auto", tagMain+": run the script.")
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

// prepareKiloConfig makes Kilo Code's config directory look as if its
// plugin API were installed there. Kilo 7.7.7, finding a local plugin
// (omni's shim), otherwise installs @kilocode/plugin@7.7.7 into that
// directory from npm and loads no plugin, so sends no request, until the
// install ends: that version was never published, so the install always
// fails, and where the registry does not answer it fails only after npm's
// fetch timeout, 5 minutes a try (docs/HOSTS.md). Kilo skips the install
// when node_modules exists and package-lock.json lists every dependency of
// package.json. The shim imports nothing from the plugin API.
func prepareKiloConfig(t *testing.T, cfgDir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(cfgDir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"package.json":      `{"dependencies":{"@kilocode/plugin":"7.7.7"}}`,
		"package-lock.json": `{"lockfileVersion":3,"packages":{"":{"dependencies":{"@kilocode/plugin":"7.7.7"}}}}`,
	} {
		if err := os.WriteFile(filepath.Join(cfgDir, name), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKilo plays the script on the real Kilo Code with omni. The run
// without omni is left out unless OMNI_E2E_BASELINE is set: Kilo's tools,
// frames and tool results are OpenCode's (docs/HOSTS.md), so it would only
// repeat TestOpenCode's baseline at about 20 s of CPU. What checkRead needs
// from it is the failing command as the model reads it unshortened: Kilo,
// like OpenCode, never shows the model an exit status, so `cat big.txt;
// exit 3` reads exactly as the first `cat big.txt` did (14,892 characters
// each, with and without omni, measured 2026-12-02).
func TestKilo(t *testing.T) {
	t.Parallel()
	kilo := cliPath(t, "kilo", kiloSpec, kiloRel)
	play := func(t *testing.T, withOmni bool) map[string]string { return kiloRun(t, kilo, withOmni) }
	facts := hostFacts{sub: true, compaction: true,
		readFrame: []string{"src.txt</path>", "(End of file - total 120 lines)"}}
	if os.Getenv("OMNI_E2E_BASELINE") != "" {
		with, without := runBoth(t, play)
		checkRead(t, with, without, facts)
		report(t, "Kilo Code "+kiloSpec, with, without)
		return
	}
	var with map[string]string
	t.Run("with", func(t *testing.T) { with = play(t, true) })
	checkRead(t, with, map[string]string{"fail1": with["cat1"], "fail2": with["cat1"]}, facts)
}
