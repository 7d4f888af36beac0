package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Kilo Code gets omni's OpenCode plugin shim in its own plugin directory
// (global and --project), no MCP server, and uninstall removes the file.
func TestKiloRunAndCheck(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "omni")
	writeCodex(t, bin, "#!/bin/sh\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Omni: bin, Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex")}
	if Present(Kilo, o) {
		t.Fatal("present before its directory exists")
	}
	var w bytes.Buffer
	if err := Run(&w, []Host{Kilo}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(home, ".config", "kilo", "plugins", "omni.js")
	if b, err := os.ReadFile(plugin); err != nil || !strings.Contains(string(b), bin) || !strings.Contains(string(b), "tool.execute.after") {
		t.Fatalf("plugin: %v\n%s\n%s", err, b, w.String())
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "opencode")); !os.IsNotExist(err) {
		t.Fatalf("init --kilo touched OpenCode's directory (%v)", err)
	}
	if !Present(Kilo, o) || !Registered(Kilo, o) {
		t.Fatal("not present or not registered after init")
	}
	var problems []string
	rows, _ := Check([]Options{o}, func(f string, a ...any) { problems = append(problems, f) })
	var row HostStatus
	for _, r := range rows {
		if r.Host == "Kilo Code" {
			row = r
		}
	}
	if row.Tier != "Plugin" || row.Hooks == "" || row.MCP != "" || len(problems) != 0 {
		t.Fatalf("doctor row %+v, problems %q", row, problems)
	}
	w.Reset()
	if err := Run(&w, []Host{Kilo}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(plugin); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s (%v):\n%s", plugin, err, w.String())
	}

	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p := o
	p.Project = proj
	if err := Run(&w, []Host{Kilo}, p, true, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(proj, ".kilo", "plugins", "omni.js")); err != nil {
		t.Fatalf("--project: %v\n%s", err, w.String())
	}
}
