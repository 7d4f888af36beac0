package hostsetup

import (
	"os/exec"
	"strings"
	"testing"
)

// hostileDirs are directory names a user's binary path may hold: every
// character a shell reads specially, quotes of both kinds, unicode
// quotes, a trailing backslash, a newline, "..".
var hostileDirs = []string{
	"a b", "o'hara", `say "hi"`, "$HOME", "$(id)", "`id`", "100%", "%PATH%", "a&b", "a^b", "a!b", "a;b",
	"a|b", "a<b>c", "(x)", "a,b=c", "é ü 日本", "it\u2019s", "\u2018q\u2019", `back\`, "two\nlines", "..", "-rf", "~", "*", "a?b", "[ab]", "a\tb", "#c", "x{a,b}",
}

// TestHookLineHostilePathsPOSIX: the line written for a POSIX host runs,
// in bash and in sh (dash), exactly the program at the path with the
// arguments given, whatever the path holds.
func TestHookLineHostilePathsPOSIX(t *testing.T) {
	shells := []string{}
	for _, sh := range []string{"bash", "dash"} {
		if _, err := exec.LookPath(sh); err == nil {
			shells = append(shells, sh)
		}
	}
	if len(shells) == 0 {
		t.Skip("no bash or dash here")
	}
	for _, dir := range hostileDirs {
		prog := "/opt/" + dir + "/omni"
		for _, h := range []Host{Claude, Codex, Gemini, Copilot, Cursor} {
			r := hookCmd{goos: "linux", host: h, omni: prog}
			line, ok := r.line(prog, "hook", "cursor")
			if !ok {
				t.Errorf("linux %s %q: refused", h, prog)
				continue
			}
			for _, sh := range shells {
				// the shell parses the line as the host's runner would; the
				// program is replaced by a printer of its words
				out, err := exec.Command(sh, "-c", `set -- `+line+`; for a; do printf '%s\0' "$a"; done`).Output()
				if err != nil {
					t.Errorf("%s %q: %v", sh, line, err)
					continue
				}
				got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
				if want := []string{prog, "hook", "cursor"}; strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("%s reads %q as %q, want %q", sh, line, got, want)
				}
			}
			if w := hookWords(line); len(w) != 3 || w[0] != prog {
				t.Errorf("linux %s: %q reads back as %q", h, line, w)
			}
			if !IsOmniCommand(line, "", "hook") {
				t.Errorf("linux %s: %q not recognised as omni's", h, line)
			}
		}
	}
}

// TestHookLineHostilePathsWindows: every line written for a Windows host
// reads back (uninstall, doctor) as the program it names, and a line is
// only written where the host's shell takes the path literally: no
// double quote in a line cmd.exe reads behind escaping, no % where cmd
// expands it, every PowerShell quote doubled inside '…'.
func TestHookLineHostilePathsWindows(t *testing.T) {
	for _, dir := range hostileDirs {
		if strings.ContainsAny(dir, "\"<>|?*\n\t") {
			continue // not a Windows file name
		}
		for _, root := range []string{`C:\`, `\\srv\share\`, `C:\x\..\`} {
			prog := root + dir + `\omni.exe`
			for _, h := range []Host{Claude, Codex, Gemini, Copilot, Cursor, Host("other")} {
				r := hookCmd{goos: "windows", host: h, omni: prog}
				line, ok := r.line(prog, "hook")
				if !ok {
					continue
				}
				want := prog
				switch hookLang("windows", h) {
				case langPOSIX:
					want = strings.ReplaceAll(prog, `\`, "/")
				case langCmdEscaped:
					if strings.ContainsAny(line, `"%`) {
						t.Errorf("codex %q: %q", prog, line)
					}
				case langCmd:
					if strings.Contains(prog, "%") {
						t.Errorf("cmd %q: %q", prog, line)
					}
				}
				if w := hookWords(line); len(w) != 2 || w[0] != want || w[1] != "hook" {
					t.Errorf("windows %s %q: %q reads back as %q, want [%q hook]", h, prog, line, w, want)
				}
				if !IsOmniCommand(line, "", "hook") {
					t.Errorf("windows %s: %q not recognised as omni's", h, line)
				}
			}
		}
	}
}
