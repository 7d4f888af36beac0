package events

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the events package.
var (
	// ErrClosed is returned by a Log used after Close.
	ErrClosed = errors.New("events: log closed")
	// ErrNotFound is returned by Log.Get for a sequence that holds no batch
	// (never written, or removed by physical retention).
	ErrNotFound = errors.New("events: sequence not found")
	// ErrVersion is returned by Decode for an envelope of an unknown version.
	ErrVersion = errors.New("events: unknown encoding version")
	// ErrConflict is returned by Conditional.AppendAfter when the log's
	// newest batch is not the one the caller named: another writer
	// appended first. Nothing was stored.
	ErrConflict = errors.New("events: another writer appended first")
)

// Seq is a stream sequence number: the position of one batch in the log.
// The first batch has Seq 1; 0 means "none".
type Seq uint64

// Kind names an event type. Values are part of the stable encoding.
type Kind string

// The event kinds. Each event carries the payload struct of the same name.
const (
	// KindInvoked records one invocation of a door (hook, exec, pipe, bench)
	// with its raw input, compressed, so replay can rerun the decision.
	KindInvoked Kind = "invoked"
	// KindEmitted records what one reader was delivered by one invocation.
	KindEmitted Kind = "emitted"
	// KindFolded records one ledger fold: a run of lines replaced by a marker.
	KindFolded Kind = "folded"
	// KindArchived stores the exact bytes behind a handle.
	KindArchived Kind = "archived"
	// KindCompacted records that a session's context was compacted or
	// cleared: every reader of that session forgets what it was shown.
	KindCompacted Kind = "compacted"
	// KindRetrieved records that a handle's bytes were handed back.
	KindRetrieved Kind = "retrieved"
	// KindReaderStarted records a subagent start (SubagentStart) or a
	// session start that keeps its context (startup, resume, fork).
	KindReaderStarted Kind = "reader_started"
	// KindSessionEnded records the end of a host session (SessionEnd).
	KindSessionEnded Kind = "session_ended"
	// KindDistilled records what the first-seen stages (redaction, a
	// distiller, collapse, the final cut) did to one invocation's text.
	KindDistilled Kind = "distilled"
	// KindGoalSet records a pinned goal for a project (empty Text clears it).
	KindGoalSet Kind = "goal_set"
	// KindRemembered records a fact to remember for a project.
	KindRemembered Kind = "remembered"
	// KindPruned records physical retention (omni gc --before): the batches
	// below Pruned.Before are about to be removed from the log, together
	// with the blocks archived in them, except the blocks named in
	// Pruned.Kept, which Archived events after it store again.
	KindPruned Kind = "pruned"
	// KindLost records batches the store can no longer read (a damaged or
	// truncated store file), found by omni gc --repair or at daemon start:
	// the blocks archived in them are forgotten.
	KindLost Kind = "lost"
	// KindForgotten records omni forget: a value was erased from the
	// batches it names, which were replaced in place (Rewriter).
	KindForgotten Kind = "forgotten"
)

// Reader identifies one context window that receives tool output: a host
// session plus, for a subagent, its agent id. The main agent has Agent "".
type Reader struct {
	Session string
	Agent   string
}

// String renders the reader as "session" or "session/agent".
func (r Reader) String() string {
	if r.Agent == "" {
		return r.Session
	}
	return r.Session + "/" + r.Agent
}

// Event is one fact in the log. Seq and Index are assigned by the log and are
// not part of the encoding. Exactly one payload pointer matching Kind is set.
type Event struct {
	// Seq is the stream sequence of the batch holding this event (set by the log).
	Seq Seq `json:"-"`
	// Index is the position of this event within its batch, from 0 (set by the log).
	Index int `json:"-"`

	// ID is a ULID (26 characters, Crockford base32), unique per event.
	ID string `json:"id"`
	// Kind selects the payload.
	Kind Kind `json:"kind"`
	// Time is when the event happened, UTC. Projections take time from here
	// and never from a clock.
	Time time.Time `json:"time"`
	// Project is the repository top level of the hook's working directory,
	// else the working directory itself ("" when unknown).
	Project string `json:"project,omitempty"`
	// Session is the host session id ("" when unknown, e.g. a bare pipe).
	Session string `json:"session,omitempty"`
	// Agent is the subagent id within Session; "" for the main agent.
	Agent string `json:"agent,omitempty"`
	// Call is the ID of the KindInvoked event of the invocation this event
	// belongs to ("" for events outside an invocation).
	Call string `json:"call,omitempty"`
	// Machine identifies the machine whose daemon wrote the event: its
	// host name, "/", and a random id kept in its home ("" when not
	// recorded). On a log several machines share (a cluster), it tells
	// them apart.
	Machine string `json:"machine,omitempty"`
	// User is the login name of the user whose daemon wrote the event (""
	// when not recorded).
	User string `json:"user,omitempty"`

	Invoked       *Invoked       `json:"invoked,omitempty"`
	Emitted       *Emitted       `json:"emitted,omitempty"`
	Folded        *Folded        `json:"folded,omitempty"`
	Archived      *Archived      `json:"archived,omitempty"`
	Compacted     *Compacted     `json:"compacted,omitempty"`
	Retrieved     *Retrieved     `json:"retrieved,omitempty"`
	ReaderStarted *ReaderStarted `json:"reader_started,omitempty"`
	SessionEnded  *SessionEnded  `json:"session_ended,omitempty"`
	Distilled     *Distilled     `json:"distilled,omitempty"`
	GoalSet       *GoalSet       `json:"goal_set,omitempty"`
	Remembered    *Remembered    `json:"remembered,omitempty"`
	Pruned        *Pruned        `json:"pruned,omitempty"`
	Lost          *Lost          `json:"lost,omitempty"`
	Forgotten     *Forgotten     `json:"forgotten,omitempty"`
}

// Reader returns the event's reader (Session, Agent).
func (e Event) Reader() Reader { return Reader{Session: e.Session, Agent: e.Agent} }

// Door names the entry point an invocation came through.
type Door string

// The doors.
const (
	DoorHook    Door = "hook"    // a host hook payload on stdin (omni hook)
	DoorExec    Door = "exec"    // omni exec CMD
	DoorPipe    Door = "pipe"    // CMD | omni
	DoorBench   Door = "bench"   // omni bench: a corpus record replayed as a hook payload
	DoorDistill Door = "distill" // omni distill: one stored output, no ledger without a session
)

// Codec names how a byte field is compressed.
type Codec string

// The codecs.
const (
	CodecNone Codec = ""     // bytes stored as is
	CodecZstd Codec = "zstd" // one zstd frame (RFC 8878)
)

// Invoked is the payload of KindInvoked: the raw input of one invocation,
// enough to rerun its decision byte for byte (omni replay).
type Invoked struct {
	// Door is the entry point.
	Door Door `json:"door"`
	// Host names the host protocol of Input ("claude-code" for hook
	// payloads; "" for exec and pipe, whose Input is the command output).
	Host string `json:"host,omitempty"`
	// Codec is the compression of Input.
	Codec Codec `json:"codec,omitempty"`
	// Input is the raw stdin of the hook (the whole host payload), or the
	// captured output for exec and pipe, compressed with Codec.
	Input []byte `json:"input,omitempty"`
	// InputBytes is the length of Input before compression, in bytes.
	InputBytes int `json:"input_bytes"`
	// Params holds door parameters that shaped the decision and are not in
	// Input (exec/pipe: command, exit code, tool). The keys are the Param
	// constants (vocab.go); a key is never renamed.
	Params map[string]string `json:"params,omitempty"`
	// At is the stream position the decision was made at: the newest batch
	// folded into the projections it read. 0 means the batch just before
	// this one (a log with one writer). On a shared log it is recorded, and
	// the batch was appended only if At was still the log's newest batch,
	// so replay folds up to At and reruns the decision on any machine.
	At Seq `json:"at,omitempty"`
}

// Emitted is the payload of KindEmitted: what one reader was delivered.
// Only delivered lines are listed; folded lines never reached the reader.
type Emitted struct {
	// Tool is the host tool ("Bash", "Read", "Grep", ...).
	Tool string `json:"tool"`
	// Source is the command line (Bash) or file path (Read) that produced
	// the text; it names the first delivery in later markers' from-clauses.
	Source string `json:"source,omitempty"`
	// LineSource, when set, is the identity the ledger records as the lines'
	// source instead of Source: the file a plain shell read (`cat -n F`,
	// `sed -n '1,40p' F`) printed, so reading one file through different
	// commands is one source, as a Read of one path is.
	LineSource string `json:"line_source,omitempty"`
	// Lines are the keys of the delivered non-blank lines, each distinct
	// key once, in first-delivery order.
	Lines Keys `json:"lines,omitempty"`
	// RawBytes is the size of the text the host produced, in bytes.
	RawBytes int `json:"raw_bytes"`
	// DeliveredBytes is the size of the text the model reads, in bytes.
	DeliveredBytes int `json:"delivered_bytes"`
	// RawLines and DeliveredLines count lines of the same two texts.
	RawLines       int `json:"raw_lines"`
	DeliveredLines int `json:"delivered_lines"`
	// Output is the lowercase hex SHA-256 of exactly what the door printed
	// (the hook's reply, empty when it printed nothing; the text for exec
	// and pipe). omni replay compares against it.
	Output string `json:"output"`
	// Replied reports whether the door changed the text (a hook printed a
	// reply; exec/pipe printed something other than the raw text).
	Replied bool `json:"replied"`
	// Reason says why nothing was folded when Replied is false
	// (a Reason: ReasonFloor, ReasonStructuredPrefix+kind, ReasonFailed,
	// ReasonHostCap, ...).
	Reason string `json:"reason,omitempty"`
	// Failed reports the failure path (non-zero exit, PostToolUseFailure).
	Failed bool `json:"failed,omitempty"`
	// Unrecorded is true when the host did not show the text to the model
	// (e.g. over its inline cap): then Lines is empty by design.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// DecideMicros is how long the engine took to decide this invocation
	// (parse, pipeline, reply), in microseconds, measured inside the daemon
	// on the real clock; 0 when not measured (injected clocks: bench,
	// tests). It never shapes a decision.
	DecideMicros int64 `json:"decide_us,omitempty"`
	// Paid lists handles whose owed whole delivery this emission paid.
	Paid []string `json:"paid,omitempty"`
	// RepeatBytes is the size, in bytes, of the non-blank lines of the raw
	// text that this reader had already been delivered before this
	// invocation (the available repetition the ledger could fold).
	RepeatBytes int `json:"repeat_bytes,omitempty"`
	// RawTokens and DeliveredTokens count the tokens of the raw and the
	// delivered text as Tokenizer (a BPE encoding's name, "o200k_base")
	// counts them; 0 and "" when the deciding process counted none.
	RawTokens       int    `json:"raw_tokens,omitempty"`
	DeliveredTokens int    `json:"delivered_tokens,omitempty"`
	Tokenizer       string `json:"tokenizer,omitempty"`
	// Handles lists every handle the delivered text names (ledger folds and
	// the first-seen stages' blocks), each once, so the archive knows which
	// blocks a retained event still points at (omni gc keeps those).
	Handles []string `json:"handles,omitempty"`
}

// Scope is the claim a fold makes.
type Scope string

// The scopes.
const (
	// ScopeSession: this reader was delivered these lines ("already shown").
	ScopeSession Scope = "session"
	// ScopeProject: these lines were produced in this project, but not
	// delivered to this reader ("not shown here").
	ScopeProject Scope = "project"
)

// Folded is the payload of KindFolded: one run replaced by one marker.
type Folded struct {
	// Marker is the marker kind: "run" (N lines already shown[ from S]),
	// "rerun" (N lines identical to an earlier run), "whole" (identical to
	// the N lines already shown), "project" (N lines not shown here),
	// "project-whole".
	Marker string `json:"marker"`
	// Scope is the claim made.
	Scope Scope `json:"scope"`
	// Handle names the archived bytes (16 lowercase hex).
	Handle string `json:"handle"`
	// FirstLine is the 0-based index of the first replaced line in the text.
	FirstLine int `json:"first_line"`
	// Lines and Bytes measure the replaced lines (line endings included).
	Lines int `json:"lines"`
	Bytes int `json:"bytes"`
	// MarkerBytes is the size of the marker text that replaced them,
	// filler lines included, in bytes.
	MarkerBytes int `json:"marker_bytes"`
	// From is the source named in the marker's from-clause ("" if none).
	From string `json:"from,omitempty"`
	// Source is the source that first delivered the lines.
	Source string `json:"source,omitempty"`
}

// Archived is the payload of KindArchived: the exact bytes behind a handle.
type Archived struct {
	// Handle is the first 16 lowercase hex of the SHA-256 of the bytes
	// (0000000000000000 is reserved and remapped to ...0001).
	Handle string `json:"handle"`
	// Lines and Bytes measure the uncompressed block.
	Lines int `json:"lines"`
	Bytes int `json:"bytes"`
	// Codec is the compression of Data.
	Codec Codec `json:"codec,omitempty"`
	// Data is the block, compressed with Codec.
	Data []byte `json:"data"`
	// Again reports a block archived anew because the copy the ledger knew
	// could not be read back (a damaged store before omni gc --repair):
	// this copy replaces it.
	Again bool `json:"again,omitempty"`
	// Forgotten reports a block whose bytes omni forget erased because
	// they held a forgotten value: Data is empty and the handle can no
	// longer be retrieved.
	Forgotten bool `json:"forgotten,omitempty"`
}

// Compacted is the payload of KindCompacted.
type Compacted struct {
	// Trigger names the host signal: "PreCompact", "PostCompact",
	// "SessionStart:compact", "SessionStart:clear", "bench:epoch".
	Trigger string `json:"trigger"`
}

// Retrieved is the payload of KindRetrieved. The event's Session/Agent name
// the reader that asked; an empty Session means "not known", and the debt
// goes to every reader that was shown a marker naming Handle.
type Retrieved struct {
	Handle string `json:"handle"`
	// Found is false when the handle named nothing (unknown or reserved).
	Found bool `json:"found"`
	// Lines are the keys of the block's non-blank lines, each once, in
	// order: the owed whole delivery is paid by the next delivery that
	// holds all of them, whatever the fold path (nil in events recorded
	// before the field existed: then only a block with this exact handle
	// pays it).
	Lines Keys `json:"lines,omitempty"`
}

// ReaderStarted is the payload of KindReaderStarted.
type ReaderStarted struct {
	// Source is the host's reason: "SubagentStart", "startup", "resume", "fork".
	Source string `json:"source"`
}

// SessionEnded is the payload of KindSessionEnded.
type SessionEnded struct {
	Reason string `json:"reason,omitempty"`
}

// Distilled is the payload of KindDistilled: the first-seen stages' work on
// one invocation, so stats count only bytes the model did not receive.
type Distilled struct {
	// Distiller names the distiller that ran ("" when none claimed the text).
	Distiller string `json:"distiller,omitempty"`
	// RawBytes is the size of the text before these stages, DeliveredBytes
	// after them (before the ledger), in bytes.
	RawBytes       int `json:"raw_bytes"`
	DeliveredBytes int `json:"delivered_bytes"`
	// Redacted counts values replaced by [REDACTED].
	Redacted int `json:"redacted,omitempty"`
	// Collapsed reports that the collapse fallback grouped lines.
	Collapsed bool `json:"collapsed,omitempty"`
	// Truncated reports the final cut at the output limit.
	Truncated bool `json:"truncated,omitempty"`
	// Passthrough reports that the raw text was delivered, and Reason why
	// ("structured:json", "failed:unverified", "not-smaller", ...).
	Passthrough bool   `json:"passthrough,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// GoalSet is the payload of KindGoalSet.
type GoalSet struct {
	// Text is the goal; "" clears the project's goal.
	Text string `json:"text"`
}

// Remembered is the payload of KindRemembered.
type Remembered struct {
	Fact string `json:"fact"`
}

// Lost is the payload of KindLost.
type Lost struct {
	// Seqs are the sequences whose batches could not be read, sorted.
	Seqs []Seq `json:"seqs"`
	// Reason says how they were found ("unreadable", "missing", or
	// "truncated: …").
	Reason string `json:"reason"`
}

// Forgotten is the payload of KindForgotten (omni forget). It never holds
// the value itself.
type Forgotten struct {
	// Key is the lowercase hex HMAC-SHA256 of the value under the home's
	// forget key ($OMNI_HOME/forget.key): whoever holds the key and the
	// value can tell it was forgotten; the log alone cannot.
	Key string `json:"key"`
	// Seqs are the batches that held the value, sorted: each was replaced
	// in place by a copy without it (same sequence, same events).
	Seqs []Seq `json:"seqs,omitempty"`
	// Occurrences counts the places the value was found (decoded inputs,
	// archived blocks, and other fields), in bytes-level matches.
	Occurrences int `json:"occurrences"`
	// Withheld counts the invocations whose input was dropped (their
	// replay says withheld); Handles lists the archived blocks erased.
	Withheld int      `json:"withheld,omitempty"`
	Handles  []string `json:"handles,omitempty"`
}

// Pruned is the payload of KindPruned (omni gc --before).
type Pruned struct {
	// Before is the first sequence kept: every batch below it is removed.
	Before Seq `json:"before"`
	// Cutoff is the retention time asked for; batches from before it go.
	Cutoff time.Time `json:"cutoff"`
	// Kept lists the handles archived below Before that a batch at or after
	// Before still names: Archived events that follow (in this batch or the
	// next ones) store them again, above Before, before anything is removed.
	Kept []string `json:"kept,omitempty"`
}

// Keys is a list of 64-bit line keys. It encodes in JSON as one base64
// string of 8 little-endian bytes per key (compact and stable).
type Keys []uint64

// MarshalJSON encodes the keys as base64 of little-endian uint64s.
func (k Keys) MarshalJSON() ([]byte, error) {
	b := make([]byte, 8*len(k))
	for i, v := range k {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// UnmarshalJSON decodes what MarshalJSON produced. A length that is not a
// multiple of 8 bytes is an error.
func (k *Keys) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if len(b)%8 != 0 {
		return fmt.Errorf("keys: %d bytes is not a multiple of 8", len(b))
	}
	out := make(Keys, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	*k = out
	return nil
}

// Conditional is implemented by a Log that can append only after a given
// batch (optimistic concurrency on a log several writers share).
type Conditional interface {
	// AppendAfter is Append when the log's newest batch is last (0: the log
	// is empty); otherwise it stores nothing and fails with ErrConflict.
	AppendAfter(ctx context.Context, batch []Event, last Seq) (Seq, error)
}

// Rewriter is implemented by a Log that can replace a stored batch in
// place (omni forget): the only change a log ever allows to its past.
type Rewriter interface {
	// Replace stores batch in place of the batch at seq and erases the
	// old batch's bytes: from then on Read and Get return batch at seq
	// (with Seq and Index set), and no other sequence changes. Errors:
	// ErrNotFound when no batch is stored at seq; the store's otherwise.
	Replace(ctx context.Context, seq Seq, batch []Event) error
}

// Log is an append-only store of event batches. Implementations must be
// safe for concurrent use; omni keeps a single writer per store (the daemon,
// or a process holding the store lock), so concurrent Appends never race for
// order in practice.
type Log interface {
	// Append writes batch atomically under the next sequence and returns it.
	// It sets nothing on the caller's events. An error means the batch may
	// not be stored; callers treat it as not stored (fail open).
	Append(ctx context.Context, batch []Event) (Seq, error)
	// Read calls fn for every event of every batch with from <= Seq, in
	// global order, with Seq and Index set. It stops at the first error fn
	// returns and returns it. from 0 is the same as 1. Batches removed by
	// physical retention are skipped; First tells where the log starts.
	Read(ctx context.Context, from Seq, fn func(Event) error) error
	// Get returns the events of the batch at seq, or ErrNotFound.
	Get(ctx context.Context, seq Seq) ([]Event, error)
	// Last returns the sequence of the newest batch, 0 when empty.
	Last(ctx context.Context) (Seq, error)
	// First returns the sequence of the oldest retained batch, 0 when empty.
	First(ctx context.Context) (Seq, error)
}
