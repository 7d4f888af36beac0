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
	// Runner is the runner's simple command (Line without its `cd WORD &&`
	// prefix, trimmed): the command whose output the filter reads, and the
	// text omni's distillers are chosen from.
	Runner string
}

// Take reports whether a command line is in the rewrite's grammar and, if
// so, where the filter binds. The grammar (blanks are spaces or tabs):
//
//	line   = [ "cd" blank word blank "&&" blank ] { assign blank } runner { blank arg }
//	word   = 1*( ALPHA / DIGIT / "_" / "-" / "." / "/" / "=" / ":" / "," / "+" / "@" / "%" / "~" )
//	arg    = 1*( word characters / "*" / "?" / "[" / "]" )
//	assign = NAME "=" *word-character
//
// where the first word after the assignments names a test or build runner
// itself (Runner; never a shell builtin, keyword or exec-like word, so the
// runner may run in the pipeline's subshell without changing what the
// line does). No quote, escape, expansion, substitution, redirection,
// operator other than the one `&&`, comment, newline or background job:
// each of those could make the added text bind to something else or
// change how the line parses, so such a line is left alone.
func Take(line string) (Taken, bool) {
	s := strings.Trim(line, " \t")
	if s == "" || len(s) > maxLine {
		return Taken{}, false
	}
	for i := 0; i < len(line); i++ {
		if c := line[i]; !isBlank(c) && c != '&' && !isWord(line[i:i+1], true) {
			return Taken{}, false // a newline, quote, operator, … anywhere
		}
	}
	runner := s
	if rest, ok := strings.CutPrefix(s, "cd"); ok && len(rest) > 0 && isBlank(rest[0]) {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i <= 0 || !isWord(rest[:i], false) {
			return Taken{}, false
		}
		rest = strings.TrimLeft(rest[i:], " \t")
		after, ok := strings.CutPrefix(rest, "&&")
		if !ok || after == "" || !isBlank(after[0]) {
			return Taken{}, false
		}
		runner = strings.TrimLeft(after, " \t")
	}
	words := strings.Fields(runner)
	if len(words) == 0 {
		return Taken{}, false
	}
	i := 0
	for i < len(words) && shellcmd.IsAssignment(words[i]) {
		if !isWord(words[i], false) {
			return Taken{}, false
		}
		i++
	}
	if i == len(words) || !isWord(words[i], false) || notRunnable[words[i]] {
		return Taken{}, false
	}
	for _, w := range words[i+1:] {
		if !isWord(w, true) {
			return Taken{}, false
		}
	}
	if !Runner(words) {
		return Taken{}, false
	}
	return Taken{Line: line, Runner: strings.Join(words, " ")}, true
}

// maxLine is the longest command line taken, in bytes: a runner line is
// short; a longer one is left to the host as written.
const maxLine = 4096

// notRunnable are first words that would change what the line does when
// run in a pipeline's subshell or that wrap the whole pipeline: shell
// builtins that act on the shell itself, keywords, and exec-like words.
var notRunnable = map[string]bool{
	"exec": true, "eval": true, "source": true, ".": true, "time": true, "command": true, "builtin": true,
	"cd": true, "pushd": true, "popd": true, "set": true, "shopt": true, "export": true, "unset": true,
	"alias": true, "trap": true, "ulimit": true, "umask": true, "exit": true, "return": true,
	"omni": true, "omni-hook": true, "coproc": true, "declare": true, "typeset": true, "local": true,
	"readonly": true, "wait": true, "read": true, "hash": true, "enable": true, "let": true,
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
