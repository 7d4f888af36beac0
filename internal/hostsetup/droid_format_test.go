package hostsetup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDroidOddFormatting: a ~/.factory/mcp.json the user already had,
// in any of the shapes a hand-edited file takes (CRLF, a BOM, comments,
// tabs, a trailing comma, another server), comes back byte for byte
// after init and uninstall; when the user changed another server in
// between, uninstall takes out omni's entry alone and keeps that change
// and the file's comments. A file omni cannot parse (a BOM, trailing
// commas) is refused with nothing changed.
func TestDroidOddFormatting(t *testing.T) {
	for name, orig := range map[string]string{
		"crlf":     "{\r\n  \"mcpServers\": {\r\n    \"gh\": {\"command\": \"gh-mcp\"}\r\n  }\r\n}\r\n",
		"bom":      "\ufeff{\"mcpServers\":{\"gh\":{\"command\":\"gh-mcp\"}}}",
		"comment":  "// my servers\n{\n\t\"mcpServers\": { /* gh */ \"gh\": {\"command\": \"gh-mcp\"} }\n}\n",
		"trailing": "{\"mcpServers\": {\"gh\": {\"command\": \"gh-mcp\",},},}",
		"empty":    "",
		"noeol":    "{}",
	} {
		t.Run(name, func(t *testing.T) {
			o := testHome(t)
			p := filepath.Join(o.Home, ".factory", "mcp.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			var w bytes.Buffer
			if err := Run(&w, []Host{Droid}, o, true, false, false); err != nil {
				t.Logf("init refused: %v", err)
				if got, _ := os.ReadFile(p); string(got) != orig {
					t.Fatalf("a refused init changed the file: %q", got)
				}
				return
			}
			if !Registered(Droid, o) {
				t.Errorf("not registered after init:\n%s", w.String())
			}
			if err := Run(io.Discard, []Host{Droid}, o, false, false, false); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != orig {
				t.Errorf("uninstall left %q, want %q", got, orig)
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v after uninstall, want 0600", fi.Mode().Perm())
			}
			// init, the user edits another server, uninstall
			if err := Run(io.Discard, []Host{Droid}, o, true, false, false); err != nil {
				t.Fatal(err)
			}
			cur, _ := os.ReadFile(p)
			edited := bytes.Replace(cur, []byte("gh-mcp"), []byte("gh-mcp2"), 1)
			if !bytes.Contains(cur, []byte("gh-mcp")) {
				edited = append(bytes.TrimRight(cur, "\r\n"), []byte("\n// mine\n")...)
			}
			if err := os.WriteFile(p, edited, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := Run(io.Discard, []Host{Droid}, o, false, false, false); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(p)
			if bytes.Contains(got, []byte(`"omni"`)) {
				t.Errorf("omni's entry stayed: %s", got)
			}
			for _, keep := range []string{"gh-mcp2", "// my servers", "/* gh */", "// mine"} {
				if bytes.Contains(edited, []byte(keep)) && !bytes.Contains(got, []byte(keep)) {
					t.Errorf("uninstall lost the user's %q:\n%s", keep, got)
				}
			}
			if strings.HasPrefix(orig, "\ufeff") && !strings.HasPrefix(string(got), "\ufeff") {
				t.Errorf("BOM lost: %q", got)
			}
		})
	}
}
