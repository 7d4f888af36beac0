package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/projections/session"
)

// SessionContextMax is the most characters (runes) SessionContext returns.
const SessionContextMax = 800

// hotFileWindow is how far back, before a project's newest event, a read
// still makes a file hot.
const hotFileWindow = 7 * 24 * time.Hour

// SessionContext returns what a new session of project should know, for a
// SessionStart hook's additionalContext: the pinned goal, the facts
// remembered with `omni remember` (newest first), the files read most in
// the last week of the project's activity, and the last failure not yet
// followed by a success of the same command. At most SessionContextMax
// characters; "" when omni knows nothing of the project. It takes the
// Engine's lock; from code that holds it, call sessionContext. It uses no
// clock: the same log gives the same text.
func (e *Engine) SessionContext(project string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessionContext(project)
}

// sessionContext is SessionContext for a caller holding e.mu.
func (e *Engine) sessionContext(project string) string {
	p := e.session.Project(project)
	if p == nil {
		return ""
	}
	var lines []string
	if p.Goal.Text != "" {
		lines = append(lines, "Goal: "+clip(oneLine(p.Goal.Text), 300))
	}
	if f, ok := p.LastError(); ok {
		lines = append(lines, clip(e.errorLine(project, f), 260))
	}
	if hot := p.HotFiles(5, hotFileWindow); len(hot) > 0 {
		parts := make([]string, len(hot))
		for i, f := range hot {
			parts[i] = fmt.Sprintf("%s (%d)", relPath(project, f.Path), f.Reads)
		}
		lines = append(lines, clip("Files read most (reads): "+strings.Join(parts, ", "), 220))
	}
	if n := len(p.Facts); n > 0 {
		var facts []string
		for i := n - 1; i >= 0 && len(facts) < 5; i-- {
			facts = append(facts, oneLine(p.Facts[i].Text))
		}
		lines = append(lines, "Remembered: "+strings.Join(facts, "; "))
	}
	if len(lines) == 0 {
		return ""
	}
	out := "omni, this project so far:\n" + strings.Join(lines, "\n")
	return clip(out, SessionContextMax)
}

var exitCodeLine = regexp.MustCompile(`^(?i)exit code -?\d+$`)

// errorLine describes an active failure: its command and, when the log
// still holds the invocation, its first failure line.
func (e *Engine) errorLine(project string, f session.Failure) string {
	src := oneLine(f.Source)
	if src == "" {
		src = f.Tool
	}
	s := fmt.Sprintf("Last failure not yet followed by a success (%s): %s", f.Time.UTC().Format("2006-01-02 15:04 UTC"), clip(relPath(project, src), 100))
	if msg := e.failureText(f.Seq); msg != "" {
		s += " → " + msg
	}
	return s
}

// failureText returns the most telling line of the failed invocation at
// seq ("" when it cannot be read).
func (e *Engine) failureText(seq events.Seq) string {
	batch, err := e.log.Get(context.Background(), seq)
	if err != nil {
		return ""
	}
	var text string
	for _, ev := range batch {
		inv := ev.Invoked
		if ev.Kind != events.KindInvoked || inv == nil {
			continue
		}
		in := inv.Input
		if inv.Codec == events.CodecZstd {
			if in, err = e.decompress(in); err != nil {
				return ""
			}
		}
		if inv.Door == events.DoorHook || inv.Door == events.DoorBench {
			text = payloadText(in)
		} else {
			text = string(in)
		}
	}
	var first, failure string
	for _, ln := range pipeline.SplitLines(nil, text) {
		t := strings.TrimSpace(text[ln.Start:ln.End])
		if t == "" {
			continue
		}
		if first == "" {
			first = t
		}
		if pipeline.IsFailureLine(t) && !exitCodeLine.MatchString(t) {
			failure = t
			break
		}
	}
	if failure == "" {
		failure = first
	}
	return clip(failure, 160)
}

// payloadText finds the tool's text in a hook payload of any host: the
// error string, else the tool response (a string, or its stdout and stderr,
// output, content, file content or result).
func payloadText(stdin []byte) string {
	var p struct {
		Error        json.RawMessage `json:"error"`
		ToolResponse json.RawMessage `json:"tool_response"`
	}
	if json.Unmarshal(stdin, &p) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(p.Error, &s) == nil && s != "" {
		return s
	}
	if json.Unmarshal(p.ToolResponse, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(p.ToolResponse, &m) != nil {
		return ""
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(m[k], &v)
		return v
	}
	if out, errs := str("stdout"), str("stderr"); out != "" || errs != "" {
		if out != "" && errs != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		return out + errs
	}
	for _, k := range []string{"output", "llmContent", "content", "result"} {
		if v := str(k); v != "" {
			return v
		}
	}
	var file struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(m["file"], &file)
	return file.Content
}

// relPath shows p relative to project when it lies inside it.
func relPath(project, p string) string {
	if project != "" && strings.HasPrefix(p, project+"/") {
		return p[len(project)+1:]
	}
	return p
}

// oneLine squeezes whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n runes, ending a cut text with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
