package distill

import (
	"strings"
)

// Test-runner distillers (this file: Go, Rust and Python runners;
// runners_javascript.go: JavaScript; runners_others.go: .NET, Maven, Gradle, RSpec,
// PHPUnit). Each one drops the lines of
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
				d.dropPass(i)
			}
		case strings.HasPrefix(t, "--- PASS:"):
			if i == 0 || goStructural(strings.TrimSpace(d.line(i-1))) {
				d.dropPass(i)
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
//
// The race detector's reports indent the same pair with spaces ("  testing.tRunner()", then
// "      /usr/local/go/src/testing/testing.go:2036 +0x21c"): those frames go too.
func goStdFrame(fn, loc string) bool {
	if !(strings.HasPrefix(loc, "\t") || strings.HasPrefix(loc, "    ")) || !strings.Contains(loc, ".go:") {
		return false
	}
	if !hasPrefixAny(fn, "testing.", "runtime.", "panic(", "reflect.", "created by testing.", "created by runtime.") {
		return false
	}
	return containsAny(loc, "/src/testing/", "/src/runtime/", "/src/reflect/")
}

// cargoProgress reports cargo's right-aligned progress lines.
func cargoProgress(t string) bool {
	// Every word below starts with an upper-case letter: most lines are
	// passed on their first byte.
	if t == "" || t[0] < 'A' || t[0] > 'Z' {
		return false
	}
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
				d.dropPass(i)
			}
		case strings.HasPrefix(t, "PASS [") && strings.Contains(t, "]"): // nextest
			d.dropPass(i)
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
	// "rust_" alone would also name a user crate (rust_utils::parse) and
	// a doctest's own main (rust_out::main): only the runtime's symbols.
	return hasPrefixAny(sym, "std::", "core::", "alloc::", "__rust", "rust_begin_unwind", "rust_panic", "rust_eh_",
		"<fn", "test::", "<alloc::", "<core::", "<std::")
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
	inMsg := false   // inside an exception's message, unindented first line then indented ones (--tb=native)
	for i := 0; i < d.n(); i++ {
		t := d.trim(i)
		if t == "" {
			continue
		}
		prevIn := afterIn
		afterIn = false
		prevMsg := inMsg
		inMsg = false
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
			case strings.HasPrefix(t, "File \"") && strings.Contains(t, "\", line "):
				// --tb=native: a Python traceback's location; its statement
				// follows, indented.
				afterIn = true
			case t == "Traceback (most recent call last):", strings.HasPrefix(t, "During handling of the above exception"),
				strings.HasPrefix(t, "The above exception was the direct cause"):
			case prevMsg && strings.HasPrefix(d.line(i), " "):
				// the indented rest of an exception's message (--tb=native:
				// "AssertionError: assert {…} == {…}" then "  Differing items:")
				inMsg = true
			case strings.HasPrefix(d.line(i), ">"), t == "E" || strings.HasPrefix(t, "E "),
				strings.HasPrefix(d.line(i), "E\t"):
			case prevIn && strings.HasPrefix(d.line(i), " "):
				// --tb=short: the statement under its location
			case strings.HasPrefix(t, "[gw") && strings.Contains(t, "] "):
				d.drop(i)
			case pytestErrorProse(d.line(i)):
				// "ImportError while importing test module '…'": pytest's own
				// statement of a collection error, not source; or the
				// exception line of a native traceback, whose message may
				// go on indented.
				inMsg = true
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
//
// With -v/--verbose (or Django's --verbosity 2) the "... ok" lines were asked
// for, as pytest -v's PASSED lines are, and stay.
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
			d.dropPass(i)
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

// AskedVerbose reports a run whose user asked for a verbose report: -v,
// -vv, --verbose, -verbose, -test.v, a verbosity of 2 or more (-v 2,
// --verbosity 2, --verbosity=3, -v2) or a verbose reporter
// (--reporter=verbose, --reporter verbose, --reporters=verbose). Its
// per-test pass lines are what the user asked to read, as a class: every
// runner distiller keeps them (dctx.dropPass).
func AskedVerbose(args []string) bool {
	for k, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--reporter" || a == "--reporters":
			if k+1 < len(args) && args[k+1] == "verbose" {
				return true
			}
		case a == "--reporter=verbose", a == "--reporters=verbose", a == "-verbose", a == "-test.v", a == "-test.v=true":
			return true
		case a == "-v" || a == "--verbosity":
			if k+1 < len(args) {
				if n, ok := leadingCount(args[k+1]); ok && len(args[k+1]) == 1 {
					return n >= 2
				}
			}
			return a == "-v"
		case a == "--verbose", a == "-vv", a == "-vvv":
			return true
		case strings.HasPrefix(a, "--verbosity="):
			n, ok := leadingCount(a[len("--verbosity="):])
			return ok && n >= 2
		case strings.HasPrefix(a, "-v") && len(a) == 3 && a[2] >= '2' && a[2] <= '9':
			return true // -v2
		}
	}
	return false
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
