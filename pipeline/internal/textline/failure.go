package textline

import "strings"

// IsFailureLine reports whether one line of output states a failure
// (REFERENCE.md §3, the reference's carries_failure). The line may carry its
// ending ("\n" or "\r\n"); only the whitespace-trimmed text counts, so equal
// trimmed lines always get equal verdicts. Matching ignores ASCII case, which
// for these ASCII patterns is the same as lowercasing first. A line is a
// failure line if:
//
//  1. it starts with a fail glyph ✗, ✘ or ❌; or
//  2. it contains "error:", "error[", "fatal:", "exception:", "panic:",
//     "build failed" or "--- fail", or starts with "error "; or
//  3. it uses "fail" or "failed" as a verdict: the line does not start with
//     a pass glyph ✓, ✔ or ✅; the word is not glued to an identifier byte
//     [A-Za-z0-9_] on either side ("preserves_failed_lines" is not a
//     verdict, "failure" is not the word); and the count adjacent to it is not
//     zero ("0 failed", "failed: 0", "# fail 0", "0 tests failed" are not
//     verdicts; "3 failed", "FAILED tests/x.py::t" are).
//
// The adjacent count is the number after the word when a ":" or "=" follows
// it ("failed: 0"); otherwise the number just before it, optionally with one
// unit word between ("0 failed", "0 tests failed"); otherwise the number
// just after it ("# fail 0"). A number is digits, possibly with "." or ","
// between them; it is zero when all its digits are 0.
//
// Tool-specific markers ("panicked at", "Traceback (most recent call
// last):", "npm ERR!") are not part of this check (§3 notes). IsFailureLine
// is pure, allocates nothing and never panics.
func IsFailureLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "✗") || strings.HasPrefix(t, "✘") || strings.HasPrefix(t, "❌") {
		return true
	}
	if failHasAt(t, 0, "error ") {
		return true
	}
	verdicts := !(strings.HasPrefix(t, "✓") || strings.HasPrefix(t, "✔") || strings.HasPrefix(t, "✅"))
	// One pass over the bytes; every pattern starts with e, f or p, or is
	// found from the "fail" inside it ("build failed", "--- fail").
	for i := 0; i+4 <= len(t); i++ {
		switch t[i] | 0x20 {
		case 'e':
			if failHasAt(t, i, "error:") || failHasAt(t, i, "error[") || failHasAt(t, i, "exception:") {
				return true
			}
		case 'p':
			if failHasAt(t, i, "panic:") {
				return true
			}
		case 'f':
			if failHasAt(t, i, "fatal:") {
				return true
			}
			if !failHasAt(t, i, "fail") {
				continue
			}
			if (i >= 4 && failFoldEq(t[i-4:i], "--- ")) ||
				(i >= 6 && failFoldEq(t[i-6:i], "build ") && failHasAt(t, i+4, "ed")) {
				return true
			}
			if verdicts && failIsVerdict(t, i) {
				return true
			}
		}
	}
	return false
}

// failHasAt reports whether t holds the lowercase ASCII pattern p at byte i,
// ignoring ASCII case.
func failHasAt(t string, i int, p string) bool {
	return i+len(p) <= len(t) && failFoldEq(t[i:i+len(p)], p)
}

// failFoldEq reports whether s equals the lowercase ASCII pattern p, ignoring
// ASCII case in s.
func failFoldEq(s, p string) bool {
	if len(s) != len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return false
		}
	}
	return true
}

// failIsIdent reports whether c is an identifier byte, [A-Za-z0-9_].
func failIsIdent(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'z')
}

// failIsHSpace is a blank between words.
func failIsHSpace(c byte) bool { return c == ' ' || c == '\t' }

// failIsVerdict reports whether the "fail" at t[i:i+4] is the word "fail" or
// "failed", not glued to an identifier byte, whose adjacent count is not zero.
func failIsVerdict(t string, i int) bool {
	if i > 0 && failIsIdent(t[i-1]) {
		return false
	}
	end := i + 4
	if failHasAt(t, end, "ed") {
		end += 2
	}
	if end < len(t) && failIsIdent(t[end]) {
		return false
	}
	// The count after the word: blanks, an optional ":" or "=", blanks.
	j := end
	for j < len(t) && failIsHSpace(t[j]) {
		j++
	}
	labelled := false
	if j < len(t) && (t[j] == ':' || t[j] == '=') {
		labelled = true
		j++
		for j < len(t) && failIsHSpace(t[j]) {
			j++
		}
	}
	afterZero, afterFound := failNumberAt(t, j)
	if labelled {
		return !(afterFound && afterZero)
	}
	if zero, found := failNumberBefore(t, i); found {
		return !zero
	}
	return !(afterFound && afterZero)
}

// failNumberAt reads a number starting at t[j]: digits with single "." or ","
// between them, not followed by an identifier byte. found is false when there
// is none; zero reports whether all its digits are 0.
func failNumberAt(t string, j int) (zero, found bool) {
	k := j
	zero = true
	for k < len(t) {
		c := t[k]
		if c >= '0' && c <= '9' {
			if c != '0' {
				zero = false
			}
			k++
			continue
		}
		if (c == '.' || c == ',') && k > j && k+1 < len(t) && t[k+1] >= '0' && t[k+1] <= '9' {
			k++
			continue
		}
		break
	}
	if k == j || (k < len(t) && failIsIdent(t[k])) {
		return false, false
	}
	return zero, true
}

// failUnitWords are the words allowed between a count and the verdict word,
// as in "0 tests failed" (ctest: "100% tests passed, 0 tests failed out of 12").
var failUnitWords = [...]string{
	"test", "tests", "spec", "specs", "example", "examples", "suite", "suites",
	"case", "cases", "check", "checks", "assertion", "assertions", "file", "files",
	"job", "jobs", "step", "steps", "task", "tasks", "package", "packages",
	"target", "targets", "build", "builds",
}

// failNumberBefore reads the number that ends just before t[i] after blanks,
// skipping at most one unit word ("0 tests failed"). The number must not be
// glued to an identifier byte on its left ("v0 failed" has no count).
func failNumberBefore(t string, i int) (zero, found bool) {
	if zero, found = failNumberEndingAt(t, failSkipBlanksBack(t, i)); found {
		return zero, true
	}
	// One unit word between the count and the verdict.
	k := failSkipBlanksBack(t, i)
	if k == i {
		return false, false // the word is glued to what precedes it
	}
	w := k
	for w > 0 && ((t[w-1]|0x20) >= 'a' && (t[w-1]|0x20) <= 'z') {
		w--
	}
	if w == k || !failIsUnitWord(t[w:k]) {
		return false, false
	}
	return failNumberEndingAt(t, failSkipBlanksBack(t, w))
}

// failSkipBlanksBack returns the index just after the last non-blank byte
// before t[i].
func failSkipBlanksBack(t string, i int) int {
	for i > 0 && failIsHSpace(t[i-1]) {
		i--
	}
	return i
}

// failNumberEndingAt reads a number that ends just before t[k] (see
// failNumberAt for its shape).
func failNumberEndingAt(t string, k int) (zero, found bool) {
	j := k
	zero = true
	for j > 0 {
		c := t[j-1]
		if c >= '0' && c <= '9' {
			if c != '0' {
				zero = false
			}
			j--
			continue
		}
		if (c == '.' || c == ',') && j < k && j >= 2 && t[j-2] >= '0' && t[j-2] <= '9' {
			j--
			continue
		}
		break
	}
	if j == k || (j > 0 && failIsIdent(t[j-1])) {
		return false, false
	}
	return zero, true
}

// failIsUnitWord reports whether w (ASCII letters) is one of failUnitWords,
// ignoring case.
func failIsUnitWord(w string) bool {
	for _, u := range failUnitWords {
		if failFoldEq(w, u) {
			return true
		}
	}
	return false
}
