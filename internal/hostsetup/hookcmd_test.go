package hostsetup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookCommandPerSystem: the command line each host's runner reads, for
// the binary paths users have on Linux, macOS and Windows (a space, an
// apostrophe, a percent sign); every line written reads back as omni's
// hook (uninstall and doctor), naming the program as written.
func TestHookCommandPerSystem(t *testing.T) {
	const (
		progFiles = `C:\Program Files\omni\omni.exe`
		goBin     = `C:\Users\a\go\bin\omni.exe`
	)
	for _, c := range []struct {
		goos string
		host Host
		omni string
		args []string
		want string // "" : the host cannot run it there
		prog string // the program the line names
	}{
		{"linux", Claude, "/usr/local/bin/omni", []string{"hook"}, "/usr/local/bin/omni hook", "/usr/local/bin/omni"},
		{"darwin", Claude, "/Users/a b/go/bin/omni", []string{"pretool"}, "'/Users/a b/go/bin/omni' pretool", "/Users/a b/go/bin/omni"},
		{"darwin", Gemini, "/Users/a b/go/bin/omni", []string{"hook"}, "'/Users/a b/go/bin/omni' hook", "/Users/a b/go/bin/omni"},
		{"darwin", Codex, "/Users/a b/go/bin/omni", []string{"hook"}, "'/Users/a b/go/bin/omni' hook", "/Users/a b/go/bin/omni"},
		{"darwin", Copilot, "/Users/o'hara/bin/omni", []string{"hook"}, `'/Users/o'\''hara/bin/omni' hook`, "/Users/o'hara/bin/omni"},
		// Claude Code on Windows: Git Bash.
		{"windows", Claude, progFiles, []string{"hook"}, "'C:/Program Files/omni/omni.exe' hook", "C:/Program Files/omni/omni.exe"},
		{"windows", Claude, goBin, []string{"pretool"}, "C:/Users/a/go/bin/omni.exe pretool", "C:/Users/a/go/bin/omni.exe"},
		// Codex on Windows: cmd.exe behind MSVCRT escaping, a bare path only.
		{"windows", Codex, goBin, []string{"hook"}, goBin + " hook", goBin},
		{"windows", Codex, progFiles, []string{"hook"}, "", ""},
		{"windows", Codex, `C:\a&b\omni.exe`, []string{"hook"}, "", ""},
		// Gemini CLI and Copilot CLI on Windows: PowerShell.
		{"windows", Gemini, progFiles, []string{"hook"}, `& 'C:\Program Files\omni\omni.exe' hook`, progFiles},
		{"windows", Copilot, `C:\Users\O'Brien\omni.exe`, []string{"hook"}, `& 'C:\Users\O''Brien\omni.exe' hook`, `C:\Users\O'Brien\omni.exe`},
		{"windows", Copilot, goBin, []string{"hook"}, `& '` + goBin + `' hook`, goBin},
		// Cursor on Windows: PowerShell.
		{"windows", Cursor, progFiles, []string{"hook", "cursor"}, `& 'C:\Program Files\omni\omni.exe' hook cursor`, progFiles},
		{"windows", Cursor, `C:\100%\omni.exe`, []string{"hook", "cursor"}, `& 'C:\100%\omni.exe' hook cursor`, `C:\100%\omni.exe`},
		// A host not named: cmd.exe given the line verbatim.
		{"windows", Host("other"), progFiles, []string{"hook"}, `"C:\Program Files\omni\omni.exe" hook`, progFiles},
		{"windows", Host("other"), `C:\tools\omni.exe`, []string{"hook"}, `C:\tools\omni.exe hook`, `C:\tools\omni.exe`},
		{"windows", Host("other"), `C:\100%\omni.exe`, []string{"hook"}, "", ""},
	} {
		r := hookCmd{goos: c.goos, host: c.host, omni: c.omni}
		got, ok := r.line(c.omni, c.args...)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%s %s %q: %q (%v), want %q", c.goos, c.host, c.omni, got, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		if w := hookWords(got); len(w) != 1+len(c.args) || w[0] != c.prog || w[1] != c.args[0] {
			t.Errorf("%s %s: %q reads back as %q, want %q then %q", c.goos, c.host, got, w, c.prog, c.args)
		}
		if !IsOmniCommand(got, "", c.args[0]) || IsOmniCommand(got, "", "mcp") {
			t.Errorf("%s %s: %q not recognised as omni's %s alone", c.goos, c.host, got, c.args[0])
		}
	}
	for p, want := range map[string]string{
		"/usr/local/bin/omni": "omni", `C:\tools\OMNI.EXE`: "OMNI", "C:/x/omni-hook.exe": "omni-hook",
		`C:\x\omni.exe.bak`: "omni.exe.bak", "omni": "omni", `D:\omni-dev.exe`: "omni-dev",
	} {
		if got := programBase(p); got != want {
			t.Errorf("programBase(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestInitRoundTripPerSystem: init for macOS and Windows (run here on
// Linux through Options.GOOS) writes each host's command for that system
// into a file the user already had; doctor finds the registration current;
// uninstall gives back the file's bytes exactly. Codex on Windows with a
// path cmd.exe cannot take bare gets no hooks (and says why), only its MCP
// server.
func TestInitRoundTripPerSystem(t *testing.T) {
	for _, c := range []struct {
		goos, omni string
		want       map[Host]string // a line the hook file holds; "" : no hook file
	}{
		{"darwin", "/Users/a b/go/bin/omni", map[Host]string{
			Claude: `"command": "'/Users/a b/go/bin/omni' hook"`,
			Codex:  `"command": "'/Users/a b/go/bin/omni' hook"`,
			Gemini: `"command": "'/Users/a b/go/bin/omni' hook"`, Copilot: `"bash": "'/Users/a b/go/bin/omni' hook"`,
			Cursor: `"command": "'/Users/a b/go/bin/omni' hook cursor"`,
		}},
		{"windows", `C:\Program Files\omni\omni.exe`, map[Host]string{
			Claude: `"command": "'C:/Program Files/omni/omni.exe' hook"`,
			Codex:  "",
			Gemini: `"command": "& 'C:\\Program Files\\omni\\omni.exe' hook"`, Copilot: `"powershell": "& 'C:\\Program Files\\omni\\omni.exe' hook"`,
			Cursor: `"command": "& 'C:\\Program Files\\omni\\omni.exe' hook cursor"`,
		}},
		{"windows", `C:\Users\a\go\bin\omni.exe`, map[Host]string{
			Codex: `"command": "C:\\Users\\a\\go\\bin\\omni.exe hook"`,
		}},
		{"windows", `C:\100%\omni.exe`, map[Host]string{Cursor: `"command": "& 'C:\\100%\\omni.exe' hook cursor"`}},
	} {
		for h, want := range c.want {
			t.Run(c.goos+"/"+string(h), func(t *testing.T) {
				o := linkOptions(t, false)
				o.GOOS, o.Omni = c.goos, c.omni
				hookPath, _ := hostPaths(h, o)
				orig := []byte("{\n  \"model\": \"x\"\n}\n")
				if err := os.MkdirAll(filepath.Dir(hookPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(hookPath, orig, 0o644); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := Run(&out, []Host{h}, o, true, false, false); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(hookPath)
				if want == "" {
					if !bytes.Equal(got, orig) || !strings.Contains(out.String(), "hooks left out") {
						t.Fatalf("hooks written where the host cannot run them:\n%s\n%s", got, out.String())
					}
					return
				}
				if !strings.Contains(string(got), want) {
					t.Fatalf("%s lacks %s:\n%s", hookPath, want, got)
				}
				if !Registered(h, o) {
					t.Error("not Registered after init")
				}
				if st, _ := inspectPart(h, o, "hooks"); st == "none" || st == "stale" {
					t.Errorf("doctor reads the hooks as %s", st)
				}
				if err := Run(io.Discard, []Host{h}, o, false, false, false); err != nil {
					t.Fatal(err)
				}
				if back, _ := os.ReadFile(hookPath); !bytes.Equal(back, orig) {
					t.Errorf("uninstall left\n%s\nwant\n%s", back, orig)
				}
			})
		}
	}
}

// TestHookWordsPOSIXEscapes: a POSIX line with a backslash-escaped blank
// (a user's own entry) still reads as POSIX; only a line that starts with
// a Windows path is read as cmd.exe's.
func TestHookWordsPOSIXEscapes(t *testing.T) {
	for line, want := range map[string]string{
		`/opt/omni\ dev/omni hook`:       "/opt/omni dev/omni",
		`C:\tools\omni.exe hook`:         `C:\tools\omni.exe`,
		`c:/tools/omni.exe hook`:         "c:/tools/omni.exe",
		`\\srv\share\omni.exe hook`:      `\\srv\share\omni.exe`,
		`"C:\Program Files\o\omni" hook`: `C:\Program Files\o\omni`,
	} {
		if w := hookWords(line); len(w) != 2 || w[0] != want || w[1] != "hook" {
			t.Errorf("hookWords(%q) = %q, want [%q hook]", line, w, want)
		}
	}
}
