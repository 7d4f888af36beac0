package hostsetup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCodexTOMLControlCharacters: a binary path with a control character
// (a newline, an escape, DEL: any byte a Linux path may hold) is written
// into Codex's config.toml as a TOML escape, so the file still parses
// (Codex reads it at start; a file that does not parse stops Codex), and
// uninstall gives the user's file back.
func TestCodexTOMLControlCharacters(t *testing.T) {
	for _, dir := range []string{"two\nlines", "cr\rx", "esc\x1b[0m", "del\x7f", "tab\tx", "nul\x01"} {
		o := linkOptions(t, false)
		o.GOOS, o.Omni = "linux", "/opt/"+dir+"/omni"
		p := filepath.Join(o.CodexHome, "config.toml")
		orig := []byte("# mine\nmodel = \"x\"\n")
		writeCodex(t, p, string(orig))
		if err := Run(io.Discard, []Host{Codex}, o, true, false, false); err != nil {
			t.Errorf("%q: init: %v", dir, err)
			continue
		}
		b, _ := os.ReadFile(p)
		if _, err := tomlTables(b); err != nil {
			t.Errorf("%q: init wrote a config.toml that does not parse: %v\n%s", dir, err, b)
			continue
		}
		if !Registered(Codex, o) {
			t.Errorf("%q: not registered after init", dir)
		}
		if err := Run(io.Discard, []Host{Codex}, o, false, false, false); err != nil {
			t.Errorf("%q: uninstall: %v", dir, err)
			continue
		}
		if back, _ := os.ReadFile(p); !bytes.Equal(back, orig) {
			t.Errorf("%q: uninstall left\n%s", dir, back)
		}
	}
}
