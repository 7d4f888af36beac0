package platform

import (
	"errors"
	"strings"
	"testing"
)

// finder is a ShellFinder over a fixed environment, PATH and file set.
func finder(env map[string]string, path map[string]string, files ...string) ShellFinder {
	return ShellFinder{
		Getenv: func(k string) string { return env[k] },
		LookPath: func(p string) (string, error) {
			if f, ok := path[p]; ok {
				return f, nil
			}
			return "", errors.New("not found")
		},
		Exists: func(p string) bool {
			for _, f := range files {
				if f == p {
					return true
				}
			}
			return false
		},
	}
}

// TestChooseShell: the shell omni exec and omni_run use, per system:
// bash, else sh, on Unix; on Windows Git Bash (as Claude Code finds it,
// never WSL's launcher), else pwsh, else Windows PowerShell, else
// %ComSpec%, else cmd.exe under %SystemRoot%.
func TestChooseShell(t *testing.T) {
	const (
		gitBash = `C:\Program Files\Git\bin\bash.exe`
		pwsh    = `C:\Program Files\PowerShell\7\pwsh.exe`
		winPS   = `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`
		wsl     = `C:\Windows\System32\bash.exe`
	)
	for _, c := range []struct {
		name, goos string
		f          ShellFinder
		want       string
	}{
		{"linux bash", "linux", finder(nil, map[string]string{"bash": "/usr/bin/bash"}), "/usr/bin/bash"},
		{"macos no bash", "darwin", finder(nil, nil), "sh"},
		{"windows CLAUDE_CODE_GIT_BASH_PATH", "windows", finder(map[string]string{"CLAUDE_CODE_GIT_BASH_PATH": `D:\Git\bin\bash.exe`},
			map[string]string{"pwsh": pwsh}, `D:\Git\bin\bash.exe`), `D:\Git\bin\bash.exe`},
		{"windows bash on PATH", "windows", finder(nil, map[string]string{"bash": gitBash, "pwsh": pwsh}), gitBash},
		{"windows bash beside git", "windows", finder(nil, map[string]string{"git": `C:\Program Files\Git\cmd\git.exe`, "pwsh": pwsh}, gitBash), gitBash},
		{"windows WSL bash is not Git Bash", "windows", finder(nil, map[string]string{"bash": wsl, "pwsh": pwsh}), pwsh},
		{"windows WSL alias", "windows", finder(nil, map[string]string{"bash": `C:\Users\a\AppData\Local\Microsoft\WindowsApps\bash.exe`, "powershell": winPS}), winPS},
		{"windows git without bash", "windows", finder(nil, map[string]string{"git": `C:\Git\cmd\git.exe`, "powershell": winPS}), winPS},
		{"windows ComSpec", "windows", finder(map[string]string{"ComSpec": `C:\Windows\system32\cmd.exe`}, nil), `C:\Windows\system32\cmd.exe`},
		{"windows nothing", "windows", finder(map[string]string{"SystemRoot": `D:\WINNT`}, nil), `D:\WINNT\System32\cmd.exe`},
	} {
		if got := ChooseShell(c.goos, c.f); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestShellArgs: bash and sh get -c LINE; PowerShell gets no profile and
// keeps a native program's exit status; cmd.exe gets its command line
// verbatim with the line quoted once, so a quoted path in it survives.
func TestShellArgs(t *testing.T) {
	line := `"C:\Program Files\Go\bin\go.exe" test ./... & echo done`
	for _, c := range []struct {
		sh       string
		wantArgs []string
		wantRaw  string
	}{
		{"/bin/bash", []string{"-c", line}, ""},
		{"sh", []string{"-c", line}, ""},
		{`C:\Program Files\Git\bin\bash.exe`, []string{"-c", line}, ""},
		{`C:\Windows\system32\cmd.exe`, []string{"/d", "/s", "/c", line}, `cmd /d /s /c "` + line + `"`},
		{`C:\WINDOWS\SYSTEM32\CMD.EXE`, []string{"/d", "/s", "/c", line}, `cmd /d /s /c "` + line + `"`},
		{`C:\Program Files\PowerShell\7\pwsh.exe`, []string{"-NoProfile", "-NonInteractive", "-Command", line + psExitStatus}, ""},
		{"powershell.exe", []string{"-NoProfile", "-NonInteractive", "-Command", line + psExitStatus}, ""},
	} {
		args, raw := ShellArgs(c.sh, line)
		if strings.Join(args, "\x00") != strings.Join(c.wantArgs, "\x00") || raw != c.wantRaw {
			t.Errorf("%s: %q %q, want %q %q", c.sh, args, raw, c.wantArgs, c.wantRaw)
		}
	}
	if !strings.HasPrefix(psExitStatus, "\n") || !strings.Contains(psExitStatus, "exit $LASTEXITCODE") {
		t.Errorf("PowerShell's suffix must start a line of its own and keep the native exit status: %q", psExitStatus)
	}
	if c := ShellCommand("/bin/sh", "echo omni"); c.Path == "" || strings.Join(c.Args, " ") != "/bin/sh -c echo omni" {
		t.Errorf("ShellCommand: %q", c.Args)
	}
}
