package hostsetup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitRoundTripHostilePaths: for every system and every host with a
// hook or MCP file, init under a hostile binary path (each of
// hostileDirs) into a file the user already had, with comments, is
// recognised by doctor as current, and uninstall gives the file's bytes
// back exactly; a path the host cannot run is refused with the file
// untouched.
func TestInitRoundTripHostilePaths(t *testing.T) {
	orig := []byte("{\n  // kept\n  \"model\": \"x\"\n}\n")
	for _, goos := range []string{"linux", "windows"} {
		for _, dir := range hostileDirs {
			omni := "/opt/" + dir + "/omni"
			if goos == "windows" {
				if strings.ContainsAny(dir, "\"<>|?*\n\t") {
					continue
				}
				omni = `C:\opt\` + dir + `\omni.exe`
			}
			for _, h := range []Host{Claude, Codex, Gemini, Copilot, Cursor, Droid} {
				o := linkOptions(t, false)
				o.GOOS, o.Omni = goos, omni
				hookPath, mcpPath := hostPaths(h, o)
				var paths []string
				for _, p := range []string{hookPath, mcpPath} {
					if p == "" || strings.HasSuffix(p, ".toml") {
						continue
					}
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, orig, 0o644); err != nil {
						t.Fatal(err)
					}
					paths = append(paths, p)
				}
				var out bytes.Buffer
				if err := Run(&out, []Host{h}, o, true, false, false); err != nil {
					t.Errorf("%s %s %q: init: %v", goos, h, omni, err)
					continue
				}
				if strings.Contains(out.String(), "left out") {
					continue
				}
				for _, kind := range []string{"hooks", "mcp"} {
					if st, _ := inspectPart(h, o, kind); st == "stale" {
						t.Errorf("%s %s %q: doctor reads the %s as stale:\n%s", goos, h, omni, kind, out.String())
					}
				}
				if err := Run(io.Discard, []Host{h}, o, false, false, false); err != nil {
					t.Fatal(err)
				}
				for _, p := range paths {
					if back, _ := os.ReadFile(p); !bytes.Equal(back, orig) {
						t.Errorf("%s %s %q: uninstall left %s as\n%s", goos, h, omni, p, back)
					}
				}
			}
		}
	}
}
