package rewrite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omnictx/omni/redact"
)

// PreTool configures Reply.
type PreTool struct {
	// Omni is the absolute path of the omni binary whose `pipe` subcommand
	// the rewritten command runs; "" (or a path with a character outside
	// the grammar's word characters) rewrites nothing.
	Omni string
	// Sources returns the settings files to read for a call whose payload
	// names cwd (nil: SourcesFor with Getenv).
	Sources func(cwd string) Sources
	// Getenv reads the hook's environment (nil: os.Getenv):
	// BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, OMNI_KEEP_SECRETS and,
	// for SourcesFor, CLAUDE_CONFIG_DIR, CLAUDE_PROJECT_DIR and HOME.
	Getenv func(string) string
	// Home is the omni home the call's ticket is written under (Issue);
	// "" rewrites nothing.
	Home string
	// Now is the time of the call, for the rules cache (LoadCached;
	// nil: time.Now).
	Now func() time.Time
}

// DefaultBashTimeoutMS is Claude Code's Bash timeout when neither the call
// nor BASH_DEFAULT_TIMEOUT_MS names one, in milliseconds (the Bash tool's
// documented default, 2 minutes); MaxBashTimeoutMS caps what a call may
// ask when BASH_MAX_TIMEOUT_MS is unset (documented, 10 minutes).
const (
	DefaultBashTimeoutMS = 120000
	MaxBashTimeoutMS     = 600000
)

// Pipefail is the text the rewrite puts in front of the command, and the
// exact Bash allow rule `omni init --claude` writes for it: with it the
// pipeline's status is the runner's whenever the runner fails.
const Pipefail = "set -o pipefail"

// FilterRule returns the Bash allow rule `omni init --claude` writes for
// omni's filter run by the binary at omni ("Bash(OMNI pipe:*)").
func FilterRule(omni string) string { return "Bash(" + omni + " pipe:*)" }

// PipefailRule is the Bash allow rule written for Pipefail.
const PipefailRule = "Bash(" + Pipefail + ")"

// prePayload is the part of a Claude Code PreToolUse payload Reply reads,
// with the keys that tell another host's payload apart.
type prePayload struct {
	HookEventName  string                     `json:"hook_event_name"`
	SessionID      string                     `json:"session_id"`
	AgentID        string                     `json:"agent_id"`
	Cwd            string                     `json:"cwd"`
	PermissionMode string                     `json:"permission_mode"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
	TranscriptPath string                     `json:"transcript_path"`
	// Codex sends turn_id, omni's OpenCode shim and the Copilot adapter
	// "host", Gemini CLI a timestamp (on BeforeTool, never PreToolUse),
	// Cursor cursor_version: any of them means the payload is not Claude
	// Code's.
	TurnID        json.RawMessage `json:"turn_id"`
	Host          string          `json:"host"`
	Timestamp     json.RawMessage `json:"timestamp"`
	CursorVersion json.RawMessage `json:"cursor_version"`
}

// claudeCode reports a payload only Claude Code sends: no key of another
// host and a transcript that is not a Codex session file (rollout-*.jsonl).
func (p *prePayload) claudeCode(getenv func(string) string) bool {
	if (len(p.TurnID) > 0 && string(p.TurnID) != "null") || p.Host != "" || len(p.Timestamp) > 0 ||
		len(p.CursorVersion) > 0 || getenv("CURSOR_VERSION") != "" {
		return false
	}
	base := filepath.Base(p.TranscriptPath)
	return !(strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl"))
}

// Reply answers a Claude Code PreToolUse payload for Bash (stdin, JSON)
// with the command rewritten, or nil when the call is left alone. The
// agent's line L, whose runner starts at Take's At after the operator Op,
// becomes
//
//	L[:At] + "set -o pipefail; " + L[At:] + " 2>&1 | OMNI pipe --call TOKEN"       (Op "" or ";")
//	L[:At] + "set -o pipefail && " + L[At:] + " 2>&1 | OMNI pipe --call TOKEN"     (Op "&&")
//
// so everything the agent wrote runs as written in the host's shell, the
// pipefail holds for the runner's pipeline alone, and the host's
// permission check judges every part. The reply never carries a
// permission decision. TOKEN names a Ticket written under o.Home (the
// reader, the line, the host's timeout: the call's tool_input.timeout,
// else BASH_DEFAULT_TIMEOUT_MS, else DefaultBashTimeoutMS, at most
// BASH_MAX_TIMEOUT_MS, else MaxBashTimeoutMS). The host replaces the whole
// input, so every original tool_input key is echoed.
//
// Left alone: another host's payload, a background call, plan mode, a line
// outside the grammar, a timeout of an unknown shape, and any call the
// rewrite could change the host's judgment of: a Bash deny or ask rule
// that could match the line, one of its simple commands, `set -o
// pipefail` or the filter; an allow rule naming a whole compound line; and
// outside bypassPermissions mode a missing allow rule for either added part
// (PipefailRule, FilterRule; omni init writes both). A settings file that
// cannot be read, or a ticket that cannot be written, stops the rewrite.
func Reply(stdin []byte, o PreTool) []byte {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var p prePayload
	if json.Unmarshal(stdin, &p) != nil || p.HookEventName != "PreToolUse" || p.ToolName != "Bash" ||
		p.SessionID == "" || !p.claudeCode(getenv) || o.Home == "" || !OmniPathOK(o.Omni) {
		return nil
	}
	var cmd string
	if json.Unmarshal(p.ToolInput["command"], &cmd) != nil {
		return nil
	}
	if raw, ok := p.ToolInput["run_in_background"]; ok {
		var bg bool
		if json.Unmarshal(raw, &bg) != nil || bg {
			return nil // a background run, or an unknown shape: the host's
		}
	}
	timeout, ok := timeoutMS(p.ToolInput["timeout"], getenv)
	if !ok || p.PermissionMode == "plan" {
		return nil
	}
	tk, ok := Take(cmd)
	if !ok {
		return nil
	}
	sources := o.Sources
	if sources == nil {
		sources = func(cwd string) Sources { return SourcesFor(cwd, getenv) }
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	rules, err := LoadCached(o.Home, sources(p.Cwd), now())
	if err != nil || !partsRun(rules, p.PermissionMode, tk, o.Omni) {
		return nil
	}
	keep := getenv("OMNI_KEEP_SECRETS") == "1"
	line, runner := cmd, tk.Runner
	if !keep {
		// rule 2: the ticket lies in the omni home until redeemed (a day
		// when the host never runs the command); the filter reads the
		// runner's words, never a credential's value, and the daemon
		// redacts the command it records all the same.
		line, _ = redact.Text(line)
		runner, _ = redact.Text(runner)
	}
	token, err := Issue(o.Home, Ticket{Session: p.SessionID, Agent: p.AgentID, Line: line, Runner: runner, Cwd: p.Cwd,
		TimeoutMS: timeout, KeepSecrets: keep})
	if err != nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(p.ToolInput))
	for k, v := range p.ToolInput {
		out[k] = v
	}
	if out["command"], err = marshal(wrap(tk, o.Omni, token)); err != nil {
		return nil
	}
	type hso struct {
		HookEventName string                     `json:"hookEventName"`
		UpdatedInput  map[string]json.RawMessage `json:"updatedInput"`
	}
	reply, err := marshal(struct {
		HookSpecificOutput hso `json:"hookSpecificOutput"`
	}{hso{HookEventName: "PreToolUse", UpdatedInput: out}})
	if err != nil {
		return nil
	}
	return append(reply, '\n')
}

// pipefailBefore is the text put before the runner for the operator that
// precedes it.
func pipefailBefore(op string) string {
	if op == "&&" {
		return Pipefail + " && "
	}
	return Pipefail + "; "
}

// wrap writes the rewritten command of a taken line.
func wrap(tk Taken, omni, token string) string {
	return tk.Line[:tk.At] + pipefailBefore(tk.Op) + tk.Line[tk.At:] + " 2>&1 | " + omni + " pipe --call " + token
}

// PathNameOK reports an omni binary path the rewrite can name in a
// command and an allow rule: a POSIX absolute path (it starts with /), of
// the grammar's word characters only (no space, no quote, no backslash),
// its base name starting with omni (what Unwrap and the allow rule's
// uninstall recognise). The answer depends on the string alone, the same
// on every system: a Windows path (C:\…\omni.exe) is refused, so the
// rewrite is not offered there (the command it writes is a bash line, and
// the binary's name in it must be one bash and the post-tool hook read
// back alike).
func PathNameOK(omni string) bool {
	return strings.HasPrefix(omni, "/") && isWord(omni, false) && strings.HasPrefix(omni[strings.LastIndexByte(omni, '/')+1:], "omni")
}

// OmniPathOK reports an omni binary path the rewrite can run: PathNameOK,
// and an executable regular file.
func OmniPathOK(omni string) bool {
	if !PathNameOK(omni) {
		return false
	}
	fi, err := os.Stat(omni)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// partsRun reports whether the rewrite leaves the host's judgment of the
// call as it was: no Bash deny or ask rule could match (read as loosely as
// any reading of the rule syntax allows) the whole line, any of its simple
// commands, `set -o pipefail` or the filter; no allow rule names a whole
// compound line that the rewritten text would no longer match; and outside
// bypassPermissions mode an allow rule permits each added part.
func partsRun(r *Rules, mode string, tk Taken, omni string) bool {
	filter := omni + " pipe --call 00000000000000000000000000000000"
	concerned := append([]string{tk.Line, Pipefail, filter}, simpleTexts(tk.Line)...)
	for _, list := range [][]Rule{r.Deny, r.Ask} {
		for _, rl := range list {
			if rl.Tool != "Bash" {
				continue
			}
			for _, c := range concerned {
				if bashCouldMatch(rl.Content, c) {
					return false
				}
			}
		}
	}
	for _, rl := range r.Allow {
		if rl.Tool == "Bash" && strings.ContainsAny(rl.Content, ";&|<>") && bashCouldMatch(rl.Content, tk.Line) {
			return false
		}
	}
	if mode == BypassMode {
		return true
	}
	for _, c := range []string{Pipefail, filter} {
		allowed := false
		for _, rl := range r.Allow {
			if rl.Tool == "Bash" && rl.Content != "" && bashAllows(rl.Content, c) {
				allowed = true
				break
			}
		}
		if !allowed {
			return false
		}
	}
	return true
}

// BypassMode is the permission_mode in which Claude Code runs every
// command a deny or ask rule does not match without asking.
const BypassMode = "bypassPermissions"

// timeoutMS returns the Bash timeout the host applies to a call whose
// tool_input.timeout is raw (absent: nil), in milliseconds; ok is false for
// a value of an unknown shape.
func timeoutMS(raw json.RawMessage, getenv func(string) string) (int, bool) {
	max := MaxBashTimeoutMS
	if v, err := strconv.Atoi(getenv("BASH_MAX_TIMEOUT_MS")); err == nil && v > 0 {
		max = v
	}
	t := DefaultBashTimeoutMS
	if v, err := strconv.Atoi(getenv("BASH_DEFAULT_TIMEOUT_MS")); err == nil && v > 0 {
		t = v
	}
	if len(raw) > 0 && string(raw) != "null" {
		var f float64
		if json.Unmarshal(raw, &f) != nil || f < 1 {
			return 0, false
		}
		if f > float64(max) {
			f = float64(max)
		}
		t = int(f)
	}
	if t > max {
		t = max
	}
	return t, true
}

// quote writes s as one shell word: bare when it holds only word
// characters, else in single quotes (a quote inside as '\”).
func quote(s string) string {
	if isWord(s, false) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// marshal encodes v as JSON without HTML escaping and without the
// encoder's trailing newline.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Unwrap returns the agent's command line inside a command Reply wrote
// (for an omni binary at any absolute path), and the runner the filter
// read; ok is false for any other command. The post-tool hooks use it to
// read a rewritten call as the call the agent made.
func Unwrap(cmd string) (line, runner string, ok bool) {
	if !strings.Contains(cmd, " pipe --call ") {
		return "", "", false // every Bash call passes here
	}
	at := wrappedAt(cmd)
	if at < 0 {
		return "", "", false
	}
	rest := cmd[:at]
	for _, ins := range []string{Pipefail + "; ", Pipefail + " && "} {
		for from := 0; ; {
			i := strings.Index(rest[from:], ins)
			if i < 0 {
				break
			}
			i += from
			cand := rest[:i] + rest[i+len(ins):]
			if tk, taken := Take(cand); taken && tk.At == i && pipefailBefore(tk.Op) == ins {
				return cand, tk.Runner, true
			}
			from = i + 1
		}
	}
	return "", "", false
}

// wrappedAt returns where the filter Reply puts behind the runner starts
// in cmd, or -1 when cmd does not end with one: " 2>&1 | ", an omni binary
// at an absolute path (a word with no blank that starts with "/" and whose
// base name, after a later "/", starts with "omni"), " pipe --call " and
// 32 lower-case hexadecimal digits. It reads as the regular expression
// ` 2>&1 \| /[^ ]*/omni[^ /]* pipe --call [0-9a-f]{32}$` matches (which
// a test holds it to); the hook client does not link regexp.
func wrappedAt(cmd string) int {
	const pipe, call, hexLen = " 2>&1 | ", " pipe --call ", 32
	if len(cmd) < hexLen {
		return -1
	}
	for i := len(cmd) - hexLen; i < len(cmd); i++ {
		if c := cmd[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return -1
		}
	}
	rest, ok := strings.CutSuffix(cmd[:len(cmd)-hexLen], call)
	if !ok {
		return -1
	}
	sp := strings.LastIndexByte(rest, ' ')
	bin := rest[sp+1:]
	head, ok := strings.CutSuffix(rest[:sp+1], pipe)
	if !ok {
		return -1
	}
	slash := strings.LastIndexByte(bin, '/')
	if bin == "" || bin[0] != '/' || slash < 1 || !strings.HasPrefix(bin[slash+1:], "omni") {
		return -1
	}
	return len(head)
}

// ReplyWithin is Reply bounded by d: when Reply has not answered after d
// (a settings file on a file system that stopped answering, a home that
// blocks), it returns nil, so the host runs the command as written
// instead of waiting for its own hook timeout on every Bash call. The
// Reply left running is abandoned (the process exits after answering);
// a ticket it may still write is never named by a command and expires
// (TicketTTL). A panic in Reply answers nil.
func ReplyWithin(stdin []byte, o PreTool, d time.Duration) []byte {
	done := make(chan []byte, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- nil
			}
		}()
		done <- Reply(stdin, o)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-done:
		return r
	case <-t.C:
		return nil
	}
}
