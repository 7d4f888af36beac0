package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApplyCopilotHooks(t *testing.T) {
	const omni = "/opt/bin/omni"
	// A new file: the one handler, under hooks.postToolUse.
	out, err := applyCopilotHooks(nil, omni, true)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := DecodeJSONC(out)
	hs := v.(map[string]any)["hooks"].(map[string]any)["postToolUse"].([]any)
	h := hs[0].(map[string]any)
	if len(hs) != 1 || h["type"] != "command" || h["bash"] != omni+" hook" || h["timeoutSec"] != float64(30) {
		t.Fatalf("new file:\n%s", out)
	}
	if pc := v.(map[string]any)["hooks"].(map[string]any)["preCompact"].([]any); len(pc) != 1 || pc[0].(map[string]any)["timeoutSec"] != float64(10) {
		t.Fatalf("new file, preCompact:\n%s", out)
	}
	// Again: nothing changes.
	if again, err := applyCopilotHooks(out, omni, true); err != nil || !bytes.Equal(again, out) {
		t.Fatalf("second install changed the file:\n%s", again)
	}
	// A user's file: other keys and handlers kept, an older omni entry
	// (another path, another event) replaced, comments kept.
	user := `{
  // mine
  "model": "gpt-5",
  "hooks": {
    "postToolUse": [{"type": "command", "bash": "./audit.sh"}, {"type": "command", "bash": "/old/omni hook", "timeoutSec": 5}],
    "sessionStart": [{"type": "command", "bash": "/old/omni hook"}]
  }
}
`
	out, err = applyCopilotHooks([]byte(user), omni, true)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.Contains(s, "// mine") || !strings.Contains(s, `"./audit.sh"`) || strings.Contains(s, "/old/omni") ||
		strings.Count(s, omni+" hook") != 2 || strings.Contains(s, "sessionStart") {
		t.Fatalf("user file:\n%s", s)
	}
	// Uninstall: omni's handler goes, the user's stays.
	back, err := applyCopilotHooks(out, omni, false)
	if err != nil || strings.Contains(string(back), "omni") || !strings.Contains(string(back), `"./audit.sh"`) {
		t.Fatalf("uninstall:\n%s (%v)", back, err)
	}
	// Uninstall of a file holding only omni's handler leaves no hooks key.
	only, _ := applyCopilotHooks([]byte(`{"theme": "dark"}`), omni, true)
	back, _ = applyCopilotHooks(only, omni, false)
	if strings.Contains(string(back), "hooks") || !strings.Contains(string(back), "dark") {
		t.Fatalf("uninstall of omni's only handler:\n%s", back)
	}
	if _, err := applyCopilotHooks([]byte(`{"hooks": []}`), omni, true); err == nil {
		t.Fatal("hooks that is not an object was accepted")
	}
}

func TestCopilotRunAndCheck(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "omni")
	writeCodex(t, bin, "#!/bin/sh\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Omni: bin, Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex"),
		CopilotHome: filepath.Join(home, "cphome")}
	if Present(Copilot, o) {
		t.Fatal("present before its directory exists")
	}
	var w bytes.Buffer
	if err := Run(&w, []Host{Copilot}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(home, "cphome", "settings.json")
	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), bin+" hook") {
		t.Fatalf("settings.json: %s %v\n%s", b, err, w.String())
	}
	if !Present(Copilot, o) || !Registered(Copilot, o) {
		t.Fatal("not present or not registered after init")
	}
	var problems []string
	rows, _ := Check([]Options{o}, func(f string, a ...any) { problems = append(problems, f) })
	var row HostStatus
	for _, r := range rows {
		if r.Host == "Copilot CLI" {
			row = r
		}
	}
	if row.Tier != "Full" || row.Hooks == "" || row.MCP != "" || len(problems) != 0 {
		t.Fatalf("doctor row %+v, problems %q", row, problems)
	}
	w.Reset()
	if err := Run(&w, []Host{Copilot}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s (%v):\n%s", settings, err, w.String())
	}
}
