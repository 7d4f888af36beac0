package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitNonUTF8BinaryPath: a Linux path may hold any byte but '/' and
// NUL, and JSON (every hook file, MCP registration and the plugin's
// string literal) cannot carry a byte that is not UTF-8: the encoder
// writes U+FFFD instead, naming another program. init must refuse such
// a path, never write a registration that runs something else.
func TestInitNonUTF8BinaryPath(t *testing.T) {
	for _, h := range []Host{Claude, Gemini, Kilo, Droid} {
		t.Run(string(h), func(t *testing.T) {
			home := t.TempDir()
			bin := filepath.Join(home, "b\xffin", "omni")
			for _, b := range []string{bin, filepath.Join(filepath.Dir(bin), HookBinaryName)} {
				writeCodex(t, b, "#!/bin/sh\n")
				if err := os.Chmod(b, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			o := Options{Omni: bin, Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex")}
			var w bytes.Buffer
			err := Run(&w, []Host{h}, o, true, false, false)
			var written []string
			_ = filepath.Walk(home, func(p string, fi os.FileInfo, _ error) error {
				if fi != nil && fi.Mode().IsRegular() && !strings.Contains(p, "b\xffin") {
					b, _ := os.ReadFile(p)
					if strings.Contains(string(b), "\ufffd") || strings.Contains(string(b), `\ufffd`) {
						written = append(written, p)
					}
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("init (err %v) wrote a path that names another program into %v", err, written)
			}
			if err == nil {
				t.Errorf("init accepted a binary path JSON cannot name: %s", w.String())
			}
		})
	}
}
