package textline

import (
	"slices"
	"strings"
)

// FailureMarker is one entry of the failure vocabulary: a way a tool states
// that something failed. Text is matched on the whitespace-trimmed line,
// ASCII case ignored (glyphs exactly); Source says where the wording comes
// from, in this repository's words.
type FailureMarker struct {
	Text   string
	At     FailureMatch
	Source string
}

// FailureMatch says where a FailureMarker's Text must occur.
type FailureMatch uint8

// How a FailureMarker matches.
const (
	// FailPrefix: the trimmed line starts with Text.
	FailPrefix FailureMatch = iota
	// FailAnywhere: Text occurs anywhere in the line.
	FailAnywhere
	// FailVerdict: Text is a word used as a verdict: not glued to an
	// identifier byte [A-Za-z0-9_] on either side and not an option name
	// after "-" or "--" (so "failure_count" and "--fail-fast" are not
	// verdicts, while "pdf-failed-diff.png" is), the line does not
	// start with a pass glyph (✓, ✔, ✅), and the count adjacent to it is not
	// zero ("0 failures", "failed: 0", "# fail 0" are not verdicts).
	FailVerdict
	// FailCounted: Text is a word preceded by a non-zero count ("2 errors",
	// "1 error generated"); alone it states nothing ("no errors found").
	FailCounted
)

// FailureVocabulary is the table IsFailureLine applies, in no particular
// order. Rule 1 of omni: a line that states a failure, in any words,
// is never folded or dropped, so this table is deliberately wide: beside
// the usual markers (the glyphs ✗ ✘ ❌ first; the substrings error:, error[,
// fatal:, exception:, panic:, build failed, --- fail; "error " first;
// fail/failed as a verdict word) it holds "FAILURE: ..." and the
// tool-specific headers.
var FailureVocabulary = []FailureMarker{
	// Glyphs a test runner prints before a failed test.
	{"✗", FailPrefix, "TAP-style and many runners mark a failed test with U+2717"},
	{"✘", FailPrefix, "U+2718, the heavy ballot X some runners print for a failed test"},
	{"❌", FailPrefix, "U+274C, a failed step in CI logs and task runners"},
	{"✖", FailPrefix, "mocha and eslint's stylish formatter print U+2716 before a failed test or the problem tally"},
	{"×", FailPrefix, "vitest prints U+00D7 before a failed test"},
	{"✕", FailPrefix, "jest prints U+2715 before a failed test"},
	// Compiler, runtime and tool diagnostics.
	{"error ", FailPrefix, "a line that opens with the word error (yarn, many CLIs)"},
	{"error:", FailAnywhere, "gcc, clang, go vet, Python's TypeError: and every XxxError: exception line"},
	{"error[", FailAnywhere, "rustc's coded diagnostics, error[E0308]"},
	{"fatal:", FailAnywhere, "git's fatal errors"},
	{"exception:", FailAnywhere, "Java and .NET exception lines, java.lang.IllegalStateException: boom"},
	{"panic:", FailAnywhere, "a Go panic's first line"},
	{"build failed", FailAnywhere, "Gradle's BUILD FAILED, dotnet's Build failed"},
	{"--- fail", FailAnywhere, "go test's --- FAIL: TestName line"},
	{"traceback (most recent call last)", FailAnywhere, "CPython's header above the frames of every uncaught exception"},
	{"panicked at", FailAnywhere, "Rust's panic message: thread 'main' panicked at src/main.rs:2:5"},
	{"npm err!", FailAnywhere, "npm (before v9) prefixes every line of a failed command's report with npm ERR!"},
	{"assertionerror", FailAnywhere, "Python and Node name a failed assert AssertionError, also without a colon (pytest's E   AssertionError)"},
	{"exception in thread", FailAnywhere, "the JVM's report of an uncaught exception: Exception in thread \"main\" ..."},
	{"segmentation fault", FailAnywhere, "the shell's report of a process killed by SIGSEGV"},
	{"command not found", FailAnywhere, "bash and zsh when a command does not exist: bash: foo: command not found"},
	{"no such file or directory", FailAnywhere, "the C library's text for ENOENT, as coreutils, shells and compilers print it"},
	{"permission denied", FailAnywhere, "the C library's text for EACCES"},
	{"undefined reference to", FailAnywhere, "the GNU linker's unresolved-symbol error"},
	{"*** [", FailAnywhere, "GNU make's failed recipe: make: *** [Makefile:3: all] Error 2"},
	{"no rule to make target", FailAnywhere, "GNU make when a target cannot be built"},
	// Verdict words (with the zero-count and identifier exclusions).
	{"fail", FailVerdict, "a verdict word, not glued to an identifier nor beside a zero count; also go test's FAIL lines and TAP's not-ok tallies"},
	{"failed", FailVerdict, "a verdict word, as fail: pytest's FAILED, cargo's test result: FAILED, 3 failed"},
	{"failure", FailVerdict, "JUnit and Django's FAILURE: lines; a rule without it folded FAILURE: Squashed migration is still marked as applied!"},
	{"failures", FailVerdict, "JUnit/Maven tallies, Tests run: 5, Failures: 1; 0 failures is not a verdict. The plural states a failure only with a non-zero count beside it or as a header alone on its line (pytest's === FAILURES ===): in a commit subject or prose (never group failures, silent failures) it names failures, it does not report one"},
	{"failing", FailCounted, "mocha's tally, 2 failing (alone, failing is prose: Failing that, ...)"},
	{"error", FailCounted, "clang's 1 error generated, tsc's Found 2 errors"},
	{"errors", FailCounted, "clang's 2 errors generated, tsc's Found 2 errors, eslint's (3 errors, 0 warnings)"},
}

// failIndex lists, per lowercase first byte, the FailAnywhere entries'
// texts; failVerdictSuffix the verdict words after "fail"; failCounted the
// counted words. Built from FailureVocabulary.
var (
	failLower         [256]byte
	failPairs         [1 << 16 / 64]uint64 // bit c0<<8|c1: some word starts with c0, c1
	failIndex         [256][]string
	failPrefixes      []string
	failVerdictSuffix []string
	failCounted       []string
	failCountedFirst  [256]bool
)

func init() {
	for c := range failLower {
		failLower[c] = byte(c)
		if c >= 'A' && c <= 'Z' {
			failLower[c] += 'a' - 'A'
		}
	}
	for _, m := range FailureVocabulary {
		if m.At != FailPrefix {
			// Every word the byte scan looks for (FailAnywhere, the
			// verdict words, the counted words) is lowercase ASCII of two
			// bytes or more (TestFailureVocabularyEntries).
			k := uint16(m.Text[0])<<8 | uint16(m.Text[1])
			failPairs[k>>6] |= 1 << (k & 63)
		}
		switch m.At {
		case FailPrefix:
			failPrefixes = append(failPrefixes, m.Text)
		case FailAnywhere:
			c := m.Text[0]
			failIndex[c] = append(failIndex[c], m.Text)
		case FailVerdict:
			// Every verdict word starts with "fail": the scan finds it once.
			failVerdictSuffix = append(failVerdictSuffix, strings.TrimPrefix(m.Text, "fail"))
		case FailCounted:
			failCounted = append(failCounted, m.Text)
			failCountedFirst[m.Text[0]] = true
		}
	}
	// Longest suffix first, so "failures" is not read as "failure" + "s".
	slices.SortFunc(failVerdictSuffix, func(a, b string) int { return len(b) - len(a) })
	slices.SortFunc(failCounted, func(a, b string) int { return len(b) - len(a) })
}

// IsFailureLine reports whether one line of output states a failure, by
// FailureVocabulary. The line may carry its ending ("\n" or "\r\n"); only
// the whitespace-trimmed text counts, so equal trimmed lines always get
// equal verdicts. Matching ignores ASCII case.
//
// The count adjacent to a verdict word is the number after the word when a
// ":" or "=" follows it ("failed: 0"); otherwise the number just before it,
// optionally with one unit word between ("0 failed", "0 tests failed");
// otherwise the number just after it ("# fail 0"). A number is digits,
// possibly with "." or "," between them; it is zero when all its digits
// are 0. IsFailureLine is pure, allocates nothing and never panics.
func IsFailureLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	for _, p := range failPrefixes {
		if failHasAt(t, 0, p) {
			return true
		}
	}
	verdicts := !(strings.HasPrefix(t, "✓") || strings.HasPrefix(t, "✔") || strings.HasPrefix(t, "✅"))
	// One pass over the bytes, dispatching on the lowercase first byte.
	// Every word below is two bytes or longer, so a position whose two
	// bytes start none of them (failPairs) is passed at once: most are.
	for i := 0; i+1 < len(t); i++ {
		c := failLower[t[i]]
		if k := uint16(c)<<8 | uint16(failLower[t[i+1]]); failPairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		c2 := failLower[t[i+1]]
		for _, p := range failIndex[c] {
			// (p[1], lowercase like every word here, is compared first:
			// most words of the same first byte differ there.)
			if p[1] == c2 && failHasAt(t, i, p) {
				return true
			}
		}
		if c == 'f' && verdicts && failHasAt(t, i, "fail") && failIsVerdict(t, i) {
			return true
		}
		if failCountedFirst[c] && failIsCounted(t, i) {
			return true
		}
	}
	return false
}

// failIsCounted reports whether a FailCounted word starts at t[i], stands
// alone, and has a non-zero count just before it ("2 errors").
func failIsCounted(t string, i int) bool {
	if failGluedBefore(t, i) {
		return false
	}
	for _, w := range failCounted {
		if !failHasAt(t, i, w) {
			continue
		}
		if end := i + len(w); end < len(t) && failIsIdent(t[end]) {
			continue
		}
		k := failSkipBlanksBack(t, i)
		if k == i {
			return false
		}
		zero, found := failNumberEndingAt(t, k)
		return found && !zero
	}
	return false
}

// failGluedBefore reports whether the word at t[i] is part of a longer one:
// an identifier byte before it ("preserves_failed"), or it is the name of a
// command-line option, after "-" or "--" at the start of a word
// ("--fail-fast", "--fail-under=100", "-failfast"). A hyphen inside a name
// ("sync-fail", "pdf-failed-diff.png") does not glue: such a name may well
// report a failure.
func failGluedBefore(t string, i int) bool {
	if i == 0 {
		return false
	}
	if failIsIdent(t[i-1]) {
		return true
	}
	j := i
	for j > 0 && t[j-1] == '-' && i-j < 2 {
		j--
	}
	return j < i && (j == 0 || failIsHSpace(t[j-1]) || t[j-1] == '=' || t[j-1] == '"' || t[j-1] == '\'')
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

// failIsVerdict reports whether the "fail" at t[i:i+4] begins a verdict word
// (FailVerdict: fail, failed, failure, failures, failing), not glued to an
// identifier byte or a hyphen, whose adjacent count is not zero.
func failIsVerdict(t string, i int) bool {
	if failGluedBefore(t, i) {
		return false
	}
	end, plural := -1, false
	for _, suf := range failVerdictSuffix {
		if e := i + 4 + len(suf); failHasAt(t, i+4, suf) && (e == len(t) || !failIsIdent(t[e])) {
			end, plural = e, suf == "ures"
			break
		}
	}
	if end < 0 {
		return false
	}
	if plural {
		return failuresCounted(t, i, end)
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

// failuresCounted reports whether the plural "failures" at t[i:end] states
// failures: a non-zero count before it ("3 failures") or after it
// ("Failures: 1", "failures 2"), a label (":" or "=" after it, not a zero
// count: "FAILURES: test_a"), or the word alone on its line between banner
// characters ("=== FAILURES ===").
func failuresCounted(t string, i, end int) bool {
	if zero, found := failNumberBefore(t, i); found {
		return !zero
	}
	j := end
	for j < len(t) && failIsHSpace(t[j]) {
		j++
	}
	labelled := j < len(t) && (t[j] == ':' || t[j] == '=')
	for j < len(t) && (failIsHSpace(t[j]) || t[j] == ':' || t[j] == '=') {
		j++
	}
	if zero, found := failNumberAt(t, j); found {
		return !zero
	}
	if labelled {
		return true // "FAILURES: test_a, test_b" heads a list of failures
	}
	for k := 0; k < len(t); k++ {
		if k >= i && k < end {
			continue
		}
		if failIsIdent(t[k]) {
			return false
		}
	}
	return true
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
