package hooks

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
)

// withParam sets m[k] = v, making m when it is nil, and returns m.
func withParam(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// withOrigin records an input's origin in an Invoked event's parameters.
func withOrigin(m, origin map[string]string) map[string]string {
	for k, v := range origin {
		m = withParam(m, string(events.ParamOriginPrefix)+k, v)
	}
	return m
}

// Recorded is one recorded invocation as a rerun takes it: where it sits
// in the log, its door, time, project and reader, its stored input and
// the parameters that shaped its decision, and what it delivered.
type Recorded struct {
	Seq     events.Seq
	Door    events.Door
	Time    time.Time
	Project string
	Reader  events.Reader
	// Input is the stored input, decompressed: the hook payload (redacted
	// unless the run kept secrets), or the exec/pipe output.
	Input []byte
	// Params are the Invoked event's parameters: the settings a rerun
	// honours (events.ParamLedgerOnly, events.ParamKeepSecrets, events.ParamFoldFloor, the
	// redaction count and growth, host, the host's exit code, passthrough,
	// nofold), the exec/pipe command and exit code, and the origin. A
	// what-if changes them before Rerun.
	Params map[string]string
	// Withheld is why the input was not stored (events.InputWithheldSecrets: it
	// held credentials, by an older build; events.InputForgotten: omni
	// forget erased it), "" when it was: such an invocation cannot be rerun.
	Withheld string
	// Emitted is what the invocation delivered (nil: it delivered no text,
	// a compaction or session event).
	Emitted *events.Emitted
	// Folded and Distilled are the batch's fold and first-seen-stage
	// records (the recorded figures of omni bench --store).
	Folded    []events.Folded
	Distilled *events.Distilled
}

// Origin returns the recorded origin of the input (events.ParamOriginPrefix
// parameters, without the prefix); nil when none was recorded.
func (r Recorded) Origin() map[string]string {
	var o map[string]string
	for k, v := range r.Params {
		if rest, ok := strings.CutPrefix(k, string(events.ParamOriginPrefix)); ok {
			if o == nil {
				o = map[string]string{}
			}
			o[rest] = v
		}
	}
	return o
}

// HasInvocation reports whether a batch records an invocation (an
// Invoked event): what Recorded and Rerun take.
func HasInvocation(batch []events.Event) bool { return hasInvoked(batch) }

// Recorded reads the invocation a batch records: its Invoked event (the
// input decompressed) and its delivery. Errors: a batch without an Invoked
// event, an input that does not decompress.
func (e *Engine) Recorded(batch []events.Event) (Recorded, error) { return RecordedOf(batch) }

// recordedDecoder decompresses stored inputs for RecordedOf.
var recordedDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	return d
})

// RecordedOf is Engine.Recorded without an Engine (omni log --corpus).
func RecordedOf(batch []events.Event) (Recorded, error) {
	var inv *events.Event
	var r Recorded
	for i := range batch {
		switch ev := &batch[i]; {
		case ev.Kind == events.KindInvoked && ev.Invoked != nil:
			inv = ev
		case ev.Kind == events.KindEmitted && ev.Emitted != nil:
			r.Emitted = ev.Emitted
		case ev.Kind == events.KindFolded && ev.Folded != nil:
			r.Folded = append(r.Folded, *ev.Folded)
		case ev.Kind == events.KindDistilled && ev.Distilled != nil:
			r.Distilled = ev.Distilled
		}
	}
	if inv == nil {
		seq := events.Seq(0)
		if len(batch) > 0 {
			seq = batch[0].Seq
		}
		return r, fmt.Errorf("batch %d holds no invocation", seq)
	}
	r.Seq, r.Door, r.Time, r.Project = inv.Seq, inv.Invoked.Door, inv.Time, inv.Project
	r.Reader = inv.Reader()
	r.Params = inv.Invoked.Params
	if w := r.Params[string(events.ParamInput)]; strings.HasPrefix(w, events.InputWithheld) {
		r.Withheld = w
		return r, nil
	}
	r.Input = inv.Invoked.Input
	if inv.Invoked.Codec == events.CodecZstd {
		var err error
		if r.Input, err = recordedDecoder().DecodeAll(inv.Invoked.Input, nil); err != nil {
			return r, fmt.Errorf("batch %d: decompress input: %w", inv.Seq, err)
		}
	}
	return r, nil
}

// Rerun decides a recorded invocation again on this Engine, with
// everything taken from r (rerunRecorded), and appends the decision to the
// Engine's log: omni bench --store's chained rerun, where the projections
// the next rerun reads are built from this one's decisions. It returns the
// result and the bytes the door printed (a hook reply, nil for none; the
// exec/pipe text). Errors: ErrWithheld (r.Withheld), the door's, a panic
// inside (recovered).
func (e *Engine) Rerun(ctx context.Context, r Recorded) (res Result, printed []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, printed = Result{}, nil
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rerunRecorded(ctx, r)
}

// rerunRecorded is the one rerun of a recorded invocation, shared by
// replay --at (Replay), replay --verify (Verify), diff (Diff) and bench
// --store (Rerun): the door's own path (hookAt, callAt) with the recorded
// time, project and reader, and every setting the invocation's parameters
// record: the stages (events.ParamLedgerOnly), the redaction stage
// (events.ParamKeepSecrets; the recorded count and growth, since the stored input
// is already redacted), the fold floor (events.ParamFoldFloor), passthrough and
// nofold, the host of an exec (host) and a Codex call's exit code
// (host_exit). A dry Engine decides without appending.
func (e *Engine) rerunRecorded(ctx context.Context, r Recorded) (Result, []byte, error) {
	if r.Withheld != "" {
		return Result{}, nil, fmt.Errorf("batch %d: %w", r.Seq, ErrWithheld)
	}
	p := r.Params
	saved := e.opt
	defer func() { e.opt = saved }()
	e.opt.LedgerOnly = p[string(events.ParamLedgerOnly)] == "1"
	e.opt.KeepSecrets = p[string(events.ParamKeepSecrets)] == "1"
	e.opt.FoldFloor, _ = strconv.Atoi(p[string(events.ParamFoldFloor)])
	passthrough := p[string(events.ParamEnvPassthrough)] == "1" || p[string(events.ParamNoFold)] != "" // a recorded unfolded delivery stays one
	switch r.Door {
	case events.DoorHook, events.DoorBench:
		hi := HookInput{Stdin: r.Input, Passthrough: passthrough, Origin: r.Origin()}
		res, err := e.hookAt(ctx, hi, r.Time, &replayCtx{project: r.Project, params: p})
		if err != nil {
			return res, nil, fmt.Errorf("batch %d: rerun hook: %w", r.Seq, err)
		}
		return res, res.Reply, nil
	default:
		code, _ := strconv.Atoi(p[string(events.ParamExitCode)])
		ci := CallInput{Door: r.Door, Command: p[string(events.ParamCommand)], Text: string(r.Input), ExitCode: code,
			Session: r.Reader.Session, Agent: r.Reader.Agent, Passthrough: passthrough,
			KeepSecrets: p[string(events.ParamKeepSecrets)] == "1", Host: p[string(events.ParamHost)], Origin: r.Origin()}
		ci.Masked, _ = strconv.Atoi(p[string(events.ParamRedacted)])
		ci.MaskedGrew = p[string(events.ParamRedactedGrew)] == "1"
		res, err := e.callAt(ctx, ci, r.Time, r.Project)
		if err != nil {
			return res, nil, fmt.Errorf("batch %d: rerun call: %w", r.Seq, err)
		}
		return res, []byte(res.Delivered), nil
	}
}

// RerunOther reruns a batch that records no invocation on this Engine's
// log (omni bench --store), with its recorded time: a goal or a fact
// (omni goal, omni remember) is appended as recorded; a retrieve is
// appended when this Engine's ledger knows the handle (a rerun that
// changed decisions may never have issued it). Log maintenance (omni gc's
// Pruned, Lost, omni forget's Forgotten) is not rerun. It returns the kind
// of the batch's first event and whether it was rerun. Errors: the log's.
func (e *Engine) RerunOther(ctx context.Context, batch []events.Event) (events.Kind, bool, error) {
	if len(batch) == 0 {
		return "", false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	kind := batch[0].Kind
	var out []events.Event
	for _, ev := range batch {
		switch ev.Kind {
		case events.KindGoalSet, events.KindRemembered:
		case events.KindRetrieved:
			if ev.Retrieved == nil {
				continue
			}
			if _, ok := e.ledger.Block(ev.Retrieved.Handle); !ok {
				continue
			}
		default:
			continue
		}
		ev.ID, ev.Seq, ev.Index = e.newID(ev.Time), 0, 0
		out = append(out, ev)
	}
	if len(out) == 0 {
		return kind, false, nil
	}
	if err := e.append(ctx, out); err != nil {
		return kind, false, err
	}
	return kind, true, nil
}
