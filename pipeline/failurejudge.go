package pipeline

import (
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// failureJudge returns the test Decide applies to each line of text, the
// output of the command line src: IsFailureLine, except for the lines of a
// commit listing (git log, shortlog, reflog, whatchanged) that carry a
// commit's subject or message. Such a line reports what a commit did
// ("collapse: never group failures", "hooks fail open"), not that this run
// failed, and treating it as a failure splits one repeated listing into a
// marker per subject that names a failure word. git's own failures
// ("fatal: ...", "error: ...") never have a commit line's shape and stay
// failure lines. Anything else, and any command line omni does not read
// plainly as one such git command (optionally piped into head, tail, cat or
// less), keeps IsFailureLine: the detector stays conservative where it is
// unsure.
func failureJudge(src, text string, lines []Line) func(string) bool {
	if !isCommitListing(src) {
		return IsFailureLine
	}
	full := false // the default format: "commit H" headers, message lines indented by 4
	for _, ln := range lines {
		if t := text[ln.Start:ln.End]; strings.HasPrefix(t, "commit ") && isHexWord(strings.TrimSpace(t[len("commit "):]), 40) {
			full = true
			break
		}
	}
	return func(line string) bool {
		if isCommitLine(line, full) {
			return false
		}
		return IsFailureLine(line)
	}
}

// isCommitListing reports whether src is one git command that lists
// commits, alone or piped into a pager-like reader.
func isCommitListing(src string) bool {
	if src == "" || !strings.Contains(src, "git") {
		return false
	}
	pipes, complexCmd := shellcmd.Parse(src)
	if complexCmd || len(pipes) != 1 || len(pipes[0]) == 0 {
		return false
	}
	for _, c := range pipes[0][1:] {
		prog, _ := shellcmd.Program(c.Words)
		switch prog {
		case "head", "tail", "cat", "less", "more":
		default:
			return false
		}
	}
	prog, args := shellcmd.Program(pipes[0][0].Words)
	if prog != "git" {
		return false
	}
	for k := 0; k < len(args); k++ {
		a := args[k]
		if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" {
			k++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "log", "shortlog", "reflog", "whatchanged":
			return true
		}
		return false
	}
	return false
}

// isCommitLine reports whether line is a commit's subject or message line
// of a commit listing: an abbreviated or full hash then a space (--oneline,
// reflog, optionally after --graph's "* " and "| " columns), or, in the
// default format (full), a message line indented by four spaces.
func isCommitLine(line string, full bool) bool {
	line = strings.TrimRight(line, "\r\n")
	if full && strings.HasPrefix(line, "    ") {
		return true
	}
	t := strings.TrimLeft(line, "*|/\\ ")
	sp := strings.IndexByte(t, ' ')
	if sp < 7 || sp > 40 {
		return false
	}
	return isHexWord(t[:sp], sp)
}

// isHexWord reports whether w is exactly n lowercase hex digits.
func isHexWord(w string, n int) bool {
	if len(w) != n {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
