package platform

// The shell omni exec and omni_run hand a one-string command to, chosen
// and invoked by pure functions of (system, environment), so tests on
// Linux cover Windows's choices and command lines.

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// ShellFinder is what ChooseShell may ask of the system: an environment
// variable, a program on PATH, whether a file exists.
type ShellFinder struct {
	Getenv   func(string) string
	LookPath func(string) (string, error)
	Exists   func(string) bool
}

// ChooseShell returns the shell that runs a one-string command on system
// goos (a GOOS value):
//
//   - Unix: bash from PATH (the user's shell for the agents' Bash tools),
//     else sh;
//   - Windows: Git Bash, found as Claude Code finds it (CLAUDE_CODE_GIT_BASH_PATH,
//     else bash on PATH, else bin\bash.exe beside the git.exe on PATH) but
//     never the WSL launcher (System32\bash.exe or the WindowsApps alias,
//     which runs the line in a Linux distribution's file system); else
//     PowerShell (pwsh, then Windows PowerShell); else %ComSpec%; else
//     %SystemRoot%\System32\cmd.exe.
func ChooseShell(goos string, f ShellFinder) string {
	if goos != "windows" {
		if p, err := f.LookPath("bash"); err == nil {
			return p
		}
		return "sh"
	}
	if p := f.Getenv("CLAUDE_CODE_GIT_BASH_PATH"); p != "" && f.Exists(p) && !wslBash(p) {
		return p
	}
	if p, err := f.LookPath("bash"); err == nil && !wslBash(p) {
		return p
	}
	if g, err := f.LookPath("git"); err == nil {
		// Git for Windows puts cmd\git.exe on PATH; bash is in bin\ beside it.
		b := winJoin(winDir(winDir(g)), `bin\bash.exe`)
		if f.Exists(b) {
			return b
		}
	}
	for _, ps := range []string{"pwsh", "powershell"} {
		if p, err := f.LookPath(ps); err == nil {
			return p
		}
	}
	if c := f.Getenv("ComSpec"); c != "" {
		return c
	}
	root := f.Getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	return winJoin(root, `System32\cmd.exe`)
}

// wslBash reports the WSL launcher: bash.exe in System32 or in the
// WindowsApps folder of app execution aliases.
func wslBash(p string) bool {
	l := strings.ToLower(strings.ReplaceAll(p, "/", `\`))
	return strings.HasSuffix(l, `\system32\bash.exe`) || strings.HasSuffix(l, `\windowsapps\bash.exe`) ||
		strings.Contains(l, `\microsoft\windowsapps\`)
}

// winDir is the directory of a Windows path (either separator).
func winDir(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[:i]
	}
	return ""
}

// winJoin joins a Windows directory and a relative path with a backslash.
func winJoin(dir, rel string) string { return strings.TrimRight(dir, `\/`) + `\` + rel }

// ShellArgs returns how the shell at sh runs the command line line: the
// arguments after the program, and, for cmd.exe, the whole command line
// Windows must hand it verbatim (raw; "" for every other shell): cmd.exe
// reads its command line itself and does not read back the escaping Go
// gives an argument list (a quoted path in line would reach it as \"…\").
//
//   - cmd: raw is `cmd /d /s /c "LINE"` (no AutoRun commands; /s strips
//     exactly the outer quotes);
//   - PowerShell: -NoProfile -NonInteractive -Command, then the line and
//     on a line of its own what keeps a native program's exit status
//     (PowerShell -Command otherwise exits 1 for any failure): when the
//     line's last statement failed, exit with $LASTEXITCODE when a native
//     program set one, else 1;
//   - any other shell: -c LINE.
func ShellArgs(sh, line string) (args []string, raw string) {
	switch shellKind(sh) {
	case "cmd":
		return []string{"/d", "/s", "/c", line}, `cmd /d /s /c "` + line + `"`
	case "powershell":
		return []string{"-NoProfile", "-NonInteractive", "-Command", line + psExitStatus}, ""
	}
	return []string{"-c", line}, ""
}

// psExitStatus follows the line PowerShell runs (ShellArgs).
const psExitStatus = "\n$omniOK = $?; if (-not $omniOK) { if ($LASTEXITCODE) { exit $LASTEXITCODE }; exit 1 }"

// shellKind is "cmd", "powershell" (pwsh too) or "" for the shell at
// path (either separator, any case, with or without .exe).
func shellKind(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	base = strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	switch base {
	case "cmd":
		return "cmd"
	case "powershell", "pwsh":
		return "powershell"
	}
	return ""
}

// ShellCommand returns the command that runs line with the shell at sh
// (ShellArgs; on Windows cmd.exe gets its command line verbatim).
func ShellCommand(sh, line string) *exec.Cmd {
	args, raw := ShellArgs(sh, line)
	c := exec.Command(sh, args...)
	if raw != "" {
		setCmdLine(c, raw)
	}
	return c
}
