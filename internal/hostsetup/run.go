package hostsetup

// Host detection and the install/uninstall run of omni init.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/omnictx/omni/internal/rewrite"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// hostDirs are the directories whose presence says a host is installed.
func hostDirs(h Host, o Options) []string {
	if s, ok := specs[h]; ok {
		return s.dirs(o)
	}
	if o.Project != "" {
		switch h {
		case Claude:
			return []string{filepath.Join(o.Project, ".claude")}
		case Codex:
			return []string{filepath.Join(o.Project, ".codex")}
		case Gemini:
			return []string{filepath.Join(o.Project, ".gemini")}
		case OpenCode:
			return []string{filepath.Join(o.Project, ".opencode"), filepath.Join(o.Project, "opencode.json")}
		case Copilot:
			return []string{filepath.Join(o.Project, ".github", "copilot"), filepath.Join(o.Project, ".github", "hooks")}
		case Cline:
			return []string{filepath.Join(o.Project, ".cline")}
		}
	}
	switch h {
	case Claude:
		return []string{filepath.Join(o.Home, ".claude"), filepath.Join(o.Home, ".claude.json")}
	case Codex:
		return []string{o.CodexHome}
	case Gemini:
		return []string{filepath.Join(o.Home, ".gemini")}
	case OpenCode:
		return []string{filepath.Join(o.ConfigHome, "opencode")}
	case Copilot:
		return []string{copilotHome(o)}
	case Cline:
		return []string{clineDir(o)}
	}
	return nil
}

// Present reports whether host h is installed in o's scope: one of its
// configuration directories (or files) exists.
func Present(h Host, o Options) bool {
	for _, d := range hostDirs(h, o) {
		if _, err := os.Stat(d); err == nil {
			return true
		}
	}
	return false
}

// Registered reports whether any of h's files holds an omni entry.
func Registered(h Host, o Options) bool {
	for _, p := range partsFor(h, o) {
		src, err := os.ReadFile(p.path)
		if err != nil {
			continue
		}
		out, del, err := p.apply(src, true, false)
		if err == nil && (del || !bytes.Equal(out, src)) {
			return true
		}
	}
	return false
}

// DefaultOptions fills the paths of Options from the environment: the home
// directory, $XDG_CONFIG_HOME (else ~/.config), $CODEX_HOME (else ~/.codex)
// and this executable as the binary to register. It fails only when the
// home directory or the executable cannot be found.
func DefaultOptions() (Options, error) {
	var o Options
	home, err := os.UserHomeDir()
	if err != nil {
		return o, fmt.Errorf("home directory: %w", err)
	}
	o.Home = home
	o.ConfigHome = os.Getenv("XDG_CONFIG_HOME")
	if o.ConfigHome == "" {
		o.ConfigHome = filepath.Join(home, ".config")
	}
	o.CodexHome = os.Getenv("CODEX_HOME")
	if o.CodexHome == "" {
		o.CodexHome = filepath.Join(home, ".codex")
	}
	o.CopilotHome = os.Getenv("COPILOT_HOME")
	o.ClineDir = os.Getenv("CLINE_DIR")
	o.Omni, err = os.Executable()
	if err != nil {
		return o, fmt.Errorf("locate the omni binary: %w", err)
	}
	return o, nil
}

func slicesContains(hs []Host, h Host) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// initReport is the --json output of omni init.
type initReport struct {
	// Host and Tier name the host and what it makes of omni's reply.
	Host string `json:"host"`
	Tier string `json:"tier"`
	// Files lists what happened to each file.
	Files []fileResult `json:"files"`
	// Notes are the steps the host needs beyond its files.
	Notes []string `json:"notes,omitempty"`
}

// Run installs (install true) or uninstalls the registrations of hosts under
// o and prints one line per file to w (asJSON: one JSON array of host
// reports); dry prints what would change and writes nothing. Every file is
// read and planned before any is written, and a failed write puts back the
// files written before it, so init changes all its files or none: the
// error, if any, is the first file that could not be read, parsed, placed
// (under a project, a file must resolve inside it) or written, and nothing
// is printed for the files then. On install, a binary path that is not
// valid UTF-8 is an error before any file is read (JSON cannot name it).
func Run(w io.Writer, hosts []Host, o Options, install, dry, asJSON bool) error {
	if install && !utf8.ValidString(o.Omni) {
		// JSON (hook files, MCP registrations, the plugin's string
		// literal) carries no byte that is not UTF-8: its encoder writes
		// U+FFFD instead, which would name another program.
		return fmt.Errorf("the omni binary's path %q is not valid UTF-8, and a host's JSON settings cannot name it; install omni under another path", o.Omni)
	}
	var reports []initReport
	var failed error
	var ops []fileOp
	for _, h := range hosts {
		ho := o
		if h != Claude {
			ho.Rewrite = false
		}
		ps := partsFor(h, ho)
		res, hops, err := runParts(ps, install, ho.Project, func(path string) [][]part { return variantsFor(h, ho, path) })
		ops = append(ops, hops...)
		rep := initReport{Host: hostNames[h], Tier: hostTiers[h], Files: res}
		changed := false
		for _, f := range res {
			changed = changed || (f.Action != "unchanged" && f.Action != "absent")
			if f.Action == "removed" {
				if _, err := os.Stat(f.Path + BackupSuffix); err == nil {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s changed since omni's install, so only omni's entries were removed; the copy from before the install stays in %s", f.Path, f.Path+BackupSuffix))
				}
			}
		}
		if install {
			rep.Notes = append(rep.Notes, leftOutNotes(h, ho)...) // changed or not
		}
		if install && changed {
			rep.Notes = append(rep.Notes, hostNotes(h, ho)...)
		}
		reports = append(reports, rep)
		if err != nil {
			// All or nothing: a file that cannot be read, parsed or
			// placed stops the run before any file is written.
			failed = fmt.Errorf("%w (no file was changed)", err)
			reports = nil
			break
		}
	}
	if failed == nil && !dry {
		if err := commit(ops); err != nil {
			failed = err
			reports = nil
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(reports, "", "  ")
		fmt.Fprintln(w, string(b))
	} else {
		for _, r := range reports {
			fmt.Fprintf(w, "%s (%s):\n", r.Host, r.Tier)
			for _, f := range r.Files {
				verb := f.Action
				if dry && verb != "unchanged" && verb != "absent" {
					verb = "would be " + verb
				}
				fmt.Fprintf(w, "  %-10s %s (%s)\n", verb, f.Path, strings.Join(f.Parts, ", "))
				if f.Backup != "" {
					fmt.Fprintf(w, "  %-10s %s\n", "backup", f.Backup)
				}
				if dry && verb != "unchanged" && verb != "absent" {
					for _, l := range lineDiff(f.before, f.after) {
						fmt.Fprintf(w, "    %s\n", l)
					}
				}
			}
			for _, n := range r.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
		}
	}
	return failed
}

// variantsFor lists the part sets an install may have written to path: any
// binary named in the file, with and without --rewrite, hooks and MCP alone
// or together, never more kinds than o asks for (an --mcp-only uninstall
// must not take the hooks away by restoring the backup).
func variantsFor(h Host, o Options, path string) [][]part {
	asked := map[string]bool{}
	for _, p := range partsFor(h, o) {
		if p.path == path {
			asked[p.kind] = true
		}
	}
	bins := []string{o.Omni}
	if src, err := os.ReadFile(path); err == nil {
		for _, b := range binariesIn(src) {
			if !slicesContainsString(bins, b) {
				bins = append(bins, b)
			}
		}
	}
	var out [][]part
	for _, bin := range bins {
		for _, rw := range []bool{false, true} {
			if rw && h != Claude {
				continue
			}
			for _, only := range []int{0, 1, 2} {
				v := o
				v.Omni, v.Rewrite = bin, rw
				v.HookOnly, v.MCPOnly = only == 1, only == 2
				var ps []part
				subset := true
				for _, p := range partsFor(h, v) {
					if p.path == path {
						ps = append(ps, p)
						subset = subset && asked[p.kind]
					}
				}
				if len(ps) > 0 && subset {
					out = append(out, ps)
				}
			}
		}
	}
	return out
}

func slicesContainsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var (
	reJSONCommand = regexp.MustCompile(`"(?:command|bash|powershell)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	reJSONArray   = regexp.MustCompile(`"command"\s*:\s*\[\s*"((?:[^"\\]|\\.)*)"`)
	reTOMLCommand = regexp.MustCompile(`(?m)^\s*command\s*=\s*"((?:[^"\\]|\\.)*)"`)
	rePluginBin   = regexp.MustCompile(`process\.env\.OMNI_BIN \|\| ("(?:[^"\\]|\\.)*")`)
)

// binariesIn returns the omni binaries (programs named omni) a registration
// file names.
func binariesIn(src []byte) []string {
	var out []string
	add := func(quoted string, shell bool) {
		var s string
		if json.Unmarshal([]byte(`"`+quoted+`"`), &s) != nil {
			return
		}
		if shell {
			w := hookWords(s)
			switch {
			case len(w) >= 1 && programBase(w[0]) == HookBinaryName:
				s = w[0]
			case len(w) < 2 || (w[1] != "hook" && w[1] != "pretool"):
				return
			default:
				s = w[0]
			}
		}
		if s == "" {
			return
		}
		s = filepath.Clean(s)                 // Git Bash's C:/… is C:\… on Windows
		if programBase(s) == HookBinaryName { // the thin client stands for the omni beside it
			ext := ""
			if strings.EqualFold(filepath.Ext(s), ".exe") {
				ext = filepath.Ext(s)
			}
			s = filepath.Join(filepath.Dir(s), "omni"+ext)
		}
		if programBase(s) == "omni" && !slicesContainsString(out, s) {
			out = append(out, s)
		}
	}
	for _, m := range reJSONCommand.FindAllSubmatch(src, -1) {
		add(string(m[1]), true)
		add(string(m[1]), false)
	}
	for _, m := range reJSONArray.FindAllSubmatch(src, -1) {
		add(string(m[1]), false)
	}
	for _, m := range reTOMLCommand.FindAllSubmatch(src, -1) {
		add(string(m[1]), false)
	}
	if m := rePluginBin.FindSubmatch(src); m != nil {
		add(string(m[1][1:len(m[1])-1]), false)
	}
	return out
}

// hostNotes are the steps a host needs beyond its files.
func hostNotes(h Host, o Options) []string {
	if s, ok := specs[h]; ok && s.notes != nil {
		return s.notes(o)
	}
	var n []string
	switch h {
	case Claude:
		if !o.HookOnly {
			n = append(n, "Claude Code drops its prompt cache when an MCP server connects or disconnects; the hook alone covers every feature (markers name 'omni retrieve'), so --hook-only is a fine choice")
		}
		if o.Rewrite && !rewrite.PathNameOK(o.Omni) {
			if hookCmdFor(o, Claude).goos == "windows" {
				n = append(n, "PreToolUse rewrite left out: it is not offered on Windows (the command it writes is a bash line that names omni's binary by a POSIX path)")
			} else {
				n = append(n, "PreToolUse rewrite left out: the omni path "+o.Omni+" holds a character a command cannot name bare (a space, a quote) or is not absolute; install omni under a plain path to have it")
			}
		} else if o.Rewrite {
			n = append(n, "PreToolUse rewrite on: a foreground test or build run keeps its command and pipes its output through 'omni pipe' (Claude Code still runs and judges the command; allow rules added for 'set -o pipefail' and 'omni pipe'); --rewrite=false turns it off")
		}
	case Codex:
		if !o.MCPOnly && hookCmdFor(o, Codex).runnable() {
			n = append(n, "Codex skips new or changed hooks until you approve them: start codex, open \"Hooks need review\" and approve omni's entries (every change to an entry needs a new approval)")
			n = append(n, `Codex reads omni's shortened text as {"decision":"block","reason":...}; some versions show the call as blocked although the model reads the shortened output`)
		}
	case Gemini:
		if !o.MCPOnly {
			n = append(n, `some Gemini CLI releases run hooks only when enabled in settings.json ("hooks": {"enabled": true} or "tools": {"enableHooks": true})`)
		}
	case OpenCode:
		if !o.MCPOnly {
			n = append(n, "restart OpenCode to load the plugin")
		}
	case Copilot:
		if !o.MCPOnly {
			if o.Project != "" {
				n = append(n, "Copilot CLI runs a repository's hooks only in a folder you trust; .github/hooks/omni.json runs 'omni hook' from PATH, so whoever runs the agent (the Copilot cloud agent too, through its setup steps) needs omni installed")
			}
			n = append(n, "omni registers no MCP server with Copilot CLI")
		}
	case Cline:
		if !o.MCPOnly {
			n = append(n, "Cline loads the plugin when a session starts; it runs plugins with node and needs the whole 'cline' npm package (the platform binary alone skips plugins); omni shortens run_commands only and registers no MCP server with it")
		}
	}
	return n
}

// lineDiff lists the lines only in a ("-") and only in b ("+"), after
// dropping the common head and tail.
func lineDiff(a, b []byte) []string {
	al := strings.SplitAfter(string(a), "\n")
	bl := strings.SplitAfter(string(b), "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	j := 0
	for j < len(al)-i && j < len(bl)-i && al[len(al)-1-j] == bl[len(bl)-1-j] {
		j++
	}
	var out []string
	for _, l := range al[i : len(al)-j] {
		if l != "" {
			out = append(out, "- "+strings.TrimRight(l, "\n"))
		}
	}
	for _, l := range bl[i : len(bl)-j] {
		if l != "" {
			out = append(out, "+ "+strings.TrimRight(l, "\n"))
		}
	}
	return out
}
