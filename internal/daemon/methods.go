package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/eventlog"
)

// The daemon's methods. Each request and reply below is JSON on the wire,
// except the hook request (wire.MethodHook: one flags byte and the payload)
// and the hook and retrieve replies (the bytes to print).
const (
	MethodHook     = wire.MethodHook
	MethodCall     = "call"
	MethodRetrieve = "retrieve"
	MethodReplay   = "replay"
	MethodStats    = "stats"
	MethodExplain  = "explain"
	MethodRecent   = "recent"
	MethodDiff     = "diff"
	MethodGoal     = "goal"
	MethodSession  = "session"
	MethodGC       = "gc"
	MethodHealth   = "health"
	MethodRepair   = "repair"
	MethodLog      = "log"
	// MethodPing and MethodStop are answered by the daemon itself (Run),
	// also without the protocol version in their subject, so that a
	// client of any protocol version can detect and stop any daemon.
	MethodPing = "ping"
	MethodStop = "stop"
)

// HookPassthrough is bit 0 of the hook request's flags byte: record the
// call but deliver the output unchanged (OMNI_PASSTHROUGH); wire.HookPassthrough.
const HookPassthrough = wire.HookPassthrough

// method is one row of the method table.
type method struct {
	name string
	// once: never sent again after the connection was lost with the
	// request out, since the first attempt may have run. gc and repair
	// change the store; a hook or call that ran recorded its delivery, and
	// a second decision would fold lines against that record although the
	// reader never got the first reply. Failing open instead is safe: the
	// host shows the raw output, a superset of what was recorded.
	once bool
	// serve answers the method over a Service; nil for ping and stop,
	// which the daemon answers itself.
	serve func(s *Service, ctx context.Context, req []byte) ([]byte, error)
}

// methods is the one method table: the daemon serves exactly these, the
// client sends only these, and Service.Handle dispatches on them.
var methods = []method{
	{name: MethodHook, once: true, serve: func(s *Service, ctx context.Context, req []byte) ([]byte, error) {
		return s.Hook(ctx, req), nil
	}},
	{name: MethodCall, once: true, serve: jsonMethod(MethodCall, (*Service).Call)},
	{name: MethodRetrieve, serve: func(s *Service, ctx context.Context, req []byte) ([]byte, error) {
		var in RetrieveRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("retrieve request: %w", err)
		}
		return s.Retrieve(ctx, in)
	}},
	{name: MethodReplay, serve: jsonMethod(MethodReplay, (*Service).Replay)},
	{name: MethodStats, serve: jsonMethod(MethodStats, (*Service).Stats)},
	{name: MethodPing},
	{name: MethodStop},
	{name: MethodExplain, serve: jsonMethod(MethodExplain, (*Service).Explain)},
	{name: MethodRecent, serve: jsonMethod(MethodRecent, (*Service).Recent)},
	{name: MethodDiff, serve: jsonMethod(MethodDiff, (*Service).Diff)},
	{name: MethodGoal, serve: jsonMethod(MethodGoal, (*Service).Goal)},
	{name: MethodSession, serve: jsonMethod(MethodSession, (*Service).Session)},
	{name: MethodGC, once: true, serve: jsonMethod(MethodGC, (*Service).GC)},
	{name: MethodHealth, serve: func(s *Service, ctx context.Context, _ []byte) ([]byte, error) {
		return marshal(s.Health(ctx))
	}},
	{name: MethodStore, serve: jsonMethod(MethodStore, (*Service).Store)},
	{name: MethodLog, serve: jsonMethod(MethodLog, (*Service).ReadLog)},
	{name: MethodRepair, once: true, serve: func(s *Service, ctx context.Context, _ []byte) ([]byte, error) {
		return marshal(s.Repair(ctx))
	}},
}

// lookup returns the row of name.
func lookup(name string) (method, bool) {
	for _, m := range methods {
		if m.name == name {
			return m, true
		}
	}
	return method{}, false
}

// jsonMethod serves a method whose request and reply are JSON. An empty
// request is the zero request.
func jsonMethod[Req, Rep any](name string, f func(*Service, context.Context, Req) (Rep, error)) func(*Service, context.Context, []byte) ([]byte, error) {
	return func(s *Service, ctx context.Context, req []byte) ([]byte, error) {
		var in Req
		if len(req) > 0 {
			if err := json.Unmarshal(req, &in); err != nil {
				return nil, fmt.Errorf("%s request: %w", name, err)
			}
		}
		return marshal(f(s, ctx, in))
	}
}

func marshal[T any](v T, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// CallReply is the "call" reply: the text to print and what happened.
type CallReply struct {
	Delivered string `json:"delivered"`
	Folds     int    `json:"folds"`
	Reason    string `json:"reason,omitempty"`
}

// RetrieveRequest is the "retrieve" request: a handle (16 hex) and the
// reader asking (empty: every reader shown a marker with it). Dir, when
// set, scopes it to the project of that directory (as the daemon names
// projects): a handle archived in another project is unknown.
type RetrieveRequest struct {
	Handle  string `json:"handle"`
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Dir     string `json:"dir,omitempty"`
}

// ReplayRequest is the "replay" request: the invocation at sequence At, or
// with Verify every invocation.
type ReplayRequest struct {
	At     events.Seq `json:"at,omitempty"`
	Verify bool       `json:"verify,omitempty"`
}

// ReplayReply is the "replay" answer: Replay for At, Summary for Verify,
// and the log's retained range First..Last.
type ReplayReply struct {
	Replay  *hooks.Replayed      `json:"replay,omitempty"`
	Summary *hooks.VerifySummary `json:"summary,omitempty"`
	Last    events.Seq           `json:"last"`
	First   events.Seq           `json:"first"`
}

// StatsRequest is the "stats" request. An empty request means the whole
// log.
type StatsRequest struct {
	// Since drops events before it (zero: none): the log is folded again
	// into a fresh stats projection with that filter.
	Since time.Time `json:"since,omitzero"`
}

// ExplainRequest is the "explain" request: a handle or a sequence number,
// as hooks.ParseTarget reads it.
type ExplainRequest struct {
	Target string `json:"target"`
}

// RecentRequest is the "recent" request: the newest N calls (outside
// 1..1000: 20). Dir, when set, keeps the calls of that directory's
// project; Session, when set, those of that session.
type RecentRequest struct {
	N       int    `json:"n"`
	Dir     string `json:"dir,omitempty"`
	Session string `json:"session,omitempty"`
}

// DiffRequest is the "diff" request (Seq 0: the newest invocation that
// delivered text).
type DiffRequest struct {
	Seq events.Seq `json:"seq,omitempty"`
}

// LogRequest is the "log" request: one page (eventlog.ReadPage) of the
// events Query selects, from sequence From on.
type LogRequest struct {
	Query eventlog.Query `json:"query"`
	From  events.Seq     `json:"from,omitempty"`
}

// GCRequest is the "gc" request.
type GCRequest struct {
	// Before is the retention: batches older than now-Before go. It must
	// be positive.
	Before time.Duration `json:"before"`
	DryRun bool          `json:"dry_run,omitempty"`
}

// Errors that cross the wire with a code (wire.CodeHeader), so that
// errors.Is finds them in what the Client returns whether the request ran
// in the daemon or in-process. The hooks errors are the same values.
var (
	// ErrUnknownHandle: no archived content for the handle.
	ErrUnknownHandle = hooks.ErrUnknownHandle
	// ErrForgotten: omni forget erased the handle's bytes (an
	// ErrUnknownHandle too).
	ErrForgotten = hooks.ErrForgotten
	// ErrDamaged: the handle's stored bytes cannot be read (a damaged
	// store file; omni gc --repair records it).
	ErrDamaged = hooks.ErrArchiveUnreadable
	// ErrBadHandle: not 16 hex characters.
	ErrBadHandle = hooks.ErrBadHandle
	// ErrReservedHandle: the documentation example 0000000000000000.
	ErrReservedHandle = hooks.ErrReservedHandle
	// ErrNoDelivery: no invocation that delivered text (diff).
	ErrNoDelivery = hooks.ErrNoDelivery
	// ErrWithheld: the invocation's raw input is not in the log (it held
	// credentials, or omni forget erased it), so diff cannot show it.
	ErrWithheld = hooks.ErrWithheld
	// ErrNoFold: the handle or sequence names no fold (explain).
	ErrNoFold = hooks.ErrNoFold
	// ErrBadTarget: neither a handle nor a sequence number (explain).
	ErrBadTarget = hooks.ErrBadTarget
	// ErrNoBase: omni gc removed the log's oldest batches and their base
	// snapshot is missing, so the retained range cannot be replayed.
	ErrNoBase = hooks.ErrNoBase
	// ErrNotInLog: a sequence outside the log's retained range (replay).
	ErrNotInLog = errors.New("sequence not in the log")
	// ErrStoreBusy: a long command (omni bench --home) holds the store, so
	// a request fails at once instead of waiting out its deadline. Never
	// crosses the wire: the client checks it before sending.
	ErrStoreBusy = errors.New("the store is busy")
	// ErrClusterDown: the log is on a cluster that does not answer now (the
	// daemon's back-off, or a daemon that could not reach it at start):
	// the request fails at once and a hook passes its output through.
	ErrClusterDown = jetstream.ErrUnreachable
	// ErrNoDaemon is returned (wrapped) when no daemon of this protocol
	// could be reached (none running, a stale address, one of another
	// protocol, one shutting down) and none could be spawned in time.
	ErrNoDaemon = errors.New("no omni daemon reachable")
	// ErrTooLate: the request arrived with less than MinTimeLeft of its
	// deadline left, so the daemon answered without touching the store (a
	// caller's spent deadline says nothing about the store's health).
	ErrTooLate = errors.New("too late: the request's deadline was nearly spent when it arrived")
	// ErrBackoff: a recent call found the daemon hung or refusing its
	// token; while its replacement runs, hooks fail open at once
	// (wire.ErrBackoff, the same value).
	ErrBackoff = wire.ErrBackoff
	// ErrDamagedStore: the store was refused as damaged (a start found a
	// record the embedded server cannot recover from, or ran past its
	// deadline or memory ceiling); requests fail at once until 'omni gc
	// --repair' (jetstream.ErrDamagedStore, the same value).
	ErrDamagedStore = jetstream.ErrDamagedStore
	// ErrUnsafeHome: the home, its store or the address file can be
	// written by another user (wire.ErrUnsafeHome, the same value).
	ErrUnsafeHome = wire.ErrUnsafeHome
)

// MinTimeLeft is the least time a request must have left when the daemon
// takes it up: below it the daemon answers ErrTooLate. A hook's decision
// and append take a few milliseconds on a warm daemon (cmd/omni's bench
// --latency), so 20 ms leaves room for them and for the reply.
const MinTimeLeft = 20 * time.Millisecond

// codes names the errors that cross the wire (wire.CodeHeader).
var codes = []struct {
	code string
	err  error
}{
	{"forgotten", ErrForgotten}, // before unknown-handle: it is one too
	{"unknown-handle", ErrUnknownHandle},
	{"damaged", ErrDamaged},
	{"bad-handle", ErrBadHandle},
	{"reserved-handle", ErrReservedHandle},
	{"no-delivery", ErrNoDelivery},
	{"withheld", ErrWithheld},
	{"no-fold", ErrNoFold},
	{"bad-target", ErrBadTarget},
	{"no-base", ErrNoBase},
	{"not-in-log", ErrNotInLog},
	{"cluster-down", ErrClusterDown},
	{"too-late", ErrTooLate},
	{"damaged-store", ErrDamagedStore},
}

// codeOf returns the wire code of err ("" when it has none).
func codeOf(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// codedError is a *wire.RemoteError whose code names one of ours: it
// matches both with errors.Is/As, and reads as the remote error.
type codedError struct {
	remote *wire.RemoteError
	kind   error
}

func (e *codedError) Error() string   { return e.remote.Error() }
func (e *codedError) Unwrap() []error { return []error{e.remote, e.kind} }

// decode turns a remote error with a known code into a codedError.
func decode(err error) error {
	var re *wire.RemoteError
	if !errors.As(err, &re) || re.Code == "" {
		return err
	}
	for _, c := range codes {
		if c.code == re.Code {
			return &codedError{remote: re, kind: c.err}
		}
	}
	return err
}

// kindError is an error with its own message that matches kind.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// Message renders an error for the user: a daemon handler's error without
// the transport's "v1.method: remote: " prefix, any other error as is.
func Message(err error) string {
	var re *wire.RemoteError
	if errors.As(err, &re) {
		return re.Msg
	}
	return err.Error()
}
