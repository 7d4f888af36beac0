// Package rewrite builds the PreToolUse rewrite of a Claude Code Bash call:
// the agent's command text runs in the host's own shell, under the host's
// own permission check, cwd, shell set-up, timeout and stdin; omni only
// puts `set -o pipefail` just before the runner and `2>&1 | omni pipe
// --call T` behind it, so the runner's output passes through omni's filter
// and the exit status stays the runner's. The rewrite never answers a
// permission decision: the host judges the whole rewritten text, every
// part of it, exactly as bash will run it.
//
// Only a strict grammar is taken (Take), so that the added text binds to the
// runner's own output and nothing else. Anything else passes untouched. The
// filter learns who reads (session, agent), which runner it reads and the
// host's settings from a ticket the hook leaves under the omni home
// (Issue, Redeem), never from its command line. Standard library and
// internal/shellcmd only, so the thin hook client (cmd/omni-hook) answers
// without starting the omni binary.
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
	// At is the byte offset in Line where the runner starts; Op is the list
	// operator before it ("&&" or ";"; "" when the runner is the whole
	// line).
	At int
	Op string
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
// word (after NAME=value assignments) the runner itself, and the operator
// before it, if any, is && or ; (after ||, the pipefail put before the
// runner would change which commands run). No simple command may start
// with a shell builtin or keyword but cd, true, false, echo, printf, test,
// [, pwd and : — a builtin could act on the shell the rest runs in (set,
// shopt, ulimit, umask, export, eval, source, trap, builtin, command, …),
// and the runner must be a program, so running it in the pipeline's
// subshell changes nothing. Nothing else: no pipe, redirection other than
// 2>&1, expansion, substitution, escape, group, comment, newline or
// background job, since any of them could make the added text bind to
// something other than the runner or change what a part of the line
// means. Such a line is left as written.
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
		if shellWord(words[j]) && (i == len(cmds)-1 || !harmless(words[j])) {
			return Taken{}, false
		}
		if prog, _ := shellcmd.Program(words[j:]); prog == "omni" || prog == "omni-hook" {
			return Taken{}, false // omni itself: its output is omni's already
		}
	}
	last := cmds[len(cmds)-1]
	if last.op == "||" {
		return Taken{}, false
	}
	var words []string
	for _, w := range last.words {
		if w != "2>&1" {
			words = append(words, w)
		}
	}
	if !Runner(words) {
		return Taken{}, false
	}
	at := last.start
	for at < len(line) && isBlank(line[at]) {
		at++
	}
	return Taken{Line: line, Runner: strings.Trim(line[last.start:last.end], " \t"), At: at, Op: last.op}, true
}

// maxLine is the longest command line taken, in bytes: a runner line is
// short; a longer one is left to the host as written.
const maxLine = 4096

// shellWord are bash's builtins and reserved words: no simple command of a
// taken line may start with one, but for the harmless ones before the
// runner.
func shellWord(w string) bool {
	switch w {
	case "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete", "compopt", "continue",
		"declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc", "fg",
		"getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf",
		"pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test",
		"times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait", ".", ":",
		"[", "[[", "]]", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select",
		"while", "until", "do", "done", "in", "function", "time", "{", "}", "!", "coproc":
		return true
	}
	return false
}

// harmless are the builtins an earlier simple command may start with: they
// change nothing in the shell the runner and the filter run in but the
// working directory, which is the point of a cd.
func harmless(s string) bool {
	switch s {
	case "cd", "true", "false", "echo", "printf",
		"test", "[", "pwd", ":":
		return true
	}
	return false
}

// simple is one simple command of a line: its words (quotes removed), its
// span in the line and the list operator before it ("" for the first).
type simple struct {
	words      []string
	start, end int
	op         string
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
	endCmd := func(at, next int, op string) bool {
		endWord()
		if len(cur.words) == 0 {
			return false
		}
		cur.end = at
		cmds = append(cmds, cur)
		cur = simple{start: next, op: op}
		return true
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '&' && i+1 < len(line) && line[i+1] == '&', c == '|' && i+1 < len(line) && line[i+1] == '|':
			if !endCmd(i, i+2, line[i:i+2]) {
				return nil, false
			}
			i++
		case c == ';':
			if !endCmd(i, i+1, ";") {
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
	if !endCmd(len(line), len(line), "") {
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

// simpleTexts returns the text of each simple command of a line in the
// grammar, trimmed (nil for another line).
func simpleTexts(line string) []string {
	cmds, ok := split(line)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, strings.Trim(line[c.start:c.end], " \t"))
	}
	return out
}
