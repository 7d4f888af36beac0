package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClineRunAndCheck(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "omni")
	writeCodex(t, bin, "#!/bin/sh\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Omni: bin, Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex"),
		ClineDir: filepath.Join(home, "clinedir")}
	if Present(Cline, o) {
		t.Fatal("present before its directory exists")
	}
	var w bytes.Buffer
	if err := Run(&w, []Host{Cline}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(home, "clinedir", "plugins", "omni.js")
	b, err := os.ReadFile(plugin)
	if err != nil || !strings.HasPrefix(string(b), ClinePluginMarker) || !strings.Contains(string(b), `process.env.OMNI_BIN || "`+bin+`"`) {
		t.Fatalf("plugin: %v\n%.300s\n%s", err, b, w.String())
	}
	if !Present(Cline, o) || !Registered(Cline, o) {
		t.Fatal("not present or not registered after init")
	}
	var problems []string
	rows, _ := Check([]Options{o}, func(f string, a ...any) { problems = append(problems, f) })
	var row HostStatus
	for _, r := range rows {
		if r.Host == "Cline CLI" {
			row = r
		}
	}
	if row.Tier != "Plugin" || row.Hooks == "" || row.MCP != "" || len(problems) != 0 {
		t.Fatalf("doctor row %+v, problems %q", row, problems)
	}
	// A second init changes nothing.
	if err := Run(&w, []Host{Cline}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(plugin); !bytes.Equal(b, b2) {
		t.Fatal("a second init changed the plugin")
	}
	w.Reset()
	if err := Run(&w, []Host{Cline}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(plugin); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s (%v):\n%s", plugin, err, w.String())
	}
	// A plugin file omni did not write is never overwritten or removed.
	writeCodex(t, plugin, "export default {};\n")
	if err := Run(&w, []Host{Cline}, o, true, false, false); err == nil {
		t.Fatal("init overwrote a plugin omni did not write")
	}
	if err := Run(&w, []Host{Cline}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plugin); string(b) != "export default {};\n" {
		t.Fatalf("uninstall touched a plugin omni did not write: %q", b)
	}
}
