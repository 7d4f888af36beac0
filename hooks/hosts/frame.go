package hooks

// Host framing: the lines a host writes around a tool's own output before
// the model reads it (Gemini CLI's "Output: " prefix and its status lines,
// Codex CLI's truncation header, Copilot CLI's and Cline CLI's exit lines).
// They are never content: the ledger never sees them, so they are never
// recorded as delivered, never folded, and never count as the line that
// keeps an output from being only markers when one of them is project
// scope. A reply puts them back around the decided text, byte for byte.

import (
	"regexp"
	"strings"
)

// hostFrame is a tool result taken apart: head and tail are the host's
// frame, body the tool's output the ledger decides on.
type hostFrame struct {
	head, body, tail string
}

// wrap puts the frame back around a decided body before reply renders it.
func (f hostFrame) wrap(reply func(string) ([]byte, error)) func(string) ([]byte, error) {
	return func(t string) ([]byte, error) { return reply(f.head + t + f.tail) }
}

// geminiStatus matches a status line Gemini CLI 0.61.0 appends after a
// shell command's output, each on a line of its own: "Exit Code: N" (only
// when not 0), "Signal: S", "Background PIDs: P, Q" and "Process Group
// PGID: N" (its run_shell_command llmContent, read in the bundled
// packages/core shell tool; "Error: M" is not matched: its message may span
// lines, so it stays in the body and counts as content).
var geminiStatus = regexp.MustCompile(`^(?:Exit Code: -?\d+|Signal: \S+|Background PIDs: [\d, ]+|Process Group PGID: \d+)$`)

// geminiShellFrame splits a run_shell_command llmContent (the text inside
// the untrusted-context tags, when there are tags): "Output: " before the
// output, and the status lines after it. ok is false when the text does not
// start with "Output: " or has no status line: then nothing is split.
func geminiShellFrame(text string) (hostFrame, bool) {
	const prefix = "Output: "
	if !strings.HasPrefix(text, prefix) {
		return hostFrame{}, false
	}
	rest := text[len(prefix):]
	// Walk the lines from the end while they are status lines.
	cut := len(rest)
	end := len(rest)
	if strings.HasSuffix(rest[:end], "\n") {
		end--
	}
	for end > 0 {
		start := strings.LastIndexByte(rest[:end], '\n') + 1
		if start == 0 || !geminiStatus.MatchString(rest[start:end]) {
			break
		}
		cut = start
		end = start - 1
	}
	if cut == len(rest) {
		return hostFrame{}, false
	}
	return hostFrame{head: prefix, body: rest[:cut], tail: rest[cut:]}, true
}

// codexTruncHead matches the header Codex CLI 0.169.0 puts before an output
// it cut (its PostToolUse tool_response is then its own truncated text:
// "Warning: truncated output (original token count: N)", "Total output
// lines: N", a blank line; measured, docs/HOSTS.md). The mark Codex puts
// where it cut ("…N tokens truncated…") joins the ends of two output lines
// on one line and stays in the body.
var codexTruncHead = regexp.MustCompile(`\AWarning: truncated output \(original token count: \d+\)\nTotal output lines: \d+\n\n?`)

// codexFrame splits Codex's truncation header from a shell output; ok is
// false when there is none.
func codexFrame(text string) (hostFrame, bool) {
	loc := codexTruncHead.FindStringIndex(text)
	if loc == nil {
		return hostFrame{}, false
	}
	return hostFrame{head: text[:loc[1]], body: text[loc[1]:]}, true
}

// clineExitLine matches the line Cline CLI 3.0.65 starts a failing
// command's result with ("[Command exited with code N]").
var clineExitLine = regexp.MustCompile(`\A\[Command exited with code -?\d+\]\n?`)

// clineFrame splits Cline's exit line from a failing command's result; ok
// is false when there is none.
func clineFrame(text string) (hostFrame, bool) {
	loc := clineExitLine.FindStringIndex(text)
	if loc == nil {
		return hostFrame{}, false
	}
	return hostFrame{head: text[:loc[1]], body: text[loc[1]:]}, true
}
