package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// cursorHookEvents are the event keys Cursor's hooks.json accepts (its
// hooks documentation; any other key rejects the whole file).
var cursorHookEvents = map[string]bool{
	"beforeShellExecution": true, "beforeMCPExecution": true, "afterShellExecution": true, "afterMCPExecution": true,
	"beforeReadFile": true, "afterFileEdit": true, "beforeTabFileRead": true, "afterTabFileEdit": true, "stop": true,
	"beforeSubmitPrompt": true, "afterAgentResponse": true, "afterAgentThought": true, "sessionStart": true, "sessionEnd": true,
	"preCompact": true, "subagentStart": true, "subagentStop": true, "preToolUse": true, "postToolUse": true,
	"postToolUseFailure": true, "workspaceOpen": true,
}

// testHome makes a home with an executable omni and omni-hook beside it.
func testHome(t *testing.T) Options {
	t.Helper()
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "omni")
	for _, b := range []string{bin, filepath.Join(home, "bin", HookBinaryName)} {
		writeCodex(t, b, "#!/bin/sh\n")
		if err := os.Chmod(b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Options{Omni: bin, Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex")}
}

// checkCursorHooks asserts a hooks.json Cursor would load: "version" 1,
// only known event keys, omni's postToolUse for MCP tools and preCompact,
// each running omni-hook with the cursor argument.
func checkCursorHooks(t *testing.T, b []byte, hookBin string) {
	t.Helper()
	v, err := DecodeJSONC(b)
	if err != nil {
		t.Fatal(err)
	}
	root := v.(map[string]any)
	if root["version"] != float64(1) {
		t.Fatalf("no version 1:\n%s", b)
	}
	var keys []string
	for k := range root["hooks"].(map[string]any) {
		if !cursorHookEvents[k] {
			t.Fatalf("event key %q would make Cursor reject the file:\n%s", k, b)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "postToolUse,preCompact" {
		t.Fatalf("events %v:\n%s", keys, b)
	}
	post := root["hooks"].(map[string]any)["postToolUse"].([]any)[0].(map[string]any)
	if post["matcher"] != "^MCP:" || post["command"] != hookBin+" cursor" {
		t.Fatalf("postToolUse entry %v", post)
	}
}

func TestCursorInitDoctorUninstall(t *testing.T) {
	for _, project := range []bool{false, true} {
		o := testHome(t)
		dir := filepath.Join(o.Home, ".cursor")
		if project {
			o.Project = filepath.Join(o.Home, "repo")
			if err := os.MkdirAll(o.Project, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(o.Project, 0o755); err != nil {
				t.Fatal(err)
			}
			dir = filepath.Join(o.Project, ".cursor")
		}
		// The user's own hooks.json and mcp.json come back byte for byte.
		userHooks := "{\n  // mine\n  \"version\": 1,\n  \"hooks\": {\"afterFileEdit\": [{\"command\": \"./fmt.sh\"}]}\n}\n"
		writeCodex(t, filepath.Join(dir, "hooks.json"), userHooks)
		var w bytes.Buffer
		if err := Run(&w, []Host{Cursor}, o, true, false, false); err != nil {
			t.Fatal(err)
		}
		hooks, _ := os.ReadFile(filepath.Join(dir, "hooks.json"))
		if !strings.Contains(string(hooks), "./fmt.sh") || !strings.Contains(string(hooks), "// mine") {
			t.Fatalf("the user's entry was lost:\n%s", hooks)
		}
		v, _ := DecodeJSONC(hooks)
		if len(v.(map[string]any)["hooks"].(map[string]any)) != 3 {
			t.Fatalf("hooks:\n%s", hooks)
		}
		delete(v.(map[string]any)["hooks"].(map[string]any), "afterFileEdit")
		mcp, err := os.ReadFile(filepath.Join(dir, "mcp.json"))
		if err != nil || !strings.Contains(string(mcp), `"mcpServers"`) || !strings.Contains(string(mcp), o.Omni) {
			t.Fatalf("mcp.json: %s %v", mcp, err)
		}
		// A new hooks.json is what Cursor loads.
		o2 := testHome(t)
		if project {
			o2.Project = filepath.Join(o2.Home, "repo")
			if err := os.MkdirAll(o2.Project, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := Run(&w, []Host{Cursor}, o2, true, false, false); err != nil {
			t.Fatal(err)
		}
		fresh, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(o2.Omni)), map[bool]string{false: ".cursor", true: "repo/.cursor"}[project], "hooks.json"))
		checkCursorHooks(t, fresh, filepath.Join(filepath.Dir(o2.Omni), HookBinaryName))
		// Again: nothing changes.
		w.Reset()
		if err := Run(&w, []Host{Cursor}, o, true, false, false); err != nil || strings.Contains(w.String(), "updated") {
			t.Fatalf("second init changed something:\n%s %v", w.String(), err)
		}
		var problems []string
		rows, _ := Check([]Options{o}, func(f string, a ...any) { problems = append(problems, f) })
		var row HostStatus
		for _, r := range rows {
			if r.Host == "Cursor" {
				row = r
			}
		}
		if row.Tier != "MCP-tools" || row.Hooks == "" || row.MCP == "" || len(problems) != 0 {
			t.Fatalf("doctor row %+v, problems %q", row, problems)
		}
		// Uninstall: the original bytes, and no mcp.json omni created.
		if err := Run(&w, []Host{Cursor}, o, false, false, false); err != nil {
			t.Fatal(err)
		}
		if back, _ := os.ReadFile(filepath.Join(dir, "hooks.json")); string(back) != userHooks {
			t.Fatalf("uninstall did not give the bytes back:\n%s", back)
		}
		if _, err := os.Stat(filepath.Join(dir, "mcp.json")); !os.IsNotExist(err) {
			t.Fatalf("uninstall left the mcp.json omni created: %v", err)
		}
	}
}

func TestDroidInitUninstall(t *testing.T) {
	o := testHome(t)
	var w bytes.Buffer
	if err := Run(&w, []Host{Droid}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.Home, ".factory", "mcp.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := DecodeJSONC(b)
	srv := v.(map[string]any)["mcpServers"].(map[string]any)["omni"].(map[string]any)
	if srv["command"] != o.Omni || srv["env"].(map[string]any)["OMNI_MCP_TOOLS"] != "omni_run" {
		t.Fatalf("mcp.json:\n%s", b)
	}
	if entries, _ := os.ReadDir(filepath.Join(o.Home, ".factory")); len(entries) != 1 {
		t.Fatalf("omni init --droid wrote more than mcp.json: %v", entries)
	}
	if err := Run(&w, []Host{Droid}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s", path)
	}
}

// omni init --copilot --project writes the repository's
// .github/hooks/omni.json: version 1, the two command hooks running omni
// from PATH (a committed file names no machine's path).
func TestCopilotProjectHooks(t *testing.T) {
	o := testHome(t)
	o.Project = filepath.Join(o.Home, "repo")
	if err := os.MkdirAll(o.Project, 0o755); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := Run(&w, []Host{Copilot}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.Project, ".github", "hooks", "omni.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "hooks": {
    "postToolUse": [
      {
        "type": "command",
        "bash": "omni hook",
        "timeoutSec": 30
      }
    ],
    "preCompact": [
      {
        "type": "command",
        "bash": "omni hook",
        "timeoutSec": 10
      }
    ]
  }
}
`
	if string(b) != want {
		t.Fatalf("omni.json:\n%s", b)
	}
	if !Registered(Copilot, o) {
		t.Fatal("not registered after init")
	}
	if err := Run(&w, []Host{Copilot}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s", path)
	}
}
