package hostsetup

// The hook command lines omni writes, per host and per system. Each host
// hands a hook's command string to a shell of its own, and on Windows the
// hosts do not agree on which:
//
//   - Claude Code runs it with bash everywhere: Git Bash on Windows
//     (2.1.328's hook runner: "requires bash but Git Bash was not found"
//     unless a handler asks for shell "powershell"), which reads POSIX
//     quoting and takes C:/… paths;
//   - Codex hands it to %COMSPEC% /C (cmd.exe) as one argument of Rust's
//     Command (codex-rs hooks, command_runner.rs default_shell_command),
//     whose escaping turns every double quote into \" — which cmd.exe does
//     not read back (tried under Wine: `"C:\Program Files\omni\omni.exe"
//     version` fails there with "Can't recognize '\"C:\Program…'"), so
//     only a path cmd takes bare can be named;
//   - Gemini CLI runs it with PowerShell (0.61.0's getShellConfiguration:
//     pwsh, else powershell.exe, -Command), which needs the call operator
//     before a quoted path;
//   - Copilot CLI reads a handler's "powershell" command on Windows
//     (PowerShell 7) and its "bash" command elsewhere (its hooks
//     documentation);
//   - Cursor's documentation does not say which shell runs a hook on
//     Windows; the authors of Cursor hooks report PowerShell (a bash
//     script there fails with "Program 'bash.exe' failed to run", an
//     extensionless one opens "Open with"), so omni writes PowerShell's
//     call there too.
//
// A host not named here gets what cmd.exe reads when the line reaches it
// verbatim (Node's shell: true): the double-quoted path.
//
// OpenCode and Cline are not here: their plugins start omni with Node's
// spawn and an argument list, no shell (plugin/*.js), and the path is a
// JSON string literal in them (renderPlugin). MCP registrations are
// argument lists too.
//
// Everything below is a pure function of (system, host, path), so tests on
// Linux check the Windows and macOS renderings, and uninstall and doctor
// read back what any system's init wrote (hookWords).

import (
	"runtime"
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// cmdLang is the language a host's hook runner reads a command line in.
type cmdLang int

const (
	// langPOSIX is sh or bash: POSIX quoting; on Windows (Git Bash) the
	// path is written with forward slashes.
	langPOSIX cmdLang = iota
	// langPowerShell is PowerShell: & 'path' args.
	langPowerShell
	// langCmd is cmd.exe given the line verbatim: "path" args.
	langCmd
	// langCmdEscaped is cmd.exe /C behind MSVCRT argument escaping (no
	// double quote survives): a bare path only.
	langCmdEscaped
)

// hookLang returns the language host h's hook runner reads a command line
// in on system goos (a GOOS value).
func hookLang(goos string, h Host) cmdLang {
	if goos != "windows" {
		return langPOSIX
	}
	switch h {
	case Claude:
		return langPOSIX
	case Codex:
		return langCmdEscaped
	case Gemini, Copilot, Cursor:
		return langPowerShell
	}
	return langCmd
}

// hookCmd is where one registration's hook commands run: the system (a
// GOOS value), the host, and the omni binary.
type hookCmd struct {
	goos string
	host Host
	omni string
}

// hookCmdFor is the hookCmd of host h under o (o.GOOS, else this system).
func hookCmdFor(o Options, h Host) hookCmd {
	goos := o.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	return hookCmd{goos: goos, host: h, omni: o.Omni}
}

// posixHookCmd is how the hosts of Linux and macOS run omni at path omni.
func posixHookCmd(omni string) hookCmd { return hookCmd{goos: "linux", omni: omni} }

// line returns the command line that runs prog with args, and false when
// the host's runner cannot name prog on that system (Codex on Windows: a
// path cmd.exe would need quoted).
func (r hookCmd) line(prog string, args ...string) (string, bool) {
	var b strings.Builder
	switch hookLang(r.goos, r.host) {
	case langPOSIX:
		if r.goos == "windows" {
			prog = strings.ReplaceAll(prog, `\`, "/")
		}
		b.WriteString(shellcmd.Quote(prog))
	case langPowerShell:
		b.WriteString("& '")
		for _, c := range prog {
			b.WriteRune(c)
			if strings.ContainsRune(psQuotes, c) {
				b.WriteRune(c) // doubled: a literal quote
			}
		}
		b.WriteString("'")
	case langCmd:
		if strings.ContainsAny(prog, `%"`) {
			return "", false // cmd expands %…% even inside quotes
		}
		if strings.ContainsAny(prog, cmdSpecial) {
			prog = `"` + prog + `"`
		}
		b.WriteString(prog)
	case langCmdEscaped:
		if prog == "" || strings.ContainsAny(prog, cmdSpecial+`%"`) {
			return "", false
		}
		b.WriteString(prog)
	}
	for _, a := range args {
		b.WriteString(" " + a)
	}
	return b.String(), true
}

// hook returns the command line of omni's hook subcommand sub ("hook" or
// "pretool") with extra arguments, through the thin client (omni-hook)
// when one sits beside the binary.
func (r hookCmd) hook(sub string, extra ...string) (string, bool) {
	if hb := HookBinary(r.omni); hb != "" {
		if sub == "hook" {
			return r.line(hb, extra...)
		}
		return r.line(hb, append([]string{sub}, extra...)...)
	}
	return r.line(r.omni, append([]string{sub}, extra...)...)
}

// runnable reports whether the host can run omni's hook on its system
// (line).
func (r hookCmd) runnable() bool {
	_, ok := r.hook("hook")
	return ok
}

// leftOutNotes says which of host h's hooks init leaves out under o
// because the host cannot run omni's binary from them on its system.
func leftOutNotes(h Host, o Options) []string {
	if o.MCPOnly || hookCmdFor(o, h).runnable() {
		return nil
	}
	if h != Codex {
		return []string{h.Name() + " hooks left out: its shell on " + hookCmdFor(o, h).goos + " cannot name " + o.Omni + " (cmd.exe expands %…% even inside quotes); install omni under a plain path to have them"}
	}
	mcp := "; the MCP server is registered as usual"
	if o.HookOnly {
		mcp = ""
	}
	return []string{"Codex hooks left out: Codex on Windows hands a hook command to cmd.exe through an escaping that breaks a quoted path, and " + o.Omni +
		" needs quotes there (a space or one of &()^,;=!'); install omni under a plain path (such as C:\\tools\\omni.exe) to have them" + mcp}
}

// psQuotes are the characters PowerShell reads as a single quote.
const psQuotes = "'\u2018\u2019\u201a\u201b"

// cmdSpecial are the characters cmd.exe reads as separators or operators
// in a bare word.
const cmdSpecial = " \t&|<>^(),;=!'`"

// hookWords splits a hook command line omni may have written on any
// system into its words: a PowerShell call (& 'path' args; a doubled
// single quote is one quote), a cmd.exe line (it starts with a
// double-quoted path, or with a bare Windows path and holds no quote),
// else a POSIX line (shellcmd.Split).
func hookWords(cmd string) []string {
	s := strings.TrimSpace(cmd)
	if rest, ok := strings.CutPrefix(s, "& "); ok {
		return psWords(strings.TrimSpace(rest))
	}
	if strings.HasPrefix(s, `"`) || (windowsPath(s) && !strings.ContainsAny(s, `'"`)) {
		return cmdWords(s)
	}
	return shellcmd.Split(s)
}

// windowsPath reports a line that starts with a Windows path: a drive
// (C:\ or C:/) or a UNC share (\\server).
func windowsPath(s string) bool {
	if strings.HasPrefix(s, `\\`) {
		return true
	}
	return len(s) >= 3 && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// psWords splits a PowerShell command's arguments: blanks separate words;
// single quotes group (a doubled quote is one), double quotes group.
func psWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case strings.ContainsRune(psQuotes, c):
			in = true
			for i++; i < len(rs); i++ {
				if strings.ContainsRune(psQuotes, rs[i]) {
					if i+1 < len(rs) && strings.ContainsRune(psQuotes, rs[i+1]) {
						cur.WriteRune(rs[i])
						i++
						continue
					}
					break
				}
				cur.WriteRune(rs[i])
			}
		case c == '"':
			in = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				cur.WriteRune(rs[i])
			}
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// cmdWords splits a cmd.exe line: blanks separate words, a double quote
// starts or ends a quoted stretch, every other byte (the backslash too)
// is itself.
func cmdWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted, in = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// programBase is the base name of a program path written on any system
// (either separator), without a final .exe in any case: "omni" for
// /usr/local/bin/omni, C:\Program Files\omni\omni.exe and
// C:/tools/OMNI.EXE alike (the last lowered only in its extension).
func programBase(p string) string {
	b := p[strings.LastIndexAny(p, `/\`)+1:]
	if len(b) > 4 && strings.EqualFold(b[len(b)-4:], ".exe") {
		b = b[:len(b)-4]
	}
	return b
}
