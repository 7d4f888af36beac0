package pipeline

import (
	"strings"
)

// Test-runner distillers (issue 3 §1-2). Each one drops the lines of
// passing tests and the runner's progress noise, and keeps everything
// else: every failure with its location and message, the runner's own
// tally lines verbatim (counts are never recomputed), skip reasons, and
// anything it does not recognise. Each returns ok only when it saw the
// runner's own verdict; on a failing run, only when that verdict is a
// failing one.

// distillGoTest: go test, including -v and -run (not -json, which Sniff
// passes as NDJSON). Drops "=== RUN/PAUSE/CONT/NAME" and "--- PASS" lines,
// and goroutine frames inside the standard library's testing/runtime
// packages; keeps "ok pkg", "FAIL pkg", "?  pkg [no test files]" (a tally
// line: the package was built and has no tests), "PASS", "FAIL", "--- FAIL/
// SKIP", test output, panics and build errors.
func distillGoTest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		l := d.line(i)
		t := strings.TrimSpace(l)
		switch {
		// A header or a pass line goes only when no test output sits next
		// to it: a passing test's own log lines keep their "=== RUN" and
		// "--- PASS" around them, so no line reads as another test's output.
		case hasPrefixAny(t, "=== RUN", "=== PAUSE", "=== CONT", "=== NAME"):
			if i+1 >= d.n() || goStructural(strings.TrimSpace(d.line(i+1))) {
				d.drop(i)
			}
		case strings.HasPrefix(t, "--- PASS:"):
			if i == 0 || goStructural(strings.TrimSpace(d.line(i-1))) {
				d.drop(i)
			}
		case strings.HasPrefix(l, "?") && strings.HasSuffix(t, "[no test files]"):
			verdict = true
		case strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t"):
			verdict = true
		case l == "PASS":
			verdict = true
		case l == "FAIL" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL "):
			verdict, failing = true, true
		case strings.HasPrefix(t, "--- FAIL:"):
			failing = true
		case i+1 < d.n() && goStdFrame(t, d.line(i+1)):
			d.drop(i)
			d.drop(i + 1)
			i++
		}
	}
	return d.recognised(verdict, failing)
}

// goStructural reports a go test line that is the runner's own structure
// (headers, results, verdicts), not a test's output.
func goStructural(t string) bool {
	return hasPrefixAny(t, "=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS:", "--- SKIP:", "--- FAIL:", "ok ", "ok\t", "FAIL\t", "FAIL ") ||
		t == "PASS" || t == "FAIL" || strings.HasSuffix(t, "[no test files]")
}

// goStdFrame reports a goroutine frame (function line, then "\tpath:line
// +0x…") inside the standard library's testing, runtime or reflect code:
// noise around a test panic.
func goStdFrame(fn, loc string) bool {
	if !strings.HasPrefix(loc, "\t") || !strings.Contains(loc, ".go:") {
		return false
	}
	if !hasPrefixAny(fn, "testing.", "runtime.", "panic(", "reflect.", "created by testing.", "created by runtime.") {
		return false
	}
	return containsAny(loc, "/src/testing/", "/src/runtime/", "/src/reflect/")
}

// cargoProgress reports cargo's right-aligned progress lines.
func cargoProgress(t string) bool {
	return hasPrefixAny(t, "Compiling ", "Checking ", "Downloaded ", "Downloading ", "Updating ", "Locking ",
		"Adding ", "Blocking ", "Fresh ", "Unpacking ", "Documenting ", "Packaging ", "Verifying ",
		"Archiving ", "Uploading ", "Removing ", "Packaged ", "Dirty ")
}

// distillCargoTest: cargo test/nextest. Drops progress lines, "running N
// tests", "test … ... ok" and backtrace frames inside the Rust standard
// library; keeps "Running"/"Doc-tests" headers, every "test result:" line,
// failures, panics and errors.
func distillCargoTest(d *dctx) bool {
	verdict, failing := false, false
	named := cargoTestFilter(d.args)
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case cargoProgress(t):
			d.drop(i)
		case strings.HasPrefix(t, "running ") && strings.HasSuffix(t, " tests") || strings.HasPrefix(t, "running 1 test") && len(t) == len("running 1 test"):
			d.drop(i)
		case strings.HasPrefix(t, "test ") && strings.HasSuffix(t, " ... ok"):
			if !named {
				d.drop(i)
			}
		case strings.HasPrefix(t, "PASS [") && strings.Contains(t, "]"): // nextest
			d.drop(i)
		case strings.HasPrefix(t, "test result: "):
			verdict = true
			if strings.HasPrefix(t, "test result: FAILED") {
				failing = true
			}
		case strings.HasPrefix(t, "Summary [") && strings.Contains(t, "tests run"): // nextest
			verdict = true
			if strings.Contains(t, "failed") {
				failing = true
			}
		case strings.HasPrefix(t, "error: test failed"), strings.HasPrefix(t, "error: could not compile"),
			strings.HasPrefix(t, "error: failed to compile"), strings.HasPrefix(t, "error: "+"no matching package"):
			verdict, failing = true, true
		case rustFrame(d, i):
			d.drop(i)
			if i+1 < d.n() && strings.HasPrefix(d.trim(i+1), "at ") {
				d.drop(i + 1)
				i++
			}
		}
	}
	return d.recognised(verdict, failing)
}

// cargoTestFilter reports a `cargo test NAME` run: a test-name filter (a
// word that is not a flag, before "--", after the subcommand) selects the
// tests, and the passing ones are then what the user asked to see.
func cargoTestFilter(args []string) bool {
	sub := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return false
		case !sub:
			sub = a == "test" || a == "nextest" || a == "t"
		case strings.HasPrefix(a, "-"):
			// Flags with a separate value.
			switch a {
			case "-p", "--package", "--test", "--bin", "--example", "--bench", "--features", "-F", "--target",
				"--manifest-path", "-j", "--jobs", "--profile", "--target-dir", "--color", "--message-format", "-Z", "--config":
				i++
			}
		case a == "run" || a == "list": // nextest subcommands
		default:
			return true
		}
	}
	return false
}

// rustFrame reports a backtrace frame ("  4: symbol", optionally followed
// by "at path:line:col") inside the Rust standard library or a registry
// crate.
func rustFrame(d *dctx, i int) bool {
	t := d.trim(i)
	if _, ok := leadingCount(t); !ok {
		return false
	}
	k := strings.IndexByte(t, ':')
	if k <= 0 || !isDigits(t[:k]) || k+2 > len(t) || t[k+1] != ' ' {
		return false
	}
	sym := t[k+2:]
	if i+1 < d.n() {
		at := d.trim(i + 1)
		if strings.HasPrefix(at, "at ") {
			return containsAny(at, "/rustc/", "/.cargo/registry/", "/library/std/", "/library/core/", "/library/alloc/", "/library/test/")
		}
	}
	return hasPrefixAny(sym, "std::", "core::", "alloc::", "__rust", "rust_", "<fn", "test::", "<alloc::", "<core::", "<std::")
}

// pytestTally reports whether a line is pytest's own tally ("=== 3
// failed, 14 passed in 0.08s ===", "736 passed in 30.90s", "no tests ran
// in 0.01s") and whether it states failures or errors.
func pytestTally(t string) (tally, failing bool) {
	s := strings.TrimSpace(strings.Trim(t, "="))
	if strings.HasPrefix(s, "no tests ran") {
		return true, false
	}
	in := strings.LastIndex(s, " in ")
	if in <= 0 {
		return false, false
	}
	tail := s[in+4:]
	if tail == "" || tail[0] < '0' || tail[0] > '9' {
		return false, false
	}
	head := s[:in]
	for _, part := range strings.Split(head, ", ") {
		if _, ok := leadingCount(part); !ok {
			return false, false
		}
		word := strings.TrimSpace(strings.TrimLeft(part, "0123456789"))
		switch word {
		case "passed", "skipped", "deselected", "xfailed", "xpassed", "warning", "warnings", "rerun", "subtests passed":
		case "failed", "error", "errors", "subtests failed":
			failing = true
		default:
			return false, false
		}
	}
	return true, failing
}

// pytestProgress reports a progress line of outcome letters
// ("tests/test_x.py ..F.s   [ 45%]", "......   [  9%]").
func pytestProgress(t string) bool {
	s := t
	if i := strings.LastIndex(s, "["); i > 0 && strings.HasSuffix(s, "%]") {
		s = strings.TrimSpace(s[:i])
	}
	if sp := strings.IndexByte(s, ' '); sp > 0 {
		first := s[:sp]
		if !strings.Contains(first, ".py") && !strings.Contains(first, "/") {
			return false
		}
		s = strings.TrimSpace(s[sp+1:])
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', 's', 'S', 'x', 'X', 'f', 'F', 'E', 'p', 'P', 'R':
		default:
			return false
		}
	}
	return strings.ContainsAny(s, ".sxX") || t != s
}

// pytestLocation reports a traceback location line: "path:N: …" or
// "path:N:" (a path without blanks, a line number, a colon).
func pytestLocation(t string) bool {
	for c := strings.IndexByte(t, ':'); c > 0; {
		if strings.ContainsAny(t[:c], " \t") {
			return false
		}
		rest := t[c+1:]
		k := 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k > 0 && k < len(rest) && rest[k] == ':' {
			return true
		}
		n := strings.IndexByte(rest, ':')
		if n < 0 {
			return false
		}
		c += 1 + n
	}
	return false
}

// distillPytest: pytest (any verbosity). Drops the session header,
// outcome-letter progress lines, and inside failure and error reports the
// source listing and local-variable lines; keeps section banners, test
// headers, ">" statement lines (or, with --tb=short, the statement under
// each "path:N: in f" location), "E" lines, locations, captured output,
// each warning once (a repeated location line and the docs link go), the
// short summary and the tally. -v result lines are kept (the
// user asked for them).
func distillPytest(d *dctx) bool {
	verdict, failing := false, false
	const (
		stHeader = iota
		stBody
		stReport  // FAILURES / ERRORS: drop source listings
		stCapture // captured output inside a report
		stOther   // short summary, other sections
		stWarn    // warnings summary: repeated lines and the docs link go
	)
	st := stHeader
	afterIn := false // the previous line was a --tb=short location "path:N: in f"
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		if t == "" {
			continue
		}
		prevIn := afterIn
		afterIn = false
		if strings.HasPrefix(t, "==") && strings.HasSuffix(t, "==") {
			if tally, f := pytestTally(t); tally {
				verdict = true
				failing = failing || f
				st = stOther
				continue
			}
			switch {
			case strings.Contains(t, " test session starts "):
				d.drop(i)
				st = stHeader
			case strings.Contains(t, " FAILURES ") || strings.Contains(t, " ERRORS "):
				st = stReport
			case strings.Contains(t, " warnings summary "):
				st = stWarn
			default:
				st = stOther
			}
			continue
		}
		if tally, f := pytestTally(t); tally && !strings.HasPrefix(d.line(i), " ") {
			verdict = true
			failing = failing || f
			continue
		}
		if strings.HasPrefix(t, "!!!") {
			failing = failing || containsAny(t, "stopping after", "Interrupted", "error")
			continue
		}
		if st == stHeader {
			if hasPrefixAny(t, "platform ", "cachedir:", "rootdir:", "plugins:", "collecting ", "collected ",
				"configfile:", "testpaths:", "Using --randomly-seed", "hypothesis profile", "benchmark:",
				"django:", "asyncio:", "Test order shuffled", "timeout:", "sensitiveurl:", "metadata:",
				"Required test coverage", "created:", "anyio:", "cov:", "xdist") ||
				(strings.HasPrefix(t, "[gw") && strings.Contains(t, "] ")) || t == "collecting ..." {
				d.drop(i)
				continue
			}
		}
		if pytestProgress(t) {
			d.drop(i)
			if st == stHeader {
				st = stBody
			}
			continue
		}
		if st == stHeader {
			st = stBody
		}
		if st == stWarn {
			// A warning's location is repeated once per occurrence.
			if strings.HasPrefix(t, "-- Docs: ") || (i > 0 && d.trim(i-1) == t) {
				d.drop(i)
			}
			continue
		}
		switch st {
		case stReport, stCapture:
			switch {
			case strings.HasPrefix(t, "_") && strings.HasSuffix(t, "_"):
				if strings.Trim(t, "_ ") == "" {
					d.drop(i) // "_ _ _ _" separator between frames
				}
				st = stReport
			case strings.HasPrefix(t, "---") && strings.Contains(t, "Captured"):
				st = stCapture
			case st == stCapture:
				// captured output is kept whole
			case pytestLocation(t):
				afterIn = strings.Contains(t, ": in ")
			case strings.HasPrefix(d.line(i), ">"), t == "E" || strings.HasPrefix(t, "E "),
				strings.HasPrefix(d.line(i), "E\t"):
			case prevIn && strings.HasPrefix(d.line(i), " "):
				// --tb=short: the statement under its location
			case strings.HasPrefix(t, "[gw") && strings.Contains(t, "] "):
				d.drop(i)
			case pytestErrorProse(d.line(i)):
				// "ImportError while importing test module '…'": pytest's own
				// statement of a collection error, not source.
			default:
				d.drop(i)
			}
		}
	}
	return d.recognised(verdict, failing)
}

// pytestErrorProse reports an unindented line of a report whose first word
// names an exception ("ImportError while importing test module '…'",
// "SyntaxError: …"): a statement of the error, where source listings are
// indented.
func pytestErrorProse(l string) bool {
	if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '>' {
		return false
	}
	w := l
	if sp := strings.IndexAny(w, " :"); sp > 0 {
		w = w[:sp]
	}
	return strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "Exception") || strings.HasSuffix(w, "Exit") ||
		strings.HasSuffix(w, "Interrupt")
}

// unittestDjangoNoise lists the Django test runner's database chatter.
var unittestDjangoNoise = []string{
	"Creating test database for alias", "Cloning test database for alias", "Destroying test database for alias",
	"Testing against Django installed in", "Using existing test database", "Destroying old test database",
	"Operations to perform:", "Synchronize unmigrated apps:", "Apply all migrations:",
	"Synchronizing apps without migrations:", "Creating tables...", "Creating table ", "Running deferred SQL...",
	"Running migrations:", "Using existing clone for alias", "Got an error creating the test database",
}

// distillUnittest: python -m unittest, Django's manage.py test and
// runtests.py. Drops progress dots, "... ok" lines of verbose runs and the
// test-database chatter; keeps every failure and error block, skips, "Ran
// N tests" and the OK/FAILED verdict.
func distillUnittest(d *dctx) bool {
	ran, verdict, failing := false, false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case t == "":
		case strings.HasPrefix(t, "Ran ") && (strings.HasSuffix(t, "s") && strings.Contains(t, " test")):
			ran = true
		case t == "OK" || strings.HasPrefix(t, "OK ("):
			verdict = true
		case strings.HasPrefix(t, "FAILED (") || t == "FAILED":
			verdict, failing = true, true
		case strings.HasSuffix(t, " ... ok") || strings.HasSuffix(t, "... ok"):
			d.drop(i)
		case unittestDots(t):
			d.drop(i)
		case hasPrefixAny(t, unittestDjangoNoise...):
			d.drop(i)
		case strings.HasPrefix(t, "Applying ") && strings.HasSuffix(t, "... OK"):
			d.drop(i)
		case strings.HasPrefix(t, "Found ") && strings.HasSuffix(t, " test(s)."):
			d.drop(i)
		case strings.HasPrefix(t, "System check identified no issues"):
			d.drop(i)
		}
	}
	ok := ran && verdict
	return d.recognised(ok, failing)
}

// unittestDots reports a progress line of unittest outcome characters.
func unittestDots(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', 's', 'x', 'u', 'E', 'F':
		default:
			return false
		}
	}
	return strings.ContainsAny(t, ".sxu")
}

// distillSympy: sympy's bin/test. Drops the environment header and
// progress lines that hold no failure; keeps failure reports and the
// "tests finished" tally.
func distillSympy(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.Contains(t, "tests finished:"):
			verdict = true
			if containsAny(t, " failed", "exceptions", "exception") {
				failing = true
			}
		case hasPrefixAny(t, "executable:", "architecture:", "cache:", "ground types:", "numpy:", "random seed:",
			"hash randomization:", "sympy/", "python:") && (strings.Contains(t, ":") && !strings.Contains(t, "[FAIL]")):
			if strings.HasPrefix(t, "sympy/") {
				// "sympy/x/tests/test_y.py[12] ....f.." progress line
				if j := strings.IndexByte(t, ']'); j > 0 && sympyDots(strings.TrimSpace(t[j+1:])) {
					d.drop(i)
				}
				continue
			}
			d.drop(i)
		case strings.HasPrefix(t, "sympy/") && strings.Contains(t, "["):
			if j := strings.IndexByte(t, ']'); j > 0 && sympyDots(strings.TrimSpace(t[j+1:])) {
				d.drop(i)
			}
		case sympyDots(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// sympyDots reports a sympy progress run: dots, f, s, w, T and an optional
// trailing "[OK]".
func sympyDots(t string) bool {
	t = strings.TrimSpace(strings.TrimSuffix(t, "[OK]"))
	if t == "" {
		return true
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', 'f', 's', 'w', 'T', 'x', ' ':
		default:
			return false
		}
	}
	return true
}

// distillJest: jest. Drops "✓ name (N ms)" lines of passing tests and the
// code frames under failures (dropJSCodeFrames); keeps PASS/FAIL file
// lines, ✕ lines, every ● failure block with its message, diff and stack,
// and the Test Suites/Tests/Snapshots/Time tallies.
func distillJest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ "):
			d.drop(i)
		case strings.HasPrefix(t, "Tests:"):
			verdict = true
			if n, ok := countBefore(t, " failed"); ok && n > 0 {
				failing = true
			}
		case strings.HasPrefix(t, "Test Suites:"):
			if n, ok := countBefore(t, " failed"); ok && n > 0 {
				failing = true
			}
		}
	}
	dropEmptyGroups(d)
	dropJSCodeFrames(d)
	return d.recognised(verdict, failing)
}

// dropEmptyGroups drops the describe-block headers of a test tree (jest
// --verbose, mocha) whose every nested line was dropped: a suite name with
// nothing under it anymore. Headers are kept whenever something below
// them survives, and a failure line is never dropped.
func dropEmptyGroups(d *dctx) {
	indent := func(i int) int {
		l := d.line(i)
		k := 0
		for k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			k++
		}
		return k
	}
	for i := d.n() - 1; i >= 0; i-- {
		if !d.keep[i] || d.blank(i) || IsFailureLine(d.raw(i)) {
			continue
		}
		k := indent(i)
		if k == 0 {
			continue
		}
		nested, kept := 0, false
		for j := i + 1; j < d.n() && !d.blank(j) && indent(j) > k; j++ {
			nested++
			if d.keep[j] {
				kept = true
				break
			}
		}
		if nested > 0 && !kept {
			d.drop(i)
		}
	}
}

// vitestTally reports vitest's "Tests  1 failed | 12 passed (15)" or
// "Test Files  …" lines and whether they state failures.
func vitestTally(t string) (tally, failing bool) {
	if !strings.HasPrefix(t, "Tests ") && !strings.HasPrefix(t, "Test Files ") {
		return false, false
	}
	if !containsAny(t, " passed", " failed", " skipped", " todo") {
		return false, false
	}
	n, ok := countBefore(t, " failed")
	return true, ok && n > 0
}

// distillVitest: vitest run. Drops the per-test "✓ name" lines (file lines
// "✓ file (N tests)" stay), the start time and the code frames under
// failures; keeps ❯/× lines, the → assertion messages, the failure details
// with their diff and "❯ file:line:col" location, and the Test Files/Tests
// tallies.
func distillVitest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ ")) && !strings.Contains(t, " test"):
			d.drop(i)
		case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ ")) && strings.HasPrefix(d.line(i), "   "):
			d.drop(i) // a test inside a listed file
		case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ ")) && strings.Contains(t, " > "):
			d.drop(i) // the verbose reporter's "✓ file > suite > test"
		case strings.HasPrefix(t, "Start at "):
			d.drop(i)
		default:
			if tally, f := vitestTally(t); tally {
				verdict = true
				failing = failing || f
			}
		}
	}
	dropJSCodeFrames(d)
	return d.recognised(verdict, failing)
}

// jsFrameLine reports a line of the source excerpt jest and vitest print
// under a failure (a "code frame"): "   17 |     code", "  > 19 |     code",
// "     15|   code", or the underline "       |      ^".
func jsFrameLine(t string) bool {
	t = strings.TrimSpace(t)
	if strings.HasPrefix(t, ">") {
		t = strings.TrimSpace(t[1:])
	}
	if strings.HasPrefix(t, "|") {
		rest := strings.TrimSpace(t[1:])
		return rest == "" || caretOnly(rest)
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 {
		return false
	}
	rest := strings.TrimLeft(t[n:], " ")
	return strings.HasPrefix(rest, "|")
}

// dropJSCodeFrames drops the code frames of jest and vitest failures: runs
// of two or more frame lines (jsFrameLine) holding an underline or a ">"
// pointer. They quote the source at the location the kept "at …" or "❯
// file:line:col" line names; a failure line among them is kept anyway.
func dropJSCodeFrames(d *dctx) {
	for i := 0; i < d.n(); {
		if !jsFrameLine(d.raw(i)) {
			i++
			continue
		}
		j, pointer := i, false
		for j < d.n() && !d.blank(j) && jsFrameLine(d.raw(j)) {
			t := strings.TrimSpace(d.line(j))
			if strings.HasPrefix(t, ">") || strings.Contains(t, "^") {
				pointer = true
			}
			j++
		}
		if j-i >= 2 && pointer {
			for k := i; k < j; k++ {
				d.drop(k)
			}
		}
		i = j
	}
}

// distillMocha: mocha. Drops ✓/✔ lines; keeps suites, failures with
// their stacks, and the "N passing/failing/pending" tallies.
func distillMocha(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "✔ ") || strings.HasPrefix(t, "√ "):
			d.drop(i)
		case tallyWord(t, "passing"):
			verdict = true
		case tallyWord(t, "failing"):
			verdict = true
			if n, _ := leadingCount(t); n > 0 {
				failing = true
			}
		}
	}
	dropEmptyGroups(d)
	return d.recognised(verdict, failing)
}

// tallyWord reports "N word" or "N word (time)" lines.
func tallyWord(t, word string) bool {
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 || !strings.HasPrefix(t[n:], " "+word) {
		return false
	}
	rest := t[n+1+len(word):]
	return rest == "" || rest[0] == ' '
}

// distillPlaywright: playwright test (list reporter). Drops "✓ N [project]
// › …" lines; keeps ✘/× lines, numbered failure reports with their error
// messages and code frames, and the "N passed/failed/flaky/skipped"
// tallies.
func distillPlaywright(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "ok ") && strings.Contains(t, " › "):
			d.drop(i)
		case tallyWord(t, "passed"), tallyWord(t, "skipped"), tallyWord(t, "flaky"), tallyWord(t, "did not run"):
			verdict = true
		case tallyWord(t, "failed"), tallyWord(t, "interrupted"):
			verdict = true
			if n, _ := leadingCount(t); n > 0 {
				failing = true
			}
		}
	}
	return d.recognised(verdict, failing)
}

// distillBunTest: bun test. Drops "✓"/"(pass)" lines; keeps failures,
// errors and the " N pass / N fail / Ran N tests" tallies.
func distillBunTest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "(pass) "):
			d.drop(i)
		case strings.HasPrefix(t, "Ran ") && strings.Contains(t, " test"):
			verdict = true
		case tallyWord(t, "fail"):
			if n, _ := leadingCount(t); n > 0 {
				failing = true
			}
		}
	}
	return d.recognised(verdict, failing)
}

// distillJSTest: `npm test` and friends, whose runner is a package script.
// The command says "tests"; the runner's own tally lines decide which
// grammar applies (vitest, jest, mocha, playwright, bun), and an output
// with none of them passes raw.
func distillJSTest(d *dctx) bool {
	kind := ""
	for i := 0; i < d.n() && kind == ""; i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "Test Files "):
			kind = "vitest"
		case strings.HasPrefix(t, "Tests:") || strings.HasPrefix(t, "Test Suites:"):
			kind = "jest"
		case tallyWord(t, "passing") || tallyWord(t, "failing"):
			kind = "mocha"
		case strings.HasPrefix(t, "Running ") && strings.Contains(t, " using ") && strings.Contains(t, "worker"):
			kind = "playwright"
		case strings.HasPrefix(t, "Ran ") && strings.Contains(t, " across "):
			kind = "bun"
		}
	}
	switch kind {
	case "vitest":
		return distillVitest(d)
	case "jest":
		return distillJest(d)
	case "mocha":
		return distillMocha(d)
	case "playwright":
		return distillPlaywright(d)
	case "bun":
		return distillBunTest(d)
	}
	return false
}

// dotnetBuildNoise reports dotnet/MSBuild progress lines.
func dotnetBuildNoise(t string) bool {
	return hasPrefixAny(t, "Determining projects to restore", "All projects are up-to-date for restore",
		"Restored ", "Starting test execution", "A total of ", "VSTest version", "Microsoft (R) Test Execution",
		"Copyright (c) Microsoft", "MSBuild version", "Welcome to .NET", "Build started", "Time Elapsed") ||
		(strings.Contains(t, " -> ") && (strings.HasSuffix(t, ".dll") || strings.HasSuffix(t, ".exe") || strings.HasSuffix(t, "/")))
}

// distillDotnetTest: dotnet test. Drops restore/build progress and
// "Passed X [N ms]" lines; keeps "Failed X", error messages, stack traces
// and the "Failed!/Passed! - Failed: N, Passed: N, …" tallies.
func distillDotnetTest(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "Passed ") && strings.HasSuffix(t, "]"):
			d.drop(i)
		case strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ "):
			d.drop(i)
		case strings.HasPrefix(t, "Passed!") || strings.HasPrefix(t, "Test Run Successful"):
			verdict = true
		case strings.HasPrefix(t, "Failed!") || strings.HasPrefix(t, "Test Run Failed") || strings.HasPrefix(t, "Test Run Aborted"):
			verdict, failing = true, true
		case strings.HasPrefix(t, "Total tests:"):
			verdict = true
		case strings.HasPrefix(t, "Failed:") || strings.HasPrefix(t, "Failed: "):
			if n, ok := leadingCount(strings.TrimSpace(strings.TrimPrefix(t, "Failed:"))); ok && n > 0 {
				failing = true
			}
		case strings.Contains(t, "error ") && strings.Contains(t, "): error"):
			failing = true
		case strings.HasPrefix(t, "Build FAILED"):
			verdict, failing = true, true
		case dotnetBuildNoise(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillDotnetBuild: dotnet build/restore/publish. Drops progress and
// "X -> path.dll" lines; keeps warnings, errors and the "Build
// succeeded/FAILED" verdict with its counts.
func distillDotnetBuild(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "Build succeeded"):
			verdict = true
		case strings.HasPrefix(t, "Build FAILED"):
			verdict, failing = true, true
		case dotnetBuildNoise(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillMaven: mvn. Drops downloads, transfer progress, "Running x",
// per-class tallies without failures and blank [INFO] lines; keeps
// [ERROR]/[WARNING], failing tests, the Results section, "Tests run:"
// totals, and BUILD SUCCESS/FAILURE.
func distillMaven(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		body := strings.TrimSpace(strings.TrimPrefix(t, "[INFO]"))
		switch {
		case strings.Contains(t, "BUILD SUCCESS"):
			verdict = true
		case strings.Contains(t, "BUILD FAILURE"):
			verdict, failing = true, true
		case hasPrefixAny(body, "Downloading from ", "Downloaded from ", "Downloading: ", "Downloaded: ", "Progress (") ||
			hasPrefixAny(t, "Downloading from ", "Downloaded from ", "Progress ("):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && (body == "" || strings.HasPrefix(body, "Running ")):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && strings.HasPrefix(body, "Tests run:") && strings.Contains(body, " - in ") &&
			strings.Contains(body, "Failures: 0, Errors: 0"):
			d.drop(i)
		case strings.HasPrefix(t, "[INFO]") && hasPrefixAny(body, "Copying ", "Using '", "skip non existing", "Nothing to compile",
			"Changes detected", "Recompiling the module", "Building jar:", "Using auto detected provider",
			"No sources to compile", "No tests to run"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillGradle: gradle. Drops "> Task" lines that did not fail,
// downloads and progress; keeps failing tasks and tests, errors, warnings,
// "N tests completed, M failed" and BUILD SUCCESSFUL/FAILED.
func distillGradle(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "BUILD SUCCESSFUL"):
			verdict = true
		case strings.HasPrefix(t, "BUILD FAILED"), strings.HasPrefix(t, "FAILURE: "):
			verdict, failing = true, true
		case strings.HasPrefix(t, "> Task ") && !strings.Contains(t, "FAILED"):
			d.drop(i)
		case hasPrefixAny(t, "Download ", "Downloading ", "<", "Starting a Gradle Daemon", "Daemon will be stopped"):
			if strings.HasPrefix(t, "<") && !strings.Contains(t, "%") {
				continue
			}
			d.drop(i)
		case strings.HasSuffix(t, " PASSED"):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// distillRspec: rspec. Drops progress-dot lines; keeps failures, "N
// examples, M failures" and the rerun list.
func distillRspec(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.Contains(t, " example") && strings.Contains(t, " failure"):
			if _, ok := leadingCount(t); ok {
				verdict = true
				if n, ok := countBefore(t, " failure"); ok && n > 0 {
					failing = true
				}
			}
		case strings.Contains(t, "error occurred outside of examples") || strings.Contains(t, "errors occurred outside of examples"):
			verdict, failing = true, true
		case rspecDots(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

func rspecDots(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', '*', 'F':
		default:
			return false
		}
	}
	return strings.ContainsAny(t, ".*")
}

// distillPhpunit: phpunit. Drops the banner and progress lines; keeps
// failures, and "OK (N tests, …)" or "Tests: N, Assertions: …".
func distillPhpunit(d *dctx) bool {
	verdict, failing := false, false
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		switch {
		case strings.HasPrefix(t, "OK (") || strings.HasPrefix(t, "OK, but"):
			verdict = true
		case strings.HasPrefix(t, "Tests: ") && strings.Contains(t, "Assertions:"):
			verdict = true
			if containsAny(t, "Failures:", "Errors:") {
				failing = true
			}
		case t == "FAILURES!" || t == "ERRORS!":
			failing = true
		case strings.HasPrefix(t, "PHPUnit ") && strings.Contains(t, " by "), hasPrefixAny(t, "Runtime:", "Configuration:"):
			d.drop(i)
		case phpunitProgress(t):
			d.drop(i)
		}
	}
	return d.recognised(verdict, failing)
}

// phpunitProgress reports "..F.S   63 / 120 ( 52%)".
func phpunitProgress(t string) bool {
	sp := strings.IndexByte(t, ' ')
	if sp <= 0 || !strings.HasSuffix(t, "%)") || !strings.Contains(t, " / ") {
		return false
	}
	for i := 0; i < sp; i++ {
		switch t[i] {
		case '.', 'F', 'E', 'W', 'S', 'R', 'I', 'N', 'D':
		default:
			return false
		}
	}
	return strings.Contains(t[:sp], ".")
}
