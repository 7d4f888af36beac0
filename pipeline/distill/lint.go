package distill

import (
	"strconv"
	"strings"
)

// Linter and formatter distillers: eslint, tsc, prettier,
// ruff, golangci-lint, mypy and flake8. A linter's findings are its answer:
// every diagnostic line (location, severity, message, rule) and the tool's
// own tally stay verbatim. What goes is what repeats the source the agent
// already has (the code frame under a diagnostic: the quoted source line
// and its ^/~ underline), npx's install chatter, log lines at INFO level
// and, for `prettier --write`, the files it left unchanged. Each returns
// ok only when it saw the tool's own verdict (a tally, a success line, or
// on a failing run the diagnostics themselves), and on a failing run only
// when that verdict is a failing one.

// The linter and formatter distillers, by name.
var (
	dESLint   = &Distiller{"eslint", distillESLint}
	dTsc      = &Distiller{"tsc", distillTsc}
	dPrettier = &Distiller{"prettier", distillPrettier}
	dRuff     = &Distiller{"ruff", distillRuff}
	dGolangci = &Distiller{"golangci-lint", distillGolangci}
	dMypy     = &Distiller{"mypy", distillMypy}
	dFlake8   = &Distiller{"flake8", distillFlake8}
)

// jsToolSubs are the JS tools a package manager runs directly ("yarn
// eslint .", "pnpm tsc").
var jsToolSubs = map[string]*Distiller{"eslint": dESLint, "tsc": dTsc, "vue-tsc": dTsc, "prettier": dPrettier}

// pickToolDistiller is pickDistiller's arm for linters and formatters,
// security scanners, cloud and infrastructure CLIs and go build/vet/get:
// prog, sub and rest are as pickDistiller computes them. nil means none.
func pickToolDistiller(prog, sub string, rest []string) *Distiller {
	if d := pickLintDistiller(prog, sub); d != nil {
		return d
	}
	if d := pickSecurityDistiller(prog, sub); d != nil {
		return d
	}
	if d := pickCloudDistiller(prog, sub, rest); d != nil {
		return d
	}
	return pickGoBuildDistiller(prog, sub, rest)
}

// pickLintDistiller picks a linter's or formatter's distiller.
func pickLintDistiller(prog, sub string) *Distiller {
	switch prog {
	case "eslint":
		return dESLint
	case "tsc", "vue-tsc":
		return dTsc
	case "prettier":
		return dPrettier
	case "ruff":
		switch sub {
		case "rule", "config", "linter", "clean", "version", "help", "server", "analyze", "generate-shell-completion":
			return nil
		}
		return dRuff
	case "golangci-lint":
		if sub == "run" {
			return dGolangci
		}
	case "mypy", "dmypy":
		return dMypy
	case "flake8", "pflake8":
		return dFlake8
	case "yarn", "pnpm", "bun":
		// `yarn eslint .`, `pnpm tsc --noEmit`: the package manager runs the
		// tool directly.
		return jsToolSubs[sub]
	}
	return nil
}

// stripEscapes returns s without its ANSI escape sequences (CSI "ESC [ …
// final byte", OSC "ESC ] … BEL", character set designations and
// two-byte escapes); s itself when it
// has none, without allocating.
func stripEscapes(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']':
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		case '(', ')', '*', '+':
			i += 2 // a character set designation: ESC ( B
		default:
			i++
		}
	}
	return b.String()
}

// plain returns line i without ANSI escapes and surrounding whitespace: the
// text a distiller matches (the output keeps the line as it was).
func (d *dctx) plain(i int) string { return strings.TrimSpace(stripEscapes(d.raw(i))) }

// diagLocation parses the location a diagnostic line starts with,
// "path:line[:col]: rest" (gcc, go, flake8, mypy, ruff concise, golangci-lint)
// or tsc's "path(line,col): rest" and "path:line:col - rest", and returns
// rest. The path holds no blank; the line is digits.
func diagLocation(t string) (string, bool) {
	// tsc: path(12,5): rest
	if p := strings.Index(t, "("); p > 0 && !strings.ContainsAny(t[:p], " \t") {
		if q := strings.Index(t[p:], "): "); q > 0 {
			inner := t[p+1 : p+q]
			if c := strings.IndexByte(inner, ','); c > 0 && isDigits(inner[:c]) && isDigits(inner[c+1:]) {
				return t[p+q+3:], true
			}
		}
	}
	c := strings.IndexByte(t, ':')
	for c == 1 && len(t) > 2 && (t[2] == '\\' || t[2] == '/') {
		// a Windows drive letter: C:\x.go:3:1: …
		if k := strings.IndexByte(t[2:], ':'); k > 0 {
			c = 2 + k
		} else {
			return "", false
		}
	}
	if c <= 0 || strings.ContainsAny(t[:c], " \t") {
		return "", false
	}
	rest := t[c+1:]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return "", false
	}
	rest = rest[n:]
	if len(rest) > 1 && rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9' {
		k := 1
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		rest = rest[k:]
	}
	switch {
	case strings.HasPrefix(rest, ": "):
		return rest[2:], true
	case strings.HasPrefix(rest, " - "): // tsc --pretty
		return rest[3:], true
	case rest == ":":
		return "", true
	}
	return "", false
}

// caretOnly reports an underline line: only blanks, ^ and ~ (at least one
// of them), as gcc, mypy --pretty, flake8 --show-source, golangci-lint and
// tsc --pretty print under a quoted source line.
func caretOnly(t string) bool {
	mark := false
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '^', '~':
			mark = true
		case ' ', '\t':
		default:
			return false
		}
	}
	return mark
}

// dropCodeFrames drops the quoted source line and its underline printed
// under a diagnostic: a non-blank line that is not itself a diagnostic,
// followed by a caret-only line. Both lines only repeat the source at a
// location the diagnostic already names.
func dropCodeFrames(d *dctx) {
	for i := 0; i+1 < d.n(); i++ {
		if d.blank(i) || !caretOnly(d.plain(i+1)) {
			continue
		}
		if _, diag := diagLocation(d.plain(i)); diag {
			continue
		}
		d.drop(i)
		d.drop(i + 1)
		i++
	}
}

// npxNoise reports npm's own chatter when npx fetches the tool first.
func npxNoise(t string) bool {
	return strings.HasPrefix(t, "npm warn exec ") || strings.HasPrefix(t, "npm WARN exec ")
}

// summedCount reads "N word" at the start of s ("14 problems" → 14).
func summedCount(s string) (int, bool) { return leadingCount(strings.TrimSpace(s)) }

// distillESLint: eslint with the stylish (default), compact or unix
// formatter. Keeps every file header and finding row, the "✖ N problems (E
// errors, W warnings)" tally and its fixable line, "ESLint found too many
// warnings" and crash reports; drops npx install chatter. Its verdict is
// the tally; a failing run needs errors in it, too many warnings, or a
// crash.
func distillESLint(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case npxNoise(t):
			d.drop(i)
		case strings.HasPrefix(t, "✖ ") && strings.Contains(t, " problem"):
			verdict = true
			if n, ok := countBefore(t, " error"); ok && n > 0 {
				failing = true
			}
		case tallyWord(t, "problem") || tallyWord(t, "problems"): // compact, unix
			verdict = true
			if n, _ := summedCount(t); n > 0 {
				failing = true
			}
		case strings.HasPrefix(t, "ESLint found too many warnings"):
			verdict, failing = true, true
		case strings.HasPrefix(t, "Oops! Something went wrong!"):
			verdict, failing = true, true
		}
	}
	return d.recognised(verdict, failing)
}

// tscDiagnostic reports a tsc diagnostic: "error TS1234:" after a location
// or at the start of the line (a global error such as an unknown option).
func tscDiagnostic(t string) bool {
	k := strings.Index(t, "error TS")
	if k < 0 {
		return false
	}
	rest := t[k+len("error TS"):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != ':' {
		return false
	}
	if k == 0 {
		return true
	}
	_, loc := diagLocation(t)
	return loc
}

// distillTsc: tsc and vue-tsc, plain or --pretty, one-shot or watch. Keeps
// every diagnostic with its continuation lines and related locations,
// "Found N errors in M files." and the per-file error table; drops the code
// frame under each --pretty diagnostic (the numbered source line and its
// ~~~ underline) and npx install chatter. Its verdict is a diagnostic or a
// "Found N errors" line; --version, --listFiles and the like pass raw.
func distillTsc(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case npxNoise(t):
			d.drop(i)
		case tscDiagnostic(t):
			verdict, failing = true, true
		case strings.HasPrefix(t, "Found ") || strings.Contains(t, "] Found "):
			k := strings.Index(t, "Found ")
			if n, ok := summedCount(t[k+len("Found "):]); ok && strings.Contains(t, " error") {
				verdict = true
				failing = failing || n > 0
			}
		}
	}
	dropCodeFrames(d)
	return d.recognised(verdict, failing)
}

// distillPrettier: prettier --check and --write (any other mode prints
// formatted code or bare paths and passes raw). --check drops "Checking
// formatting..." and keeps every "[warn] path", the "Code style issues
// found" or "All matched files use Prettier code style!" verdict and every
// [error] line. --write keeps the files it rewrote ("path 21ms") and drops
// those it left unchanged, with a marker that counts them.
func distillPrettier(d *dctx) bool {
	check := hasArg(d.args, "--check", "-c")
	write := hasArg(d.args, "--write", "-w")
	if check == write {
		return false
	}
	verdict, failing := false, false
	unchanged, firstUnchanged := 0, -1
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case npxNoise(t):
			d.drop(i)
		case strings.HasPrefix(t, "[error]"):
			verdict, failing = true, true
		case check && t == "Checking formatting...":
			d.drop(i)
		case check && strings.HasPrefix(t, "All matched files use Prettier code style"):
			verdict = true
		case check && strings.HasPrefix(t, "[warn] Code style issues"):
			verdict, failing = true, true
		case write && prettierWritten(t):
			verdict = true
			if strings.HasSuffix(t, "(unchanged)") || strings.HasSuffix(t, "(cached)") {
				d.drop(i)
				unchanged++
				if firstUnchanged < 0 {
					firstUnchanged = i
				}
			}
		}
	}
	if unchanged > 0 {
		d.insert(firstUnchanged, "[OMNI: "+strconv.Itoa(unchanged)+" unchanged files not shown]")
	}
	return d.recognised(verdict, failing)
}

// prettierWritten reports a --write result line: "path 21ms", optionally
// followed by "(unchanged)" or "(cached)".
func prettierWritten(t string) bool {
	t = strings.TrimSuffix(strings.TrimSuffix(t, " (unchanged)"), " (cached)")
	sp := strings.LastIndexByte(t, ' ')
	if sp <= 0 || !strings.HasSuffix(t, "ms") {
		return false
	}
	num := t[sp+1 : len(t)-2]
	num = strings.Replace(num, ".", "", 1)
	return isDigits(num) && !strings.ContainsAny(t[:sp], "\t")
}

// ruffGutter reports a line of ruff's code frame: the gutter "  |",
// "12 | source" or "   |     ^^^ F401". l is the line without its ending.
func ruffGutter(l string) bool {
	s := strings.TrimLeft(l, " ")
	k := 0
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k > 0 {
		rest := s[k:]
		if !strings.HasPrefix(rest, " ") {
			return false
		}
		rest = strings.TrimLeft(rest, " ")
		return rest == "|" || strings.HasPrefix(rest, "| ")
	}
	if len(s) == len(l) {
		return false // not indented: a table row, not a gutter
	}
	return s == "|" || strings.HasPrefix(s, "| ")
}

// distillRuff: ruff check (full or concise output) and ruff format. Keeps
// every diagnostic header, its " --> path:line:col" location and its help
// line, "Found N errors.", the fixable hints, "All checks passed!" and the
// format tallies ("N files reformatted", "Would reformat: path"); drops the
// code frame gutter lines ("  |", "12 | source", "   |   ^^^"). With
// --diff nothing is dropped: the diff is the answer.
func distillRuff(d *dctx) bool {
	frames := !hasArg(d.args, "--diff")
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		l := stripEscapes(d.line(i))
		switch {
		case t == "All checks passed!":
			verdict = true
		case strings.HasPrefix(t, "Found ") && strings.Contains(t, " error"):
			n, ok := summedCount(t[len("Found "):])
			if !ok {
				continue
			}
			verdict = true
			if strings.Contains(t, " remaining") {
				n, _ = countBefore(t, " remaining")
			}
			failing = failing || n > 0
		case strings.HasPrefix(t, "Would reformat: "):
			verdict, failing = true, true
		case strings.Contains(t, " would be reformatted"):
			verdict = true
			if n, _ := summedCount(t); n > 0 {
				failing = true
			}
		case strings.Contains(t, " reformatted") || strings.Contains(t, " left unchanged") || strings.Contains(t, " already formatted"):
			if _, ok := summedCount(t); ok {
				verdict = true
			}
		case strings.HasPrefix(t, "error: "):
			verdict, failing = true, true
		case frames && !d.blank(i) && ruffGutter(l):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillGolangci: golangci-lint run (v1 and v2). Keeps every issue line
// "path:line:col: message (linter)", the "N issues:" tally with its
// per-linter counts, "0 issues." and errors; drops the quoted source line
// and caret under each issue, and INFO log lines (-v). v1 prints no tally:
// its issue lines are the verdict of a failing run.
func distillGolangci(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.HasPrefix(t, "INFO ") || strings.HasPrefix(t, "level=info "):
			d.drop(i)
		case strings.HasSuffix(t, " issues:") || strings.HasSuffix(t, " issues.") || strings.HasSuffix(t, " issue:") || strings.HasSuffix(t, " issue."):
			if n, ok := summedCount(t); ok {
				verdict = true
				failing = failing || n > 0
			}
		case strings.HasPrefix(t, "level=error ") || strings.HasPrefix(t, "ERRO ") || strings.HasPrefix(t, "Error: "):
			verdict, failing = true, true
		default:
			if rest, ok := diagLocation(t); ok && strings.HasSuffix(rest, ")") && strings.Contains(rest, " (") {
				verdict, failing = true, true
			}
		}
	}
	dropCodeFrames(d)
	return d.recognised(verdict, failing)
}

// distillMypy: mypy and dmypy. Keeps every "path:line: error|note|warning:"
// line (and --pretty's wrapped continuations), "Found N errors in M files
// (checked K source files)" and "Success: no issues found"; drops the
// quoted source line and its ^~~~ underline printed by --pretty.
func distillMypy(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.plain(i)
		switch {
		case strings.HasPrefix(t, "Success: no issues found"):
			verdict = true
		case strings.HasPrefix(t, "Found ") && strings.Contains(t, " error"):
			if n, ok := summedCount(t[len("Found "):]); ok {
				verdict = true
				failing = failing || n > 0
			}
		}
	}
	dropCodeFrames(d)
	return d.recognised(verdict, failing)
}

// flake8Finding reports "path:line:col: CODE message".
func flake8Finding(t string) bool {
	rest, ok := diagLocation(t)
	if !ok {
		return false
	}
	k := 0
	for k < len(rest) && rest[k] >= 'A' && rest[k] <= 'Z' {
		k++
	}
	n := k
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return k > 0 && n > k && (n == len(rest) || rest[n] == ' ')
}

// distillFlake8: flake8. It prints no tally of its own (except --count and
// --statistics, which stay): its finding lines are its verdict. Keeps
// every finding; drops the quoted source line and caret of --show-source.
func distillFlake8(d *dctx) bool {
	findings := 0
	for i := 0; i < d.n(); i++ {
		if flake8Finding(d.plain(i)) {
			findings++
		}
	}
	if findings == 0 {
		return false
	}
	dropCodeFrames(d)
	return true
}
