package distill

import (
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Distiller is one family's parser ("go-test", "pytest", "git-diff", ...).
// Its fn marks the input lines to drop on a dctx and reports whether it
// recognised the runner's own verdict (its tally, result or summary line):
// not-ok means "pass the raw bytes". A failing run (exit code != 0) must
// have recognised a failing verdict; the fn checks that itself, since only
// it knows what failing looks like. Pick returns one; the zero value is not
// usable.
type Distiller struct {
	name string
	fn   func(d *dctx) bool
}

// Name is the distiller's name as ShortenResult.Distiller reports it
// ("go-test", "pytest", "git-diff", ...).
func (dd *Distiller) Name() string { return dd.name }

// dctx is what a distiller works on: the lines of one output and the marks.
// Distillers only select lines (and may insert marker lines); they never
// rewrite a line, so every output line is an input line or a marker, with
// one exception: a line that redraws itself with carriage returns may be
// delivered as its last state (termView), which is what a terminal shows.
type dctx struct {
	text  string
	lines []textline.Line
	keep  []bool
	// inserts holds marker lines to emit before line i (i == len(lines):
	// after the last line).
	inserts map[int][]string
	exit    int
	args    []string
	sub     string
	// verbose: the command asked for a verbose report (AskedVerbose).
	verbose bool
	// views holds lines that are delivered as a terminal shows them
	// (termView): the text after their last carriage return.
	views map[int]string
}

// n is the number of lines.
func (d *dctx) n() int { return len(d.lines) }

// recognised is every distiller's verdict rule: a run is
// claimed only when the runner's own verdict was seen, and a failing run
// (non-zero exit) only when that verdict is a failing one; otherwise the raw
// bytes pass.
func (d *dctx) recognised(verdict, failing bool) bool {
	if d.exit != 0 {
		return verdict && failing
	}
	return verdict
}

// raw returns line i with its ending.
func (d *dctx) raw(i int) string { return d.text[d.lines[i].Start:d.lines[i].End] }

// line returns line i without its ending ("\n" or "\r\n").
func (d *dctx) line(i int) string {
	s := d.raw(i)
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// trim returns line i with surrounding whitespace removed.
func (d *dctx) trim(i int) string { return strings.TrimSpace(d.raw(i)) }

// blank reports whether line i is blank.
func (d *dctx) blank(i int) bool { return d.lines[i].Key == 0 }

// drop marks line i as dropped.
func (d *dctx) drop(i int) { d.keep[i] = false }

// dropPass drops line i, a runner's line for one passing test (a ✓ line,
// "--- PASS", "... ok", "PASSED"), unless the user asked for a verbose
// report (AskedVerbose): then those lines are what was asked for and stay.
func (d *dctx) dropPass(i int) {
	if !d.verbose {
		d.drop(i)
	}
}

// termView delivers line i as a terminal shows it: a progress line that
// redraws itself with carriage returns ("Receiving objects:  1%\r…\r
// Receiving objects: 100% (1436/1436), done.") reads as its last state. It
// does nothing for a line without a carriage return inside it, or whose
// earlier states hold a failure line the last one does not repeat (then
// the line stays whole). It reports whether the line changed.
func (d *dctx) termView(i int) bool {
	l := d.line(i)
	k := strings.LastIndexByte(l, '\r')
	if k < 0 {
		return false
	}
	last := l[k+1:]
	if strings.TrimSpace(last) == "" {
		// "…done.\r" then nothing: the last non-empty state.
		l = strings.TrimRight(l, "\r")
		k = strings.LastIndexByte(l, '\r')
		if k < 0 {
			return false
		}
		last = l[k+1:]
	}
	for _, seg := range strings.Split(l[:k], "\r") {
		if textline.IsFailureLine(seg) && strings.TrimSpace(seg) != strings.TrimSpace(last) {
			return false
		}
	}
	if d.views == nil {
		d.views = map[int]string{}
	}
	d.views[i] = last + d.raw(i)[len(d.line(i)):]
	return true
}

// insert adds a marker line before line i.
func (d *dctx) insert(i int, marker string) {
	if d.inserts == nil {
		d.inserts = map[int][]string{}
	}
	d.inserts[i] = append(d.inserts[i], marker)
}

// Run runs the distiller over body (split into lines, textline.SplitLines)
// of a command with arguments args (Command.Args) that exited with exit,
// and assembles its output: the kept lines byte for byte, inserted markers,
// and blank lines only where both nearest non-blank neighbours survive.
// Whatever the distiller dropped, every failure line (textline.IsFailureLine)
// stays. kept counts input lines in the output. ok is false when the
// distiller did not recognise the runner's verdict (or, for a failing run,
// a failing verdict): then out is body unchanged and the raw bytes must
// pass.
func (dd *Distiller) Run(body string, lines []textline.Line, exit int, args []string) (out string, kept int, ok bool) {
	sub, _ := subcommand(args)
	d := &dctx{text: body, lines: lines, keep: make([]bool, len(lines)), exit: exit, args: args, sub: sub, verbose: AskedVerbose(args)}
	for i := range d.keep {
		d.keep[i] = true
	}
	if !dd.fn(d) {
		return body, len(lines), false
	}
	// A failure line is never noise: whatever a distiller dropped, every
	// line that states a failure stays (a check that passed when one failure
	// line survived would let nine of ten go unnoticed).
	for i := range d.keep {
		if !d.keep[i] && !d.blank(i) && textline.IsFailureLine(d.raw(i)) {
			d.keep[i] = true
		}
	}
	dropped := false
	for i := range d.keep {
		if !d.keep[i] && !d.blank(i) {
			dropped = true
			break
		}
	}
	if dropped {
		// A blank line survives only between two surviving lines.
		prevKept := false
		for i := 0; i < len(lines); i++ {
			if !d.blank(i) {
				prevKept = d.keep[i]
				continue
			}
			j := i
			for j < len(lines) && d.blank(j) {
				j++
			}
			nextKept := j < len(lines) && d.keep[j] && len(d.inserts[j]) == 0
			for k := i; k < j; k++ {
				d.keep[k] = d.keep[k] && prevKept && nextKept
			}
			i = j - 1
		}
	}
	if !dropped && len(d.inserts) == 0 && len(d.views) == 0 {
		return body, len(lines), true
	}
	var b strings.Builder
	b.Grow(len(body) / 2)
	nl := func() {
		s := b.String()
		if len(s) > 0 && s[len(s)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	for i := 0; i <= len(lines); i++ {
		for _, m := range d.inserts[i] {
			nl()
			b.WriteString(m)
			b.WriteByte('\n')
		}
		if i < len(lines) && d.keep[i] {
			if v, ok := d.views[i]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(d.raw(i))
			}
			kept++
		}
	}
	return b.String(), kept, true
}

// FailuresPreserved is the fidelity post-condition: every failure line of
// body (textline.IsFailureLine; lines are body's, textline.SplitLines)
// appears in out, by line identity (textline.KeyOf). A distillation that
// fails it must not be delivered.
func FailuresPreserved(body string, lines []textline.Line, out string) bool {
	var need []uint64
	for _, ln := range lines {
		if ln.Key != 0 && textline.IsFailureLine(body[ln.Start:ln.End]) {
			need = append(need, ln.Key)
		}
	}
	if len(need) == 0 {
		return true
	}
	have := make(map[uint64]struct{}, 64)
	for rest := out; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		line := rest
		if i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		if k := textline.KeyOf(line); k != 0 {
			have[k] = struct{}{}
		}
	}
	for _, k := range need {
		if _, ok := have[k]; !ok {
			return false
		}
	}
	return true
}

// The distillers, by name.
var (
	dGoTest     = &Distiller{"go-test", distillGoTest}
	dCargoTest  = &Distiller{"cargo-test", distillCargoTest}
	dCargoBuild = &Distiller{"cargo-build", distillCargoBuild}
	dPytest     = &Distiller{"pytest", distillPytest}
	dUnittest   = &Distiller{"unittest", distillUnittest}
	dSympy      = &Distiller{"sympy-test", distillSympy}
	dJest       = &Distiller{"jest", distillJest}
	dVitest     = &Distiller{"vitest", distillVitest}
	dMocha      = &Distiller{"mocha", distillMocha}
	dPlaywright = &Distiller{"playwright", distillPlaywright}
	dBunTest    = &Distiller{"bun-test", distillBunTest}
	dJSTest     = &Distiller{"js-test", distillJSTest}
	dDotnetTest = &Distiller{"dotnet-test", distillDotnetTest}
	dDotnet     = &Distiller{"dotnet-build", distillDotnetBuild}
	dMaven      = &Distiller{"maven", distillMaven}
	dGradle     = &Distiller{"gradle", distillGradle}
	dRspec      = &Distiller{"rspec", distillRspec}
	dPhpunit    = &Distiller{"phpunit", distillPhpunit}
	dMake       = &Distiller{"make", distillMake}
	dCompiler   = &Distiller{"cc", distillCompiler}
	dDocker     = &Distiller{"docker-build", distillDockerBuild}
	dNpm        = &Distiller{"npm-install", distillNpmInstall}
	dPip        = &Distiller{"pip-install", distillPipInstall}
	dApt        = &Distiller{"apt", distillApt}
	dTerraform  = &Distiller{"terraform", distillTerraform}
	dGitStatus  = &Distiller{"git-status", distillGitStatus}
	dGitLog     = &Distiller{"git-log", distillGitLog}
	dGitDiff    = &Distiller{"git-diff", distillGitDiff}
	dGitRemote  = &Distiller{"git-remote", distillGitRemote}
	dCurl       = &Distiller{"curl", distillCurl}
	dWget       = &Distiller{"wget", distillWget}
)

// Pick chooses the distiller for a command, from the command only, never
// from the content alone (a test log printed by cat is not a test run).
// nil means none: the output goes to the collapse fallback. A truncating filter (`| head`, `| tail`)
// leaves the runner's grammar incomplete, so no distiller claims it.
func Pick(ci Command) *Distiller {
	if ci.Filter != FilterNone || ci.Program == "" {
		return nil
	}
	sub, rest := subcommand(ci.Args)
	switch ci.Program {
	case "go":
		if sub == "test" {
			return dGoTest
		}
	case "cargo":
		switch sub {
		case "test", "nextest", "bench":
			return dCargoTest
		case "build", "check", "clippy", "run", "install", "doc", "fix", "rustc", "b", "c", "r":
			return dCargoBuild
		}
	case "pytest":
		return dPytest
	case "unittest", "django-test", "django-runtests", "nose2", "green":
		return dUnittest
	case "sympy-test":
		return dSympy
	case "jest":
		return dJest
	case "vitest":
		return dVitest
	case "mocha":
		return dMocha
	case "playwright":
		if sub == "test" {
			return dPlaywright
		}
	case "bun":
		if sub == "test" {
			return dBunTest
		}
		if isInstallSub(sub) {
			return dNpm
		}
		if sub == "run" && len(rest) > 0 && strings.HasPrefix(rest[0], "test") {
			return dJSTest
		}
	case "npm", "pnpm", "yarn":
		switch {
		case isInstallSub(sub):
			return dNpm
		case sub == "test" || sub == "t" || sub == "tst":
			return dJSTest
		case sub == "run" && len(rest) > 0 && (strings.HasPrefix(rest[0], "test") || strings.HasPrefix(rest[0], "e2e")):
			return dJSTest
		case ci.Program != "npm" && (strings.HasPrefix(sub, "test") || sub == "vitest" || sub == "jest"):
			return dJSTest
		}
	case "dotnet":
		switch sub {
		case "test":
			return dDotnetTest
		case "build", "restore", "publish", "pack":
			return dDotnet
		}
	case "mvn", "mvnw", "./mvnw":
		return dMaven
	case "gradle", "gradlew":
		return dGradle
	case "rspec":
		return dRspec
	case "phpunit":
		return dPhpunit
	case "make", "gmake", "cmake", "ninja":
		return dMake
	case "gcc", "g++", "cc", "c++", "clang", "clang++":
		return dCompiler
	case "docker", "podman", "buildah":
		if sub == "build" || (sub == "buildx" && len(rest) > 0 && rest[0] == "build") || (sub == "image" && len(rest) > 0 && rest[0] == "build") {
			return dDocker
		}
		if sub == "compose" && len(rest) > 0 && rest[0] == "build" {
			return dDocker
		}
	case "pip", "pip3":
		if sub == "install" || sub == "download" || sub == "uninstall" {
			return dPip
		}
	case "apt", "apt-get", "aptitude":
		switch sub {
		case "install", "upgrade", "dist-upgrade", "full-upgrade", "remove", "purge", "autoremove", "update", "reinstall":
			return dApt
		}
	case "terraform", "tofu", "terragrunt":
		switch sub {
		case "apply", "destroy", "init", "validate", "refresh", "import", "taint", "untaint", "get":
			return dTerraform
		}
	case "git":
		switch sub {
		case "status":
			return dGitStatus
		case "log":
			return dGitLog
		case "diff", "show":
			return dGitDiff
		case "push", "pull", "fetch", "clone":
			return dGitRemote
		}
	case "curl":
		return dCurl
	case "wget":
		return dWget
	}
	return pickToolDistiller(ci.Program, sub, rest)
}

// isInstallSub reports the package-manager subcommands that install.
func isInstallSub(sub string) bool {
	switch sub {
	case "install", "i", "ci", "add", "update", "upgrade", "up", "remove", "rm", "uninstall", "un", "prune", "dedupe", "rebuild", "link":
		return true
	}
	return false
}

// hasPrefixAny reports whether s starts with one of the prefixes.
func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// containsAny reports whether s contains one of the substrings.
func containsAny(s string, subs ...string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// leadingCount parses the number at the start of s ("12 passed" → 12, true).
func leadingCount(s string) (int, bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		if n > 1<<40 {
			return 0, false
		}
		i++
	}
	return n, i > 0
}

// countBefore returns the number written just before word in s ("3 failed"
// → 3) and whether there is one.
func countBefore(s, word string) (int, bool) {
	i := strings.Index(s, word)
	for i >= 0 {
		j := i
		for j > 0 && s[j-1] == ' ' {
			j--
		}
		k := j
		for k > 0 && s[k-1] >= '0' && s[k-1] <= '9' {
			k--
		}
		if k < j {
			n, _ := leadingCount(s[k:j])
			return n, true
		}
		next := strings.Index(s[i+len(word):], word)
		if next < 0 {
			break
		}
		i += len(word) + next
	}
	return 0, false
}
