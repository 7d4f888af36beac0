// Package rewrite builds the PreToolUse rewrite of a Claude Code Bash call:
// the user's command text is kept whole and runs in the host's own shell,
// under the host's own permission check, cwd, shell set-up, timeout and
// stdin; omni only adds `set -o pipefail;` in front and `2>&1 | omni pipe
// …` behind, so the output of the runner passes through omni's filter and
// the exit status stays the runner's. The rewrite never answers a
// permission decision: the host judges the whole rewritten text, every
// part of it, exactly as bash will run it.
//
// Only a strict grammar is taken (Take), so that the added text binds to the
// runner's own output and nothing else: an optional `cd WORD &&` and one
// test or build runner of plain words. Anything else passes untouched.
// Standard library and internal/shellcmd only, so the thin hook client
// (cmd/omni-hook) answers without starting the omni binary.
package rewrite

import (
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// Taken is a command line the rewrite takes, split where the filter binds.
type Taken struct {
	// Line is the command line exactly as the agent wrote it.
	Line string
	// Runner is the last simple command of Line, trimmed: the runner whose
	// output the filter reads, and the text omni's distillers are chosen
	// from.
	Runner string
}

// Take reports whether a command line is in the rewrite's grammar and, if
// so, where the filter binds. The grammar (blanks are spaces or tabs):
//
//	line    = *( simple blank* list-op blank* ) runner
//	list-op = "&&" / "||" / ";"
//	simple  = word *( blank+ word )
//	word    = 1*( plain / single-quoted / double-quoted ) / "2>&1"
//	plain   = ALPHA / DIGIT / one of _ - . / = : , + @ % ~ * ? [ ]
//	single-quoted = "'" *( any byte but "'" and control characters ) "'"
//	double-quoted = DQUOTE *( any byte but DQUOTE, \ $ ` ! and control characters ) DQUOTE
//
// The last simple command is a test or build runner (Runner), its first
// word (after NAME=value assignments) the runner itself: never a shell
// builtin, keyword or exec-like word, so that running it in the
// pipeline's subshell changes nothing. No earlier simple command may touch
// the shell's options or run text as commands (set, shopt, source, ., eval,
// exec, trap): the pipefail the rewrite sets must hold. Nothing else: no
// pipe, redirection other than 2>&1, expansion, substitution, escape,
// group, comment, newline or background job, since any of them could make
// the added text bind to something other than the runner or change what a
// part of the line means. Such a line is left as written.
func Take(line string) (Taken, bool) {
	if strings.Trim(line, " \t") == "" || len(line) > maxLine {
		return Taken{}, false
	}
	cmds, ok := split(line)
	if !ok || len(cmds) == 0 {
		return Taken{}, false
	}
	for i, c := range cmds {
		words := c.words
		j := 0
		for j < len(words) && shellcmd.IsAssignment(words[j]) {
			j++
		}
		if j == len(words) {
			return Taken{}, false // a bare assignment changes the shell
		}
		if notRunnable[words[j]] && (i == len(cmds)-1 || shellState[words[j]]) {
			return Taken{}, false
		}
	}
	last := cmds[len(cmds)-1]
	var words []string
	for _, w := range last.words {
		if w != "2>&1" {
			words = append(words, w)
		}
	}
	if !Runner(words) {
		return Taken{}, false
	}
	return Taken{Line: line, Runner: strings.Trim(line[last.start:last.end], " \t")}, true
}

// maxLine is the longest command line taken, in bytes: a runner line is
// short; a longer one is left to the host as written.
const maxLine = 4096

// notRunnable are first words the runner may not have: they would change
// what the line does when run in a pipeline's subshell, or wrap the whole
// pipeline.
var notRunnable = map[string]bool{
	"exec": true, "eval": true, "source": true, ".": true, "time": true, "command": true, "builtin": true,
	"cd": true, "pushd": true, "popd": true, "set": true, "shopt": true, "export": true, "unset": true,
	"alias": true, "trap": true, "ulimit": true, "umask": true, "exit": true, "return": true,
	"omni": true, "omni-hook": true, "coproc": true, "declare": true, "typeset": true, "local": true,
	"readonly": true, "wait": true, "read": true, "hash": true, "enable": true, "let": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true, "while": true, "until": true,
	"do": true, "done": true, "case": true, "esac": true, "function": true, "select": true, "in": true,
}

// shellState are first words no simple command of the line may have: they
// can turn pipefail off or run text as commands.
var shellState = map[string]bool{
	"set": true, "shopt": true, "source": true, ".": true, "eval": true, "exec": true, "trap": true,
	"omni": true, "omni-hook": true, "coproc": true, "function": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true, "while": true, "until": true,
	"do": true, "done": true, "case": true, "esac": true, "select": true, "in": true,
}

// simple is one simple command of a line: its words (quotes removed) and
// its span in the line.
type simple struct {
	words      []string
	start, end int
}

// split reads a line in the grammar into its simple commands; ok is false
// for anything outside it.
func split(line string) (cmds []simple, ok bool) {
	cur := simple{start: 0}
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cur.words = append(cur.words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func(at, next int) bool {
		endWord()
		if len(cur.words) == 0 {
			return false
		}
		cur.end = at
		cmds = append(cmds, cur)
		cur = simple{start: next}
		return true
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '&' && i+1 < len(line) && line[i+1] == '&', c == '|' && i+1 < len(line) && line[i+1] == '|':
			if !endCmd(i, i+2) {
				return nil, false
			}
			i++
		case c == ';':
			if !endCmd(i, i+1) {
				return nil, false
			}
		case c == '2' && !inWord && strings.HasPrefix(line[i:], "2>&1") &&
			(i+4 == len(line) || line[i+4] == ' ' || line[i+4] == '\t' || line[i+4] == ';'):
			cur.words = append(cur.words, "2>&1")
			i += 3
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			for k := i + 1; k < i+1+j; k++ {
				if line[k] < 0x20 || line[k] == 0x7f {
					return nil, false
				}
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, false
			}
			for k := i + 1; k < i+1+j; k++ {
				if b := line[k]; b < 0x20 || b == 0x7f || strings.IndexByte("\\$`!", b) >= 0 {
					return nil, false
				}
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case isWord(line[i:i+1], true):
			w.WriteByte(c)
			inWord = true
		default:
			return nil, false
		}
	}
	if !endCmd(len(line), len(line)) {
		return nil, false
	}
	return cmds, true
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isWord reports a word of the grammar: word characters only, or with
// glob also the glob characters * ? [ ].
func isWord(w string, glob bool) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-./=:,+@%~", c) >= 0:
		case glob && strings.IndexByte("*?[]", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Runner reports whether a simple command's words run a test or build
// runner in the foreground: go test/build/vet, cargo
// test/build/check/clippy/nextest, pytest (also python -m pytest),
// unittest, tox, nox, npm/pnpm/yarn/bun test or run test/build/lint/check,
// jest, vitest, mocha, tsc, make, ninja, ctest, mvn, gradle(w), dotnet
// test/build, swift test/build, mix test/compile, rake test/spec, rspec,
// phpunit, zig build, and the Django and SymPy test scripts.
func Runner(words []string) bool {
	prog, args := shellcmd.Program(words)
	sub := func(set ...string) bool {
		a := firstArg(args)
		for _, s := range set {
			if a == s {
				return true
			}
		}
		return false
	}
	switch prog {
	case "pytest", "unittest", "tox", "nox", "jest", "vitest", "mocha", "tsc", "make", "gmake", "ninja", "ctest",
		"mvn", "gradle", "gradlew", "rspec", "phpunit", "django-test", "django-runtests", "sympy-test":
		return true
	case "go":
		return sub("test", "build", "vet")
	case "cargo":
		return sub("test", "build", "check", "clippy", "nextest")
	case "npm", "pnpm", "yarn", "bun":
		if sub("test", "t", "build", "lint", "typecheck") {
			return true
		}
		if sub("run", "run-script") {
			rest := restArgs(args)
			a := firstArg(rest)
			return a == "test" || a == "build" || a == "lint" || a == "typecheck" || a == "check" ||
				strings.HasPrefix(a, "test:") || strings.HasPrefix(a, "build:")
		}
	case "dotnet", "swift":
		return sub("test", "build")
	case "mix":
		return sub("test", "compile")
	case "rake":
		return sub("test", "spec")
	case "zig":
		return sub("build")
	}
	return false
}

func firstArg(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func restArgs(args []string) []string {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return args[i+1:]
		}
	}
	return nil
}
