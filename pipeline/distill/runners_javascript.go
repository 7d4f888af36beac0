package distill

import (
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// JavaScript test-runner distillers: jest, vitest, mocha, playwright, bun
// test and package-script test runs (the rules of runners.go).

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
			d.dropPass(i)
		case jsRunnerFrame(t):
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
		if !d.keep[i] || d.blank(i) || textline.IsFailureLine(d.raw(i)) {
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
			d.dropPass(i)
		case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ ")) && strings.HasPrefix(d.line(i), "   "):
			d.dropPass(i) // a test inside a listed file
		case (strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "√ ")) && strings.Contains(t, " > "):
			d.dropPass(i) // the verbose reporter's "✓ file > suite > test"
		case strings.HasPrefix(t, "Start at "):
			d.drop(i)
		case jsRunnerFrame(t):
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

// jsRunnerFrame reports a stack frame inside the test runner's own
// packages or Node's internals ("❯ runTest ../node_modules/@vitest/runner/
// dist/index.js:1056:17", "at Module._compile (node:internal/modules/cjs/
// loader:1554:14)"): the machinery around a failure. The project's frames
// stay, and so do frames in other installed packages (an error thrown
// inside a library says where).
func jsRunnerFrame(t string) bool {
	if !strings.HasPrefix(t, "❯ ") && !strings.HasPrefix(t, "at ") {
		return false
	}
	if !containsAny(t, "node_modules/vitest/", "node_modules/@vitest/", "node_modules/jest-", "node_modules/@jest/",
		"node_modules/expect/", "node_modules/tinypool/", "(node:internal/", "at node:internal/") {
		return false
	}
	// It ends in a location (":line:col" or ":line:col)").
	e := strings.TrimSuffix(t, ")")
	k := strings.LastIndexByte(e, ':')
	return k > 0 && isDigits(e[k+1:])
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
			d.dropPass(i)
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
			d.dropPass(i)
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
			d.dropPass(i)
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
