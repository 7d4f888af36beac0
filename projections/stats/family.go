package stats

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/internal/shellcmd"
)

// maxFamily bounds a family name, in bytes.
const maxFamily = 40

// subcommandTools are programs whose first argument names what they do
// ("git status", "go test"), so the family keeps it.
var subcommandTools = map[string]bool{
	"git": true, "go": true, "cargo": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"docker": true, "kubectl": true, "helm": true, "pip": true, "pip3": true, "uv": true, "poetry": true,
	"dotnet": true, "gradle": true, "mvn": true, "terraform": true, "gh": true, "omni": true, "bazel": true,
	"systemctl": true, "brew": true, "apt": true, "apt-get": true, "conda": true, "rustup": true, "deno": true,
}

// wrappers are words that run the next word as the command.
var wrappers = map[string]bool{"sudo": true, "env": true, "time": true, "nohup": true, "command": true, "exec": true, "timeout": true}

// Family groups an invocation for the per-family view: for a Read, "Read"
// and the file's extension ("Read .go"); for a command, its program (base
// name, after VAR=value assignments, wrappers such as sudo or timeout, and a
// leading "cd DIR &&"), with the subcommand for tools that have one ("git
// status", "go test", "python -m pytest"); "(json)" for a tool's JSON
// arguments. Deterministic, at most 40 bytes; "(none)" when there is no
// source.
func Family(tool, source string) string {
	if tool == "Read" {
		ext := path.Ext(source)
		if ext == "" || len(ext) > 12 || strings.ContainsAny(ext, " /") {
			return "Read"
		}
		return "Read " + strings.ToLower(ext)
	}
	if i := strings.IndexAny(source, "\r\n"); i >= 0 {
		source = source[:i]
	}
	words := strings.Fields(source)
	for len(words) > 0 {
		w := words[0]
		switch {
		case shellcmd.IsAssignment(w):
			words = words[1:]
			continue
		case wrappers[w] && len(words) > 1:
			words = words[1:]
			if w == "timeout" && len(words) > 0 { // timeout DURATION CMD
				words = words[1:]
			}
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
			continue
		case w == "cd" && len(words) > 2 && (words[2] == "&&" || words[2] == ";"):
			words = words[3:]
			continue
		}
		break
	}
	if len(words) == 0 {
		if tool != "" && tool != "Bash" {
			return tool
		}
		return "(none)"
	}
	if c := words[0][0]; c == '{' || c == '[' {
		return "(json)" // a tool's JSON arguments replayed as a command
	}
	prog := strings.Trim(path.Base(words[0]), "'\"();&|")
	if prog == "" || prog == "." {
		return "(none)"
	}
	fam := prog
	switch {
	case (prog == "python" || prog == "python3") && len(words) > 2 && words[1] == "-m":
		fam = prog + " -m " + words[2]
	case subcommandTools[prog] && len(words) > 1 && !strings.HasPrefix(words[1], "-"):
		fam = prog + " " + strings.Trim(words[1], "'\";&|")
	}
	if len(fam) > maxFamily {
		n := maxFamily
		for n > 0 && !utf8.RuneStart(fam[n]) {
			n--
		}
		fam = fam[:n]
	}
	return fam
}
