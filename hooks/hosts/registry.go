// Package hosts holds the hook protocol of every host omni answers, one
// file per host: how its payload tells it apart, where its tool output sits,
// what is its failure signal, and the one reply shape it applies. Every
// host's payload is decided in one shared shape (Claude Code's keys:
// Payload); a host that sends another shape is rewritten into it on arrival
// (Protocol.Normalize). The Engine (package hooks) owns the rest: redaction,
// the pipeline, the events and the lock.
//
// Adding a host is one file here (its name, its detection rules, its
// Deliver, and an init that registers them) and its registration in
// internal/hostsetup (what omni init writes into the host's settings).
//
// Nothing here runs under the Engine's lock that reads a file: Prepare,
// which reads what a host keeps outside its payload, runs before it.
package hosts

import (
	"encoding/json"
	"sort"

	"github.com/omnictx/omni/pipeline"
)

// Payload is one hook payload in the shared shape: the keys of a Claude
// Code hook payload, which every other host's payload is read into (after
// Normalize).
type Payload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	AgentID        string          `json:"agent_id"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Error          json.RawMessage `json:"error"`
	Source         string          `json:"source"`
	Trigger        string          `json:"trigger"`
	Reason         string          `json:"reason"`
	TurnID         json.RawMessage `json:"turn_id"`
	Host           string          `json:"host"`
	Timestamp      json.RawMessage `json:"timestamp"`
	TranscriptPath string          `json:"transcript_path"`
	ToolUseID      string          `json:"tool_use_id"`
	// OriginalRequestName marks a Gemini tail call a hook asked for.
	OriginalRequestName json.RawMessage `json:"original_request_name"`
	// HostExit is the command's exit code where the host keeps it outside
	// the payload (Codex: its session file, read by Prepare); nil when
	// unknown.
	HostExit *int `json:"-"`
	// CodexLegacy: a replay of a Codex call recorded before omni read its
	// exit code (no host_exit_code param); decided as then.
	CodexLegacy bool `json:"-"`
	// FrameLegacy: a replay of a call recorded without the host_frame
	// param; the host's frame stays in the text, as it was decided then.
	FrameLegacy bool `json:"-"`
}

// Signature returns the keys of p that tell the hosts apart.
func (p *Payload) Signature() Signature {
	return Signature{HookEventName: p.HookEventName, TurnID: p.TurnID, Host: p.Host, Timestamp: p.Timestamp, TranscriptPath: p.TranscriptPath}
}

// Delivery is what a host's protocol reads from one tool event: the text
// the ledger decides on, how reports name its source, what the host will
// not show, and how to reply.
type Delivery struct {
	// Req is the pipeline's request: the text, its line source, whether it
	// takes the failure path, and why it may not fold.
	Req pipeline.Request
	// Source is the command or path, as reports name it.
	Source string
	// LineSource is the ledger's source identity when it differs from
	// Source (a plain file read's file); Req.Source carries it too.
	LineSource string
	// Unrecorded: the host will not show the text (over its cap): nothing
	// of it is recorded as delivered; Reason says why (events.ReasonHostCap).
	Unrecorded bool
	Reason     string
	// Persisted: a Claude Code Bash output the host persisted, read back
	// whole from its file (Prepare); delivered inline only under
	// ClaudeCodeOutputCap.
	Persisted bool
	// Framed: the host's frame was split from Req.Text (the lines a host
	// writes around a tool's output; frame.go).
	Framed bool
	// Shorten, when set, runs the first-seen stages on Req.Text.
	Shorten *pipeline.ShortenRequest
	// Render renders the reply for a decided text; nil on the failure path
	// and wherever the host takes no reply.
	Render func(text string) ([]byte, error)
}

// Signature holds the keys that tell the hosts apart.
type Signature struct {
	HookEventName  string          `json:"hook_event_name"`
	TurnID         json.RawMessage `json:"turn_id"`
	Host           string          `json:"host"`
	Timestamp      json.RawMessage `json:"timestamp"`
	TranscriptPath string          `json:"transcript_path"`
}

// Rule is one way a payload says which host sent it. Detect tries the
// rules of every host by Rank, lowest first; the first that claims the
// payload names the host.
type Rule struct {
	Rank   int
	Claims func(Signature) bool
}

// The ranks of the detection rules, first match wins: a "host" key (set by
// omni's plugins and by Normalize) is certain; a transcript path under a
// host's own directory next; then an event name only one host sends; then
// keys that one host adds (Codex's turn_id and session file); last a key
// several hosts share (Gemini's timestamp). A payload no rule claims is
// Claude Code's.
const (
	RankHostKey    = 10
	RankTranscript = 20
	RankEventName  = 30
	RankOwnKey     = 40
	RankOwnFile    = 50
	RankSharedKey  = 60
)

// Protocol is one host's hook protocol.
type Protocol struct {
	// Name is the host's name, recorded in Invoked.Host.
	Name string
	// Rules claim the host's payloads (Detect); none for the default host.
	Rules []Rule
	// Normalize rewrites a payload the host sends in its own shape into the
	// shared one (nil: it arrives in it). It returns any other stdin as is.
	// It reads no file.
	Normalize func(stdin []byte) []byte
	// ReadOutside reads, before the Engine's lock, what the host keeps
	// outside its payload: it may return a new payload (Claude Code's
	// persisted output read back) and fill o (Codex's exit code). Any
	// other stdin is returned as is. nil: nothing to read.
	ReadOutside func(stdin []byte, o *Outside) []byte
	// Event maps the host's event name onto the Claude Code name omni
	// dispatches on (nil: the same).
	Event func(name string) string
	// Deliver reads a PostToolUse payload's tool output; ok is false for
	// the tools and shapes left alone (then nothing is recorded of it).
	// passthrough reports OMNI_PASSTHROUGH in the hook's environment.
	Deliver func(p *Payload, passthrough bool) (d Delivery, ok bool)
	// SessionContext renders the reply to SessionStart that adds text to
	// what the model reads (nil: the host takes none).
	SessionContext func(text string) ([]byte, error)
}

// Outside is what Prepare read outside the payload, recorded with the
// invocation so a replay decides the same.
type Outside struct {
	// HostExitCode is the exit code Codex keeps in its session file
	// (decimal, or ExitUnknown), "" when the payload is not a Codex shell
	// result.
	HostExitCode string
}

// ExitUnknown is Outside.HostExitCode (and the host_exit_code param) when
// the exit code could not be read outside the payload.
const ExitUnknown = "unknown"

var (
	byName  = map[string]*Protocol{}
	ordered []*Protocol // by name
	rules   []namedRule // by rank, then name
)

type namedRule struct {
	Rule
	host string
}

// register adds a host's protocol; each host file calls it from init.
// It panics on a second protocol of the same name.
func register(p Protocol) {
	if _, dup := byName[p.Name]; dup {
		panic("hosts: two protocols named " + p.Name)
	}
	byName[p.Name] = &p
	ordered = append(ordered, &p)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name < ordered[j].Name })
	for _, r := range p.Rules {
		rules = append(rules, namedRule{r, p.Name})
	}
	sort.SliceStable(rules, func(i, j int) bool {
		if rules[i].Rank != rules[j].Rank {
			return rules[i].Rank < rules[j].Rank
		}
		return rules[i].host < rules[j].host
	})
}

// Lookup returns the protocol of a host name; ok is false for a name no
// file registered.
func Lookup(name string) (p *Protocol, ok bool) {
	p, ok = byName[name]
	return p, ok
}

// Names returns the registered host names, sorted.
func Names() []string {
	out := make([]string, len(ordered))
	for i, p := range ordered {
		out[i] = p.Name
	}
	return out
}

// Detect returns the host whose rule claims s first (by Rule.Rank), or
// ClaudeCode when none does.
func Detect(s Signature) string {
	for _, r := range rules {
		if r.Claims(s) {
			return r.host
		}
	}
	return ClaudeCode
}

// DetectHost returns the host protocol of a hook payload as it arrives
// (Normalize applied, then Detect). A payload that is not a JSON object is
// reported as Claude Code.
func DetectHost(stdin []byte) string {
	var s Signature
	_ = json.Unmarshal(Normalize(stdin), &s)
	return Detect(s)
}

// Normalize applies every host's Normalize (by host name) to a payload:
// whatever a host sends in its own shape comes out in the shared one.
func Normalize(stdin []byte) []byte {
	for _, p := range ordered {
		if p.Normalize != nil {
			stdin = p.Normalize(stdin)
		}
	}
	return stdin
}

// Prepare is every host's work before the Engine's lock: each host's
// ReadOutside (by host name; they read the files a host keeps outside its
// payload), then Normalize. The Engine decides the payload it returns; o
// is recorded with the invocation.
func Prepare(stdin []byte) (payload []byte, o Outside) {
	for _, p := range ordered {
		if p.ReadOutside != nil {
			stdin = p.ReadOutside(stdin, &o)
		}
	}
	return Normalize(stdin), o
}

// EventOf maps a host's event name onto the Claude Code name omni
// dispatches on.
func EventOf(host, name string) string {
	if p, ok := byName[host]; ok && p.Event != nil {
		return p.Event(name)
	}
	return name
}
