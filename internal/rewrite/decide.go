// Package rewrite decides which Claude Code Bash calls omni's PreToolUse
// hook may run through `omni exec` (issue 15): the command's shape (the
// narrow form takes test and build runners in the foreground) and the
// user's permission rules, which Claude Code matches against the rewritten
// command only (measured on 2.1.328): a command a deny or ask rule could
// match is never rewritten, and outside bypass mode only a command an allow
// rule already permits is. The hook and `omni bench --rewrite` call the
// same Decide. Standard library and internal/shellcmd only.
package rewrite

import (
	"path/filepath"
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// Form is which commands the rewrite takes.
type Form string

const (
	// Narrow takes test and build runners only (go test, pytest, cargo
	// test, npm test, make, …), optionally after `cd DIR &&`, with no pipe
	// and no output redirected to a file.
	Narrow Form = "narrow"
	// All takes every foreground command of a plain shape (no subshell,
	// compound command or substitution).
	All Form = "all"
)

// ParseForm reads a form name; ok is false for an unknown one.
func ParseForm(s string) (Form, bool) {
	switch Form(s) {
	case Narrow, All:
		return Form(s), true
	}
	return "", false
}

// Call is one PreToolUse Bash call as the decision needs it.
type Call struct {
	// Command is tool_input.command.
	Command string
	// Background is tool_input.run_in_background.
	Background bool
	// Mode is the payload's permission_mode ("default", "acceptEdits",
	// "plan", "bypassPermissions", …).
	Mode string
	// ProjectDir is the host's project directory (cd targets under it count
	// as inside the project).
	ProjectDir string
}

// Decision is the answer for one call.
type Decision struct {
	// Rewrite: run the command through omni exec.
	Rewrite bool
	// Allow: the reply must carry permissionDecision "allow", because an
	// allow rule permitted the original command and none would match the
	// rewritten one (never set in bypass mode, where the host allows).
	Allow bool
	// Why names the reason a call is left alone ("background", "shape",
	// "deny:RULE", "ask:RULE", "no-allow", "plan", "settings"), or the
	// rule that allowed it.
	Why string
}

// BypassMode is the permission_mode in which Claude Code runs every
// command a deny or ask rule does not match without asking.
const BypassMode = "bypassPermissions"

// Decide answers one call under rules (nil when the settings could not be
// read: nothing is rewritten). Order: a backgrounded call, a shape the form
// does not take, plan mode, a deny or ask rule that could match any simple
// command of the line (or a path rule any of its words), then outside
// bypass mode an allow rule for every simple command but a `cd` inside the
// project.
func Decide(c Call, rules *Rules, form Form) Decision {
	if c.Background {
		return Decision{Why: "background"}
	}
	cmds, ok := Shape(c.Command, form)
	if !ok {
		return Decision{Why: "shape"}
	}
	if c.Mode == "plan" {
		return Decision{Why: "plan"}
	}
	if rules == nil {
		return Decision{Why: "settings"}
	}
	for _, list := range []struct {
		name  string
		rules []Rule
	}{{"deny", rules.Deny}, {"ask", rules.Ask}} {
		for _, r := range list.rules {
			if couldMatch(r, c.Command, cmds) {
				return Decision{Why: list.name + ":" + r.String()}
			}
		}
	}
	if c.Mode == BypassMode {
		return Decision{Rewrite: true, Why: "bypass"}
	}
	// Outside bypass mode the host may ask before a write to a file
	// whatever the rules say: a line that sends output to a file is left
	// alone.
	pipes, _ := shellcmd.Parse(c.Command)
	for _, p := range pipes {
		for _, sc := range p {
			if sc.StdoutAway {
				return Decision{Why: "no-allow"}
			}
		}
	}
	var why []string
	for _, sc := range cmds {
		if isCd(sc) {
			if !cdInside(sc, c.ProjectDir) {
				return Decision{Why: "no-allow"}
			}
			continue
		}
		r, ok := allowedBy(rules.Allow, sc)
		if !ok {
			return Decision{Why: "no-allow"}
		}
		why = append(why, r.String())
	}
	return Decision{Rewrite: true, Allow: true, Why: strings.Join(why, " ")}
}

// Shape reports whether the form takes a command line and returns its
// simple commands (each as its words). Never taken: an empty line, a
// backgrounded job (a lone '&'), a subshell, group or compound command, a
// substitution ($(…), backquotes, <(…)), a line that runs omni itself.
// The narrow form also needs every simple command to be a runner
// (Runner) or a `cd`, at least one runner, no pipe and no stdout sent to
// a file.
func Shape(cmd string, form Form) ([][]string, bool) {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || backgrounded(cmd) || strings.Contains(cmd, "$(") || strings.Contains(cmd, "`") ||
		strings.Contains(cmd, "<(") || strings.Contains(cmd, ">(") {
		return nil, false
	}
	pipes, complexCmd := shellcmd.Parse(cmd)
	if complexCmd || len(pipes) == 0 {
		return nil, false
	}
	var out [][]string
	runners := 0
	for _, p := range pipes {
		for _, sc := range p {
			prog, _ := shellcmd.Program(sc.Words)
			if prog == "omni" {
				return nil, false
			}
			out = append(out, sc.Words)
			if form == Narrow {
				if len(p) > 1 || sc.StdoutAway {
					return nil, false
				}
				switch {
				case isCd(sc.Words):
				case Runner(sc.Words):
					runners++
				default:
					return nil, false
				}
			}
		}
	}
	if form == Narrow && runners == 0 {
		return nil, false
	}
	return out, true
}

// backgrounded reports a '&' that is not part of &&, &>, >&, |& (a
// conservative reading: a '&' inside quotes counts too).
func backgrounded(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '&' {
			continue
		}
		if i+1 < len(cmd) && (cmd[i+1] == '&' || cmd[i+1] == '>') {
			i++
			continue
		}
		if i > 0 && (cmd[i-1] == '>' || cmd[i-1] == '|' || cmd[i-1] == '<') {
			continue
		}
		return true
	}
	return false
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

func isCd(words []string) bool { return len(words) >= 1 && len(words) <= 2 && words[0] == "cd" }

// cdInside reports a cd whose target stays inside the project: a relative
// path without "..", or an absolute one under projectDir.
func cdInside(words []string, projectDir string) bool {
	if len(words) != 2 {
		return false
	}
	t := words[1]
	if filepath.IsAbs(t) {
		if projectDir == "" {
			return false
		}
		rel, err := filepath.Rel(projectDir, t)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	return !strings.HasPrefix(t, "~") && !strings.HasPrefix(t, "-") && !strings.Contains("/"+t+"/", "/../")
}

// couldMatch reports whether a deny or ask rule could concern the line:
// a Bash rule against the whole line and each simple command (as written,
// and from its program on, wrappers and assignments dropped); a rule of a
// path tool (Read, Edit, …) against every word; a rule of any other tool
// never.
func couldMatch(r Rule, line string, cmds [][]string) bool {
	switch r.Tool {
	case "Bash":
		if bashCouldMatch(r.Content, line) {
			return true
		}
		for _, w := range cmds {
			if bashCouldMatch(r.Content, strings.Join(w, " ")) {
				return true
			}
			if prog, args := shellcmd.Program(w); prog != "" {
				if bashCouldMatch(r.Content, strings.Join(append([]string{prog}, args...), " ")) {
					return true
				}
			}
		}
		return false
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS":
		for _, w := range cmds {
			for _, word := range w[1:] {
				if pathCouldMatch(r.Content, word) {
					return true
				}
			}
		}
		return false
	}
	return false
}

// allowedBy returns the first Bash allow rule that permits one simple
// command (its words joined by spaces).
func allowedBy(allow []Rule, words []string) (Rule, bool) {
	c := strings.Join(words, " ")
	for _, r := range allow {
		if r.Tool == "Bash" && bashAllows(r.Content, c) {
			return r, true
		}
	}
	return Rule{}, false
}
