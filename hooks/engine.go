package hooks

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/oklog/ulid/v2"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks/hosts"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/projections/ledger"
	"github.com/omnictx/omni/projections/session"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// Errors returned by the Engine.
var (
	// ErrReservedHandle: the handle is the documentation example
	// 0000000000000000, never a real block.
	ErrReservedHandle = errors.New("0000000000000000 is the documentation example, not a real handle")
	// ErrUnknownHandle: no archived block has this handle.
	ErrUnknownHandle = errors.New("no archived content for this handle")
	// ErrArchiveUnreadable: the handle is known but the batch holding its
	// bytes cannot be read (a damaged store file). omni gc --repair records
	// the batch as lost; the next repeat archives the bytes again.
	ErrArchiveUnreadable = errors.New("the stored bytes of this handle cannot be read (a damaged store file: run 'omni gc --repair')")
	// ErrBadHandle: not 16 hex characters.
	ErrBadHandle = errors.New("a handle is 16 hex characters")
)

// Options configure an Engine. Zero values take the defaults shown.
type Options struct {
	// Now is the clock (default time.Now). Only the Engine reads it, once
	// per invocation; the time is recorded in the events.
	Now func() time.Time
	// ProjectOf maps a working directory to its project (default: the
	// directory itself). cmd/omni passes the repository top level.
	ProjectOf func(cwd string) string
	// Logf receives one line per problem (default: discard).
	Logf func(format string, args ...any)
	// KeepSecrets keeps raw inputs that hold credentials in the log (and
	// turns redaction off), as `--keep-secrets` / OMNI_KEEP_SECRETS=1 ask.
	// It has no effect with Shared: a team's stream is always redacted
	// (every member holds a copy and no forget reaches them all).
	KeepSecrets bool
	// LedgerOnly skips the first-seen stages (redaction, distillers,
	// collapse, final cut): guard and ledger only (omni bench --ledger-only).
	// Recorded in each Invoked event so replay reruns the same stages.
	LedgerOnly bool
	// FoldFloor, when above 0, replaces the ledger's 264-byte floor: an
	// output under FoldFloor bytes never folds (pipeline.Request.Floor). A
	// what-if setting of omni bench; recorded in each Invoked event
	// (fold_floor) so replay reruns the same decision.
	FoldFloor int
	// Base loads the base snapshot omni gc saved, for a log that no longer
	// starts at batch 1 (nil: none is stored).
	Base BaseLoader
	// Shared says other machines append to the log too (a NATS cluster):
	// a decision is appended only after the batch it was decided at
	// (events.Conditional; else it is decided again with the new batches
	// folded), and the Engine folds batches it did not write (its own
	// appends after a gap, CatchUp, Follow).
	Shared bool
	// Machine and User identify this machine and its user on every event
	// the Engine appends ("" records none).
	Machine, User string
	// Bars, when set, replaces the ledger's floors (pipeline.DefaultBars)
	// for every decision: a what-if run (omni bench) weighs other floors
	// with it. Not recorded: omni replay reruns with the defaults.
	Bars *pipeline.Bars
	// Tokens, when set, counts the raw and the delivered text of every
	// decision in tokens (Emitted.RawTokens, DeliveredTokens, Tokenizer),
	// for the reports; nil counts none.
	Tokens TokenCounter
}

// TokenCounter counts text in tokens (internal/tokens.Counter): Count
// returns the tokens of a text, Name the encoding's name.
type TokenCounter interface {
	Count(text string) int
	Name() string
}

// Engine holds the projections and appends to the log. It is safe for
// concurrent use; invocations are serialised.
type Engine struct {
	mu      sync.Mutex
	gcMu    sync.Mutex // one GC at a time
	log     events.Log
	opt     Options
	ledger  *ledger.Ledger
	stats   *stats.Stats
	session *session.Sessions
	enc     *zstd.Encoder
	dec     *zstd.Decoder
	entropy *ulid.MonotonicEntropy
	dry     bool // replay: decide, never append
	// measure is true when the clock is the real one: only then is the
	// decision time recorded (Emitted.DecideMicros).
	measure bool
	// applied is the sequence of the newest batch folded, firstID the ID of
	// its first event (Checkpoint); restored the checkpoint's sequence when
	// the Engine started from one (NewFromCheckpoint).
	applied, restored events.Seq
	firstID           string
	// verified remembers, per handle, the archive location (sequence,
	// index) read back and checked by readable.
	verified map[string][2]int64
	// hashed holds the archives of the decision being appended whose
	// bytes decide hashed to their handle before compressing them (wrote
	// then need not decompress them); emptied by each stored batch.
	hashed []*events.Archived
	// shortened holds the newest first-seen results (shortenMemo), next
	// the slot the next one takes.
	shortened [shortenMemo]shortenEntry
	next      int
}

// shortenMemo is how many first-seen results an Engine keeps: an output
// delivered again whole (a command run again, a file read again) is
// shortened once, not on each call.
const shortenMemo = 4

// maxMemoText is the longest output whose first-seen result is kept, in
// bytes: twice Claude Code's 30,000-character output cap (HostOutputCap),
// past which a reply is not rewritten anyway. A kept result holds its
// text and, for Decide, 24 bytes and one failure verdict per line: measured
// (heap after Shorten), about 0.1 MB for 64 KiB of 40-byte lines and at
// most about 0.9 MB for 64 KiB of 2-byte lines, so the four kept results
// hold at most about 3.6 MB.
const maxMemoText = 64 << 10

// shortenEntry is a first-seen request and its result.
type shortenEntry struct {
	ok  bool
	req pipeline.ShortenRequest
	res pipeline.ShortenResult
}

// shortenStage runs the first-seen stages; a variable so tests can count
// the runs.
var shortenStage = pipeline.Shorten

// shorten returns pipeline.Shorten(req), from the Engine's newest results
// when one was for an equal request: Shorten is a pure function of its
// request (every field compared, the text byte for byte), and nothing
// changes a result after it is returned, so the one kept is the one
// Shorten would return. Called under e.mu.
func (e *Engine) shorten(req pipeline.ShortenRequest) pipeline.ShortenResult {
	for i := range e.shortened {
		if s := &e.shortened[i]; s.ok && s.req == req {
			return s.res
		}
	}
	r := shortenStage(req)
	if len(req.Text) <= maxMemoText {
		e.shortened[e.next] = shortenEntry{ok: true, req: req, res: r}
		e.next = (e.next + 1) % shortenMemo
	}
	return r
}

// New folds the whole log into fresh projections and returns an Engine
// ready to append. Errors are the log's read errors, wrapped.
//
// When omni gc removed the log's oldest batches, the fold starts from the
// base snapshot opt.Base loads; if there is none, the Engine folds the
// retained batches alone (what the removed ones taught is lost, said
// through opt.Logf) rather than fail: hooks must keep working.
func New(ctx context.Context, log events.Log, opt Options) (*Engine, error) {
	e := newEngine(log, opt)
	err := e.foldAll(ctx, 0, opt.Base, (*batchMark)(e))
	if errors.Is(err, ErrNoBase) {
		e.opt.Logf("%v: folding the retained batches only", err)
		e = newEngine(log, opt)
		_, err = replay.Fold(ctx, log, 0, 0, e.ledger, e.stats, e.session, (*batchMark)(e))
	}
	if err != nil {
		return nil, fmt.Errorf("fold log: %w", err)
	}
	return e, nil
}

func newEngine(log events.Log, opt Options) *Engine {
	measure := opt.Now == nil
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.ProjectOf == nil {
		opt.ProjectOf = func(cwd string) string { return cwd }
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	return &Engine{
		log: log, opt: opt,
		ledger: ledger.New(), stats: stats.New(), session: session.New(),
		enc: enc, dec: dec,
		entropy: ulid.Monotonic(rand.Reader, 0),
		measure: measure,
	}
}

// stamp records the decision time of an invocation that started at t0 in
// its Emitted event (the last of evs), when the Engine runs on the real
// clock and not in a replay.
func (e *Engine) stamp(evs []events.Event, t0 time.Time) {
	if !e.measure || e.dry || len(evs) == 0 {
		return
	}
	if em := evs[len(evs)-1].Emitted; em != nil {
		em.DecideMicros = max(1, time.Since(t0).Microseconds())
	}
}

// Stats returns a copy of the savings totals (all tools).
func (e *Engine) Stats() stats.Totals {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats.All
}

// StatsView calls fn with the stats projection under the Engine's lock.
func (e *Engine) StatsView(fn func(*stats.Stats)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.stats)
}

// LedgerSize reports the ledger's entry counts (see ledger.Ledger.Size).
func (e *Engine) LedgerSize() (readerLines, projectLines, blocks int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ledger.Size()
}

// apply folds a batch that was appended (or, in replay, read) into every
// projection.
func (e *Engine) apply(batch []events.Event) {
	if len(batch) > 0 && batch[0].Seq > e.applied {
		e.applied, e.firstID = batch[0].Seq, batch[0].ID
	}
	for _, ev := range batch {
		e.ledger.Apply(ev)
		e.stats.Apply(ev)
		e.session.Apply(ev)
	}
}

// append stores a batch and folds it. In dry mode it only folds.
func (e *Engine) append(ctx context.Context, batch []events.Event) error {
	if e.dry {
		return nil
	}
	if tm := timingOf(ctx); tm != nil {
		defer func(t0 time.Time) { tm.Append += time.Since(t0) }(time.Now())
	}
	e.stampOrigin(batch)
	seq, err := e.log.Append(ctx, batch)
	if err != nil {
		return err
	}
	e.stored(batch, seq)
	if e.opt.Shared && seq > e.applied+1 {
		// Other machines appended since the newest batch folded: fold
		// theirs first, so the projections stay a fold of the log's prefix.
		if err := e.catchUp(ctx, seq-1); err != nil {
			e.opt.Logf("append: fold batches before %d: %v (a follower folds them later)", seq, err)
			return nil
		}
	}
	e.apply(batch)
	return nil
}

func (e *Engine) newID(t time.Time) string {
	id, err := ulid.New(ulid.Timestamp(t), e.entropy)
	if err != nil {
		// Monotonic entropy overflows only after 2^80 ids in one ms.
		return ulid.Make().String()
	}
	return id.String()
}

func (e *Engine) compress(b []byte) []byte {
	return e.enc.EncodeAll(b, make([]byte, 0, len(b)/3+16))
}

func (e *Engine) decompress(b []byte) ([]byte, error) {
	return e.dec.DecodeAll(b, nil)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// view adapts the ledger to pipeline.View for one reader, project and time.
type view struct {
	l       *ledger.Ledger
	r       events.Reader
	project string
	now     time.Time
}

// Lookup answers pipeline.View: the scope and first source of a line key
// for this reader, project and time (session wins over project).
func (v view) Lookup(k uint64) pipeline.Seen {
	s, src := v.l.Lookup(v.r, v.project, k, v.now)
	switch s {
	case ledger.Session:
		return pipeline.Seen{Scope: pipeline.ScopeSession, Source: src}
	case ledger.Project:
		return pipeline.Seen{Scope: pipeline.ScopeProject, Source: src}
	}
	return pipeline.Seen{}
}

// Debts answers pipeline.View: the handles this reader retrieved and is
// owed one whole delivery of, with their blocks' line keys. A reader
// without a session id has no identity, so nothing is owed to it.
func (v view) Debts() []pipeline.Debt {
	if v.r.Session == "" {
		return nil
	}
	ds := v.l.Debts(v.r)
	if len(ds) == 0 {
		return nil
	}
	out := make([]pipeline.Debt, len(ds))
	for i, d := range ds {
		out[i] = pipeline.Debt{Handle: d.Handle, Keys: d.Keys}
	}
	return out
}

// Empty answers pipeline.View: whether this reader holds no line delivered
// within the ledger's window (fresh, or just compacted). A reader without
// a session id has no identity and always holds nothing: no claim of any
// scope reaches it.
func (v view) Empty() bool { return v.r.Session == "" || !v.l.Holds(v.r, v.now) }

var _ pipeline.View = view{}

// delivery is one text handed to a reader by one invocation.
type delivery struct {
	reader  events.Reader
	project string
	now     time.Time
	tool    string
	source  string // the command or path, as reports name it
	// lineSource is the ledger's source identity when it differs from
	// source (a plain file read's file); req.Source carries it too.
	lineSource string
	req        pipeline.Request
	// unrecorded: the host will not show the text (over its cap): record
	// nothing as delivered.
	unrecorded bool
	// unshown: the first-seen stages run and their cuts are archived, but
	// the host will not show the result whole (CallInput.Host): nothing
	// folds and nothing is recorded as shown (events.ReasonHostCap).
	unshown bool
	// persisted: a Bash output the host persisted, read back whole from its
	// file (hosts.Prepare); delivered inline only under HostOutputCap.
	persisted bool
	reason    string
	// shorten, when set, runs the first-seen stages (redaction, distillers,
	// collapse, final cut) on req.Text before the ledger; its Text is
	// ignored (req.Text is used).
	shorten *pipeline.ShortenRequest
	// noLedger skips the ledger (omni distill without a session).
	noLedger bool
	// redacted counts the values the door's redaction stage replaced in
	// req.Text (the shorten stage's redaction marker).
	redacted int
	// doorGrew: the door's masks made req.Text longer than it arrived.
	doorGrew bool
	// framed: the host's frame (hosts.Delivery.Framed) was split from req.Text.
	framed bool
}

// withHost copies into d what a host's protocol read from a tool event.
func (d delivery) withHost(h hosts.Delivery) delivery {
	d.req, d.source, d.lineSource = h.Req, h.Source, h.LineSource
	d.unrecorded, d.reason, d.persisted = h.Unrecorded, h.Reason, h.Persisted
	d.framed, d.shorten = h.Framed, h.Shorten
	return d
}

// decide runs the pipeline for a delivery and builds the batch's events
// after the Invoked one: Archived (new handles only), Folded, Emitted.
// output is filled in by the caller once the door's printed bytes are known.
func (e *Engine) decide(d delivery, call string) (pipeline.Decision, []events.Event) {
	v := view{l: e.ledger, r: d.reader, project: d.project, now: d.now}
	d.req.Floor = e.opt.FoldFloor
	raw := d.req.Text
	var dec pipeline.Decision
	var sr *pipeline.ShortenResult
	if d.shorten != nil && !d.unrecorded && d.req.NoFold == "" && !e.opt.LedgerOnly {
		sq := *d.shorten
		sq.Text = raw
		sq.RedactedValues, sq.DoorGrew = d.redacted, d.doorGrew
		// A retrieve's debt binds the first-seen stages too: an output
		// holding the lines the reader asked for is not distilled or cut.
		sq.Owed = holdsDebt(v.Debts(), raw)
		r := e.shorten(sq)
		sr = &r
		if r.Changed {
			d.req.Text, d.req.Original = r.Text, raw
		}
		d.req = r.Reuse(d.req)
	}
	switch {
	case d.unrecorded:
		dec = pipeline.Decision{Text: d.req.Text, Reason: d.reason}
		dec.RawLines = pipeline.CountLines(d.req.Text)
		dec.DeliveredLines = dec.RawLines
	case d.unshown:
		req := d.req
		req.NoFold = string(events.ReasonHostCap)
		dec = pipeline.Decide(req, v)
	case d.noLedger:
		req := d.req
		req.NoFold = "no-ledger"
		dec = pipeline.Decide(req, v)
	default:
		req := d.req
		if req.Bars == nil {
			req.Bars = e.opt.Bars
		}
		dec = pipeline.Decide(req, v)
	}
	base := events.Event{Time: d.now, Project: d.project, Session: d.reader.Session, Agent: d.reader.Agent, Call: call}
	var evs []events.Event
	archived := map[string]bool{}
	archive := func(h, block string, lines int) {
		if archived[h] {
			return
		}
		b, known := e.ledger.Block(h)
		if known && e.readable(h, b) {
			return
		}
		// A handle is printed only when its bytes can come back: a block
		// the ledger knows but the store cannot read back (a damaged store
		// before omni gc --repair) is archived again, in this batch.
		archived[h] = true
		ev := base
		ev.ID, ev.Kind = e.newID(d.now), events.KindArchived
		ev.Archived = &events.Archived{Handle: h, Lines: lines, Bytes: len(block), Codec: events.CodecZstd, Data: e.compress([]byte(block)), Again: known}
		if pipeline.HandleOf(block) == h {
			e.hashed = append(e.hashed, ev.Archived)
		}
		evs = append(evs, ev)
	}
	if sr != nil {
		for _, b := range sr.Blocks {
			archive(b.Handle, b.Bytes, pipeline.CountLines(b.Bytes))
		}
	}
	for _, f := range dec.Folds {
		archive(f.Handle, f.Block, pipeline.CountLines(f.Block))
	}
	if sr != nil {
		ev := base
		ev.ID, ev.Kind = e.newID(d.now), events.KindDistilled
		ev.Distilled = &events.Distilled{Distiller: sr.Distiller, RawBytes: len(raw), DeliveredBytes: len(d.req.Text),
			Redacted: sr.Redacted, Collapsed: sr.Collapsed, Passthrough: !sr.Changed, Reason: sr.Reason,
			Truncated: strings.Contains(sr.Text, "[OMNI: output truncated")}
		evs = append(evs, ev)
	}
	for _, f := range dec.Folds {
		ev := base
		ev.ID, ev.Kind = e.newID(d.now), events.KindFolded
		scope := events.ScopeSession
		if f.Scope == pipeline.ScopeProject {
			scope = events.ScopeProject
		}
		ev.Folded = &events.Folded{Marker: string(f.Kind), Scope: scope, Handle: f.Handle, FirstLine: f.FirstLine,
			Lines: f.Lines, Bytes: f.Bytes, MarkerBytes: len(f.Marker), From: f.From, Source: f.Source}
		evs = append(evs, ev)
	}
	changed := dec.Text != raw
	reason := dec.Reason
	if sr != nil && sr.Changed {
		reason = ""
	}
	ev := base
	ev.ID, ev.Kind = e.newID(d.now), events.KindEmitted
	em := &events.Emitted{Tool: d.tool, Source: d.source, LineSource: d.lineSource, RawBytes: len(raw), DeliveredBytes: len(dec.Text),
		RawLines: pipeline.CountLines(raw), DeliveredLines: dec.DeliveredLines, Replied: changed, Reason: reason,
		Failed: d.req.Failed, Unrecorded: d.unrecorded || d.unshown, Paid: dec.Paid, RepeatBytes: dec.RepeatBytes}
	if !d.unrecorded && !d.unshown && !d.noLedger {
		em.Lines = events.Keys(dec.Delivered)
	}
	if e.opt.Tokens != nil {
		em.RawTokens, em.Tokenizer = e.opt.Tokens.Count(raw), e.opt.Tokens.Name()
		em.DeliveredTokens = em.RawTokens
		if changed {
			em.DeliveredTokens = e.opt.Tokens.Count(dec.Text)
		}
	}
	// Every handle the delivered text may name, including blocks archived
	// by an earlier call (archive skipped them): omni gc keeps what a
	// retained event names.
	if sr != nil {
		for _, b := range sr.Blocks {
			em.Handles = appendOnce(em.Handles, b.Handle)
		}
	}
	for _, f := range dec.Folds {
		em.Handles = appendOnce(em.Handles, f.Handle)
	}
	ev.Emitted = em
	evs = append(evs, ev)
	dec.Reason = reason
	return dec, evs
}

// readable reports whether the archived copy of h at b reads back as
// bytes that hash to h. A positive answer is remembered for this Engine's
// life (per handle and location), so a block is read once per process,
// not once per fold. A replay (dry) decides without reading.
func (e *Engine) readable(h string, b ledger.Block) bool {
	if e.dry {
		return true
	}
	loc := [2]int64{int64(b.Seq), int64(b.Index)}
	if e.verified[h] == loc {
		return true
	}
	evs, err := e.log.Get(context.Background(), b.Seq)
	if err != nil || b.Index >= len(evs) || evs[b.Index].Archived == nil || evs[b.Index].Archived.Handle != h {
		e.opt.Logf("archive %s at batch %d cannot be read back (%v): archiving it again", h, b.Seq, err)
		return false
	}
	a := evs[b.Index].Archived
	if a.Forgotten {
		return false // erased by omni forget: archive it again
	}
	data := a.Data
	if a.Codec == events.CodecZstd {
		if data, err = e.decompress(a.Data); err != nil {
			e.opt.Logf("archive %s at batch %d: %v: archiving it again", h, b.Seq, err)
			return false
		}
	}
	if pipeline.HandleOf(string(data)) != h {
		e.opt.Logf("archive %s at batch %d does not hash to its handle: archiving it again", h, b.Seq)
		return false
	}
	e.verify(h, loc)
	return true
}

// stored numbers batch's events with the sequence seq the log stored it
// under (and their index in it), and remembers the archives it holds as
// read back (wrote).
func (e *Engine) stored(batch []events.Event, seq events.Seq) {
	for i := range batch {
		batch[i].Seq, batch[i].Index = seq, i
		if a := batch[i].Archived; a != nil {
			e.wrote(a, seq, i)
		}
	}
	e.hashed = e.hashed[:0]
}

// wrote remembers the archive a, just stored at (seq, index) by this
// Engine's append, as readable would after reading it back: the log
// acknowledged the batch, so what it holds there is what was written, and
// the bytes written are checked here (decompressed, hashed to the handle)
// instead of fetched from the store at the handle's next fold, which
// costs a round trip to the store and the decoding of the whole batch.
func (e *Engine) wrote(a *events.Archived, seq events.Seq, index int) {
	if a.Forgotten {
		return
	}
	loc := [2]int64{int64(seq), int64(index)}
	if slices.Contains(e.hashed, a) {
		// decide hashed the bytes it compressed into a.
		e.verify(a.Handle, loc)
		return
	}
	data := a.Data
	if a.Codec == events.CodecZstd {
		var err error
		if data, err = e.decompress(a.Data); err != nil {
			return
		}
	}
	if pipeline.HandleOf(string(data)) != a.Handle {
		return
	}
	e.verify(a.Handle, loc)
}

// maxVerified bounds Engine.verified, in handles (some 64 bytes each):
// past it the map is emptied, and a handle's next fold reads its archive
// back once more.
const maxVerified = 1 << 16

// verify remembers that handle h's archive at loc (sequence, index) reads
// back whole.
func (e *Engine) verify(h string, loc [2]int64) {
	if e.verified == nil || len(e.verified) >= maxVerified {
		e.verified = map[string][2]int64{}
	}
	e.verified[h] = loc
}

// maxNamedScan bounds the batches namedIn reads, newest first, for one
// scoped retrieve of another project's block (a refusal reads them all).
const maxNamedScan = 256

// namedIn reports whether an event of project named handle h in one of
// the newest maxNamedScan batches from b.Ref (the newest batch naming h)
// down: a Folded or Archived event
// of h, or an Emitted event listing it. A marker names only bytes of the
// output it was printed in (folds and cuts never cross projects), so such
// a project may read the block back although its bytes were archived
// first by another project's call (the archive is skipped for a block
// already stored). A batch no longer stored is skipped; any other read
// error, or ctx ending, stops the scan with false (refused): on a shared
// stream whose cluster stalls each read waits for its timeout. It reads
// only the log: the caller does not hold e.mu (logf is e.opt.Logf, read
// under it).
func (e *Engine) namedIn(ctx context.Context, h, project string, b ledger.Block, logf func(string, ...any)) bool {
	// Down to the log's first batch, not b.Seq: a block omni gc kept is
	// archived again above the cutoff in the project it was first archived
	// in, above the markers other projects printed before the gc.
	first, err := e.log.First(ctx)
	if err != nil {
		logf("retrieve %s in %s: %v: refused", h, project, err)
		return false
	}
	for seq, n := b.Ref, 0; seq >= first && seq > 0 && n < maxNamedScan; seq, n = seq-1, n+1 {
		if ctx.Err() != nil {
			return false
		}
		evs, err := e.log.Get(ctx, seq)
		if errors.Is(err, events.ErrNotFound) {
			continue
		}
		if err != nil {
			logf("retrieve %s in %s: read batch %d: %v: refused", h, project, seq, err)
			return false
		}
		for _, ev := range evs {
			if ev.Project != project {
				continue
			}
			switch {
			case ev.Folded != nil && ev.Folded.Handle == h,
				ev.Archived != nil && ev.Archived.Handle == h,
				ev.Emitted != nil && slices.Contains(ev.Emitted.Handles, h):
				return true
			}
		}
	}
	return false
}

// Retrieve returns the exact archived bytes of handle h and records a
// Retrieved event for reader r (an empty r.Session means "unknown reader":
// the debt goes to every reader shown a marker with h). Errors:
// ErrBadHandle, ErrReservedHandle, ErrUnknownHandle, ErrArchiveUnreadable
// (wrapped), or a wrapped store error.
func (e *Engine) Retrieve(ctx context.Context, h string, r events.Reader) ([]byte, error) {
	return e.RetrieveIn(ctx, h, r, "")
}

// RetrieveIn is Retrieve scoped to project ("" for none): a block whose
// Archived event belongs to another project is ErrUnknownHandle, as if it
// were not archived (a reader confined to one project learns nothing of
// another's output), unless a marker printed in project named it
// (namedIn).
func (e *Engine) RetrieveIn(ctx context.Context, h string, r events.Reader, project string) ([]byte, error) {
	if len(h) != pipeline.HandleLen || !isHex(h) {
		return nil, ErrBadHandle
	}
	if h == pipeline.ExampleHandle {
		return nil, ErrReservedHandle
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.ledger.Block(h)
	if !ok && e.ledger.Forgotten(h) {
		return nil, ErrForgotten
	}
	if !ok {
		return nil, ErrUnknownHandle
	}
	evs, err := e.log.Get(ctx, b.Seq)
	if errors.Is(err, events.ErrNotFound) {
		return nil, fmt.Errorf("%w: batch %d", ErrArchiveUnreadable, b.Seq)
	}
	if err != nil {
		return nil, fmt.Errorf("read archive %s: %w", h, err)
	}
	if b.Index >= len(evs) || evs[b.Index].Archived == nil || evs[b.Index].Archived.Handle != h {
		return nil, fmt.Errorf("read archive %s: event %d.%d is not its Archived event", h, b.Seq, b.Index)
	}
	if project != "" && evs[b.Index].Project != project {
		// The scan reads up to maxNamedScan batches: without the lock, so
		// hooks do not wait for it; the block must still be where it was
		// (gc, forget or a repair may have moved it meanwhile).
		logf := e.opt.Logf
		named := func() bool {
			e.mu.Unlock()
			defer e.mu.Lock() // a panic leaves it held, as the caller's defer expects
			return e.namedIn(ctx, h, project, b, logf)
		}()
		if now, ok := e.ledger.Block(h); !named || !ok || now.Seq != b.Seq || now.Index != b.Index {
			return nil, ErrUnknownHandle
		}
		// Read under the lock again (omni forget may have erased it).
		if evs, err = e.log.Get(ctx, b.Seq); err != nil {
			return nil, fmt.Errorf("read archive %s: %w", h, err)
		}
		if b.Index >= len(evs) || evs[b.Index].Archived == nil || evs[b.Index].Archived.Handle != h {
			return nil, fmt.Errorf("read archive %s: event %d.%d is not its Archived event", h, b.Seq, b.Index)
		}
	}
	a := evs[b.Index].Archived
	if a.Forgotten {
		return nil, ErrForgotten
	}
	data := a.Data
	if a.Codec == events.CodecZstd {
		if data, err = e.decompress(a.Data); err != nil {
			return nil, fmt.Errorf("decompress archive %s: %w", h, err)
		}
	}
	if pipeline.HandleOf(string(data)) != h {
		return nil, fmt.Errorf("archive %s: stored bytes do not hash to their handle", h)
	}
	now := e.opt.Now().UTC()
	ev := events.Event{ID: e.newID(now), Kind: events.KindRetrieved, Time: now, Session: r.Session, Agent: r.Agent,
		Retrieved: &events.Retrieved{Handle: h, Found: true, Lines: blockKeys(string(data))}}
	if err := e.append(ctx, []events.Event{ev}); err != nil {
		// The bytes are still the answer; the debt is just not recorded.
		e.opt.Logf("retrieve %s: record: %v", h, err)
	}
	return data, nil
}

// BlockInfo returns the size of an archived block, for retrieve's frame.
func (e *Engine) BlockInfo(h string) (lines, bytes int, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.ledger.Block(h)
	return b.Lines, b.Bytes, ok
}

// holdsDebt reports whether text holds every line of one of the debts (a
// block the reader retrieved and is owed whole once).
func holdsDebt(debts []pipeline.Debt, text string) bool {
	if len(debts) == 0 {
		return false
	}
	held := map[uint64]bool{}
	for _, l := range pipeline.SplitLines(nil, text) {
		held[l.Key] = true
	}
	for _, d := range debts {
		if len(d.Keys) == 0 {
			continue
		}
		all := true
		for _, k := range d.Keys {
			if !held[k] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// blockKeys returns the keys of a block's non-blank lines, each once, in
// order: what a delivery must hold to pay a retrieve's debt.
func blockKeys(block string) events.Keys {
	var out events.Keys
	seen := map[uint64]bool{}
	for _, l := range pipeline.SplitLines(nil, block) {
		if l.Key != 0 && !seen[l.Key] {
			seen[l.Key] = true
			out = append(out, l.Key)
		}
	}
	return out
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
