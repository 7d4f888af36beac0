package hosts

// OpenCode (measured on 1.18.33, docs/HOSTS.md), through omni's plugin
// shim, which sends the shared shape with "host":"opencode" and assigns the
// reply's "output" to the tool result.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// OpenCode is OpenCode through omni's plugin shim ("host":"opencode").
const OpenCode = "opencode"

func init() {
	register(Protocol{Name: OpenCode,
		Rules:   []Rule{{RankHostKey, func(s Signature) bool { return s.Host == OpenCode }}},
		Deliver: openCodeDelivery,
	})
}

// openCodeDelivery: omni's OpenCode plugin sends
// {"host":"opencode","hook_event_name":"PostToolUse","session_id",…,
// "tool_name":"bash","tool_input":ARGS,"tool_response":{"output":TEXT,"exit":N}}
// from tool.execute.after and assigns the reply's "output" to the tool
// result, which OpenCode hands to the model.
func openCodeDelivery(p *Payload, passthrough bool) (Delivery, bool) {
	var d Delivery
	switch p.ToolName {
	case "bash", "read", "grep", "glob", "list", "webfetch":
	default:
		return d, false
	}
	var resp struct {
		Output *string          `json:"output"`
		Exit   *json.RawMessage `json:"exit"`
	}
	if json.Unmarshal(p.ToolResponse, &resp) != nil || resp.Output == nil {
		return d, false
	}
	text := *resp.Output
	src := sourceOf(p.ToolName, p.ToolInput)
	d.Source = src
	d.Req.Text, d.Req.Source = text, src
	if resp.Exit != nil {
		var code int
		if json.Unmarshal(*resp.Exit, &code) == nil && code != 0 {
			d.Req.Failed = true
			return d, true
		}
	}
	cmd := ""
	if p.ToolName == "bash" {
		cmd = src
		if isOmniExec(cmd) {
			return d, false
		}
	}
	d.Req.NoFold = NoFoldReason(cmd, passthrough, text, p.ToolResponse)
	if p.ToolName == "grep" && strings.HasPrefix(text, "Found ") {
		// OpenCode puts a blank line after every match; the ledger and its
		// markers count the matches only (a reply drops the blank lines).
		d.Req.Text = dropBlankLines(text)
	}
	if p.ToolName == "read" {
		if r, ok := parseOpenCodeRead(text); ok {
			// The ledger sees the file's own lines: a re-read folds, and so
			// does a read of a file an earlier cat showed.
			d.Req.Text = r.body()
			d.Render = func(t string) ([]byte, error) {
				out, err := r.render(t)
				if err != nil {
					return nil, err
				}
				return openCodeReply(out)
			}
			return d, true
		}
	}
	d.Render = openCodeReply
	return d, true
}

// openCodeRead is an OpenCode 1.18.33 read result taken apart:
// "<path>P</path>\n<type>file</type>\n<content>\n" (head), lines numbered
// "N: " (the numbers in num, the text in lines), then the rest (tail:
// "\n(End of file - total N lines)\n</content>" or a "use offset"
// note). Measured, docs/HOSTS.md.
type openCodeRead struct {
	head, tail string
	num        []int
	lines      []string
}

// parseOpenCodeRead takes a read result apart; ok is false for any other
// shape (left whole by the caller's plain reply).
func parseOpenCodeRead(text string) (openCodeRead, bool) {
	var r openCodeRead
	const open = "<content>\n"
	i := strings.Index(text, open)
	if !strings.HasPrefix(text, "<path>") || i < 0 {
		return r, false
	}
	r.head = text[:i+len(open)]
	rest := text[i+len(open):]
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		n, body, ok := numberedLine(line)
		if !ok || !found || (len(r.num) > 0 && n != r.num[len(r.num)-1]+1) {
			break
		}
		r.num = append(r.num, n)
		r.lines = append(r.lines, body)
		rest = after
	}
	r.tail = rest
	return r, len(r.lines) > 0
}

// numberedLine splits "N: text" (N decimal, at least 1).
func numberedLine(l string) (int, string, bool) {
	d := 0
	for d < len(l) && l[d] >= '0' && l[d] <= '9' {
		d++
	}
	if d == 0 || d > 9 || !strings.HasPrefix(l[d:], ":") {
		return 0, "", false
	}
	n, err := strconv.Atoi(l[:d])
	if err != nil || n < 1 {
		return 0, "", false
	}
	body := strings.TrimPrefix(l[d+1:], " ")
	return n, body, true
}

// body is the file's text as the ledger sees it: the lines, unnumbered.
func (r openCodeRead) body() string {
	return strings.Join(r.lines, "\n") + "\n"
}

// markerCount reads the line count a ledger marker states.
var markerCount = regexp.MustCompile(`^\[OMNI: (?:identical to (?:the )?|all )?(\d+) lines `)

// render puts a decision over body() back in OpenCode's frame: kept lines
// get their own numbers again, a marker stands unnumbered in place of the
// lines it counts, head and tail are kept. A decided text that does not
// line up with the original is an error (the caller fails open).
func (r openCodeRead) render(t string) (string, error) {
	var b strings.Builder
	b.WriteString(r.head)
	i := 0
	for _, l := range strings.Split(strings.TrimSuffix(t, "\n"), "\n") {
		if i < len(r.lines) && l == r.lines[i] {
			b.WriteString(strconv.Itoa(r.num[i]))
			b.WriteString(": ")
			b.WriteString(l)
			b.WriteByte('\n')
			i++
			continue
		}
		m := markerCount.FindStringSubmatch(l)
		if m == nil {
			return "", fmt.Errorf("opencode read: line %q is neither the file's line %d nor a marker", l, i+1)
		}
		n, _ := strconv.Atoi(m[1])
		b.WriteString(l)
		b.WriteByte('\n')
		i += n
	}
	if i != len(r.lines) {
		return "", fmt.Errorf("opencode read: the decision accounts for %d of %d lines", i, len(r.lines))
	}
	b.WriteString(r.tail)
	return b.String(), nil
}

// openCodeReply renders {"output":t} for the plugin shim.
func openCodeReply(t string) ([]byte, error) {
	b, err := marshal(struct {
		Output string `json:"output"`
	}{t})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// dropBlankLines removes the lines that hold only whitespace.
func dropBlankLines(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(l)
		}
	}
	return b.String()
}
