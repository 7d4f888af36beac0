package distill

import (
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// plainLevel is the level logMarker counts for a routine entry of a log
// format that prints no level word (Go's log package, syslog, an access
// log's successful request).
const plainLevel = "LOG"

// plainLogEntry returns plainLevel for a routine entry of a common log
// format that prints no level word, and "" otherwise:
//
//   - Go's standard log package: "2026/12/01 10:41:17 message" (and its
//     Lmicroseconds, Lshortfile forms);
//   - syslog and journalctl's short form: "Dec  1 10:41:17 host unit[42]: message";
//   - a web server's access log (common or combined format) whose status
//     is under 400: `10.0.0.1 - - [01/Dec/2026:10:41:17 +0000] "GET / HTTP/1.1" 200 512`;
//   - any of the above, or a levelled entry, behind docker compose's
//     "service-1  | " prefix.
//
// Without a level the message decides: an entry whose message names a
// warning, an error or a failure (alarmWords, or textline.IsFailureLine)
// is not routine and stays, like a levelled warning. Levelled formats
// (log4j/logback, Python logging with asctime, zap's console encoder,
// slog and logrus text) are recognised by logLevelOf; JSON-line logs
// (slog, zap, logrus JSON) are structured payloads and pass byte for
// byte.
func plainLogEntry(t string) string {
	if rest, ok := composePrefix(t); ok {
		if lv := logLevelOf(rest, routineLevels); lv != "" {
			return lv
		}
		t = rest
	}
	var msg string
	switch {
	case goLogStamp(t):
		msg = t[len("2006/01/02 15:04:05"):]
	case syslogStamp(t):
		msg = t[len("Jan _2 15:04:05"):]
	case accessLogOK(t):
		return plainLevel
	default:
		return ""
	}
	if alarming(msg) {
		return ""
	}
	return plainLevel
}

// alarmWords are the words that make an entry without a level word more
// than routine (lower case, matched anywhere in the lowercased message).
var alarmWords = []string{"warn", "error", "err:", "fail", "fatal", "panic", "exception", "critical",
	"denied", "refused", "timeout", "timed out", "unable", "cannot", "can't", "invalid", "abort", "killed",
	"out of memory", "unreachable", "retry", "retrying"}

// alarming reports whether msg names a warning, an error or a failure.
func alarming(msg string) bool {
	if textline.IsFailureLine(msg) {
		return true
	}
	low := strings.ToLower(msg)
	for _, w := range alarmWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// composePrefix strips docker compose's "name  | " (or "name-1  | ")
// prefix: a name without blanks, blanks, "|", a blank.
func composePrefix(t string) (string, bool) {
	i := composeBar(t)
	if i <= 0 || i > 64 {
		return t, false
	}
	name := strings.TrimRight(t[:i], " ")
	if name == "" || strings.ContainsAny(name, " \t[]()") {
		return t, false
	}
	return strings.TrimSpace(t[i+3:]), true
}

// goLogStamp reports Go's log package prefix "2006/01/02 15:04:05".
func goLogStamp(t string) bool {
	const layout = "dddd/dd/dd dd:dd:dd"
	if len(t) < len(layout) {
		return false
	}
	return shapeIs(t[:len(layout)], layout) && (len(t) == len(layout) || t[len(layout)] == ' ' || t[len(layout)] == '.')
}

// syslogStamp reports syslog's "Jan _2 15:04:05 " prefix.
func syslogStamp(t string) bool {
	if len(t) < 16 || t[15] != ' ' {
		return false
	}
	months := "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"
	if !strings.Contains(months, t[:3]) || t[3] != ' ' {
		return false
	}
	day := t[4:6]
	if !(day[0] == ' ' || (day[0] >= '0' && day[0] <= '3')) || day[1] < '0' || day[1] > '9' {
		return false
	}
	return t[6] == ' ' && shapeIs(t[7:15], "dd:dd:dd")
}

// accessLogOK reports a common or combined access log line whose status
// is under 400: `HOST - USER [DATE] "REQUEST" STATUS SIZE ...`.
func accessLogOK(t string) bool {
	// The first " [", when no more than two blanks come before it: the
	// scan stops at the third blank that does not open one.
	lb, blanks := -1, 0
	for j := 0; j+1 < len(t) && blanks <= 2; j++ {
		if t[j] == ' ' {
			if t[j+1] == '[' {
				lb = j
				break
			}
			blanks++
		}
	}
	if lb <= 0 {
		return false
	}
	rb := strings.Index(t, "] \"")
	if rb < lb {
		return false
	}
	if date := t[lb+2 : rb]; len(date) < 20 || !shapeIs(date[:2], "dd") || date[2] != '/' || date[6] != '/' ||
		!shapeIs(date[7:20], "dddd:dd:dd:dd") {
		return false // the access log's [02/Jan/2006:15:04:05 -0700]
	}
	q := strings.Index(t[rb+3:], "\" ")
	if q < 0 {
		return false
	}
	rest := t[rb+3+q+2:]
	if len(rest) < 3 || !shapeIs(rest[:3], "ddd") || (len(rest) > 3 && rest[3] != ' ') {
		return false
	}
	return rest[0] == '1' || rest[0] == '2' || rest[0] == '3'
}

// shapeIs reports whether s matches layout, where 'd' is any ASCII digit
// and every other byte stands for itself.
func shapeIs(s, layout string) bool {
	if len(s) != len(layout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if layout[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != layout[i] {
			return false
		}
	}
	return true
}

// composeBar returns the index of the first " | " in t when it starts
// at index 64 or before, or -1 (a later one, or none): it looks only at
// the bars of t's first 67 bytes, which most lines have none of.
func composeBar(t string) int {
	head := t[:min(len(t), 64+len(" | "))]
	for j := 0; ; {
		k := strings.IndexByte(head[j:], '|')
		if k < 0 {
			return -1
		}
		p := j + k
		if p >= 1 && p+1 < len(head) && head[p-1] == ' ' && head[p+1] == ' ' {
			return p - 1
		}
		j = p + 1
	}
}
