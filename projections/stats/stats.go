// Package stats is the savings projection: a pure fold over the event log
// into byte and call totals — the headline (bytes that never reached the
// model), one figure per mechanism over its own population, breakdowns per
// tool, command family, session, host, agent, project and marker kind, the
// fold calibration (folds against retrieves), sessions' lifetimes and a
// time series. It imports events, the standard library and the
// internal/shellcmd leaf only: no clock
// (time comes from each event), no I/O. Every figure can be traced to the
// Invoked, Emitted, Folded, Distilled, Retrieved and Compacted events that
// made it.
//
// Rows read by no model are kept apart as terminal rows, folded into
// Terminal; everything else into Agent. The two populations are never added
// together in a percentage (terminal output no model read once made 73% of
// the bytes an earlier tool claimed saved on one measured installation, and
// inflated that tool's benchmark headline from 43.3% to 79.1%). A terminal row is an
// invocation with no session, or one with no host (omni exec, a pipe) that
// was either recorded as run on a terminal (Invoked param tty=1) or, when
// the door did not record it, belongs to a session no host hook has named
// before it: a person trying omni out, not an agent whose commands a
// PreToolUse rewrite sent through omni exec (param tty=0 forces an agent row).
package stats

import (
	"sort"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
)

// Totals are byte and call counts over one population of Emitted events.
type Totals struct {
	// Calls counts invocations; Replied those whose text was changed.
	Calls, Replied int
	// RawBytes is what the hosts produced; DeliveredBytes what the model read.
	RawBytes, DeliveredBytes int64
	// RepeatBytes is the available repetition: bytes of non-blank lines the
	// reader had already been delivered.
	RepeatBytes int64
	// Failed counts failure-path calls; Unrecorded those the host did not show.
	Failed, Unrecorded int
	// RawTokens and DeliveredTokens total the calls whose Emitted event
	// carried token counts (TokenCalls of them), as Tokenizer (the newest
	// encoding named) counted them.
	RawTokens, DeliveredTokens int64
	TokenCalls                 int
	Tokenizer                  string
}

// SavedBytes is RawBytes - DeliveredBytes: bytes that never reached the model.
func (t Totals) SavedBytes() int64 { return t.RawBytes - t.DeliveredBytes }

func (t *Totals) add(em *events.Emitted) {
	t.Calls++
	if em.Replied {
		t.Replied++
	}
	t.RawBytes += int64(em.RawBytes)
	t.DeliveredBytes += int64(em.DeliveredBytes)
	t.RepeatBytes += int64(em.RepeatBytes)
	if em.Failed {
		t.Failed++
	}
	if em.Unrecorded {
		t.Unrecorded++
	}
	if em.Tokenizer != "" {
		t.TokenCalls++
		t.RawTokens += int64(em.RawTokens)
		t.DeliveredTokens += int64(em.DeliveredTokens)
		t.Tokenizer = em.Tokenizer
	}
}

// FoldTotals count folds of one marker kind.
type FoldTotals struct {
	Folds int
	// Lines and Bytes measure what the folds replaced; MarkerBytes what
	// replaced it.
	Lines       int
	Bytes       int64
	MarkerBytes int64
	// Retrieved counts Retrieved events naming a handle of this kind.
	Retrieved int
	// Handles counts distinct handles first folded as this kind;
	// RetrievedHandles those of them retrieved at least once.
	Handles, RetrievedHandles int
}

// Mechanism totals one way omni keeps bytes from the model, over its own
// population: the calls it acted on. Percentages of different mechanisms
// have different bases and are never added.
type Mechanism struct {
	// Calls counts the invocations the mechanism changed.
	Calls int
	// Folds counts markers issued (folded only).
	Folds int
	// Values counts values replaced by [REDACTED] (redacted only).
	Values int
	// SavedBytes is what the mechanism kept from the model, in bytes (for
	// redaction it can be negative: a placeholder longer than the secret).
	SavedBytes int64
	// BaseBytes is the size of the text the mechanism acted on, in bytes,
	// over the same calls: the base of its percentage.
	BaseBytes int64
}

// Row is one line of a breakdown (per tool, family, session, ...).
type Row struct {
	Calls int
	// RawBytes the hosts produced, DeliveredBytes the model read.
	RawBytes, DeliveredBytes int64
	// Folds counts markers issued in these calls; Failed failure-path calls.
	Folds, Failed int
}

func (r *Row) add(em *events.Emitted, folds int) {
	r.Calls++
	r.RawBytes += int64(em.RawBytes)
	r.DeliveredBytes += int64(em.DeliveredBytes)
	r.Folds += folds
	if em.Failed {
		r.Failed++
	}
}

// Point is one bucket of the time series: bytes saved by each mechanism in
// the calls that ended in the bucket.
type Point struct {
	Calls     int
	RawBytes  int64
	Folded    int64
	Distilled int64
	Collapsed int64
	Redacted  int64
	Cut       int64
}

// seriesMax is the most buckets a series keeps; past it the bucket width
// grows to the next step of seriesSteps.
const seriesMax = 200

// seriesSteps are the bucket widths, in seconds; each divides the next, and
// buckets are aligned to the Unix epoch, so coarsening merges exactly and
// the final width depends only on the set of event times.
var seriesSteps = []int64{60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86400, 7 * 86400, 28 * 86400}

// Series is a time series with adaptive bucket width.
type Series struct {
	step    int // index into seriesSteps
	buckets map[int64]*Point
}

// Width returns the bucket width.
func (s *Series) Width() time.Duration {
	return time.Duration(seriesSteps[s.step]) * time.Second
}

func (s *Series) at(t time.Time) *Point {
	if s.buckets == nil {
		s.buckets = map[int64]*Point{}
	}
	w := seriesSteps[s.step]
	k := floorDiv(t.Unix(), w)
	p := s.buckets[k]
	if p == nil {
		p = &Point{}
		s.buckets[k] = p
		for len(s.buckets) > seriesMax && s.step < len(seriesSteps)-1 {
			s.coarsen()
		}
		p = s.buckets[floorDiv(t.Unix(), seriesSteps[s.step])]
	}
	return p
}

func (s *Series) coarsen() {
	w, nw := seriesSteps[s.step], seriesSteps[s.step+1]
	s.step++
	nb := make(map[int64]*Point, len(s.buckets))
	for k, p := range s.buckets {
		nk := floorDiv(k*w, nw)
		q := nb[nk]
		if q == nil {
			q = &Point{}
			nb[nk] = q
		}
		q.Calls += p.Calls
		q.RawBytes += p.RawBytes
		q.Folded += p.Folded
		q.Distilled += p.Distilled
		q.Collapsed += p.Collapsed
		q.Redacted += p.Redacted
		q.Cut += p.Cut
	}
	s.buckets = nb
}

// Points returns the buckets in time order with their start times (UTC).
func (s *Series) Points() (starts []time.Time, points []Point) {
	keys := make([]int64, 0, len(s.buckets))
	for k := range s.buckets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	w := seriesSteps[s.step]
	for _, k := range keys {
		starts = append(starts, time.Unix(k*w, 0).UTC())
		points = append(points, *s.buckets[k])
	}
	return starts, points
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Part is the fold of one population (agent rows or terminal rows).
type Part struct {
	// Totals are over every Emitted event of the population.
	Totals Totals
	// OverCap are over the calls whose output the host persisted
	// (events.ParamPersisted): their RawBytes are the whole output, the
	// baseline being what the model would otherwise have read from the
	// host's file, not the preview it was shown inline.
	OverCap Totals
	// The mechanisms. LeftAlone.Calls counts calls no mechanism changed
	// (its bytes are 0 by design); LeftAloneReasons counts them by the
	// Emitted reason ("unchanged" when none was given).
	Folded, Distilled, Collapsed, Redacted, Cut, LeftAlone Mechanism
	LeftAloneReasons                                       map[string]int
	// Breakdowns of the Emitted events. ByMachine and ByUser key on the
	// event's Machine and User ("" for events that recorded none).
	ByTool, ByFamily, BySession, ByHost, ByAgent, ByProject, ByMachine, ByUser map[string]*Row
	// ByFold is the fold calibration per marker kind.
	ByFold map[string]*FoldTotals
	// ByCut is the same calibration for the cuts of the first-seen stages,
	// per mechanism (CutMechanism): the distiller's name, "collapse" or
	// "cut" (the final cut). Folds counts cuts (archived blocks).
	ByCut map[string]*FoldTotals
	// Lifetimes are the calls each reader session made before a compaction
	// ended the segment (segments with no call are not counted); Open holds
	// the calls since the last compaction (or the start) per session.
	Lifetimes []int
	Open      map[string]int
	// Compactions counts Compacted events of this population's sessions.
	Compactions int
	// Series is bytes saved over time by mechanism.
	Series Series
	// First and Last are the times of the first and newest Emitted event.
	First, Last time.Time
	// Latency counts the Emitted events that recorded a decision time
	// (DecideMicros > 0) per bucket of LatencyBucketsMicros (the last bucket
	// holds everything slower).
	Latency [len(LatencyBucketsMicros) + 1]int
}

// LatencyBucketsMicros are the upper bounds, in microseconds, of the
// decision-time histogram (a 1-2.5-5 ladder from 0.1 ms to 50 ms).
var LatencyBucketsMicros = [...]int64{100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000}

func newPart() *Part {
	return &Part{
		LeftAloneReasons: map[string]int{},
		ByTool:           map[string]*Row{}, ByFamily: map[string]*Row{}, BySession: map[string]*Row{},
		ByHost: map[string]*Row{}, ByAgent: map[string]*Row{}, ByProject: map[string]*Row{},
		ByMachine: map[string]*Row{}, ByUser: map[string]*Row{},
		ByFold: map[string]*FoldTotals{},
		ByCut:  map[string]*FoldTotals{},
		Open:   map[string]int{},
	}
}

func row(m map[string]*Row, k string) *Row {
	r := m[k]
	if r == nil {
		r = &Row{}
		m[k] = r
	}
	return r
}

// call accumulates the events of one invocation until (and after) its
// Emitted event.
type call struct {
	id   string
	part *Part
	host string
	// persisted: the host persisted the output (events.ParamPersisted).
	persisted bool
	folds     int
	foldSave  int64
	dist      *events.Distilled
	// archived lists the handles the call's Archived events named (not
	// Again), until its Distilled event attributes them.
	archived []string
	// set by Emitted:
	emitted bool
	em      events.Emitted
	t       time.Time
	rows    []*Row // the breakdown rows the call was added to
}

type handleInfo struct {
	part *Part
	// kind is a marker kind, or cutPrefix + a CutMechanism.
	kind      string
	retrieved bool
	call      string // the call that first archived it
}

// cutPrefix marks a handleInfo kind that is a first-seen cut.
const cutPrefix = "cut:"

// CutMechanism names the first-seen stage a Distilled event's archived
// blocks come from: the distiller's name, else "collapse" when the
// collapse fired, else "cut" (the final cut).
func CutMechanism(d *events.Distilled) string {
	switch {
	case d.Distiller != "":
		return d.Distiller
	case d.Collapsed:
		return "collapse"
	}
	return "cut"
}

// Stats is the fold state. Not safe for concurrent use.
type Stats struct {
	// All, ByTool and ByFold total every Emitted and Folded event, agent
	// and terminal rows together (kept for callers that want raw totals;
	// reports use Agent and Terminal).
	All    Totals
	ByTool map[string]*Totals
	ByFold map[string]*FoldTotals
	// Compactions counts Compacted events.
	Compactions int

	// Agent holds rows a model read (a host hook); Terminal rows with no
	// host or no session.
	Agent, Terminal *Part

	since   time.Time
	handles map[string]*handleInfo
	hosted  map[string]bool // sessions a host hook has named
	cur     call
	// Events counts the events folded (after the Since filter); First and
	// Last are the times of the first and newest of them.
	Events      int
	First, Last time.Time
}

// New returns empty stats over the whole log.
func New() *Stats { return NewSince(time.Time{}) }

// NewSince returns empty stats that ignore events before since (the zero
// time ignores none). Retrieves count only for folds made since then.
func NewSince(since time.Time) *Stats {
	return &Stats{
		ByTool: map[string]*Totals{}, ByFold: map[string]*FoldTotals{},
		Agent: newPart(), Terminal: newPart(),
		since: since, handles: map[string]*handleInfo{}, hosted: map[string]bool{},
	}
}

// Since returns the filter given to NewSince.
func (s *Stats) Since() time.Time { return s.since }

// hostOf names the entry point of an invocation for the per-host view.
func hostOf(inv *events.Invoked) string {
	if inv.Host != "" {
		return inv.Host
	}
	return string(inv.Door)
}

// terminal classifies an invocation (see the package doc).
func (s *Stats) terminal(e events.Event, inv *events.Invoked) bool {
	if e.Session == "" {
		return true
	}
	if inv.Host != "" {
		return false
	}
	switch inv.Params[string(events.ParamTTY)] {
	case "1":
		return true
	case "0":
		return false
	}
	return !s.hosted[e.Session]
}

// callFor returns the accumulator of the invocation e belongs to. Events
// whose Invoked event was not seen (filtered out) get a fresh one classified
// by session alone.
func (s *Stats) callFor(e events.Event) *call {
	if s.cur.id != "" && s.cur.id == e.Call {
		return &s.cur
	}
	p := s.Agent
	if e.Session == "" {
		p = s.Terminal
	}
	s.cur = call{id: e.Call, part: p, host: "unknown"}
	return &s.cur
}

// Apply folds one event; unknown kinds are ignored.
func (s *Stats) Apply(e events.Event) {
	if e.Kind == events.KindInvoked && e.Invoked != nil && e.Invoked.Host != "" && e.Session != "" {
		s.hosted[e.Session] = true // learnt before the filter, so --since classifies alike
	}
	if !s.since.IsZero() && e.Time.Before(s.since) {
		return
	}
	s.Events++
	if s.First.IsZero() || e.Time.Before(s.First) {
		s.First = e.Time
	}
	if e.Time.After(s.Last) {
		s.Last = e.Time
	}
	switch e.Kind {
	case events.KindInvoked:
		inv := e.Invoked
		if inv == nil {
			return
		}
		p := s.Agent
		if s.terminal(e, inv) {
			p = s.Terminal
		}
		s.cur = call{id: e.ID, part: p, host: hostOf(inv), persisted: inv.Params[string(events.ParamPersisted)] == "1"}
	case events.KindEmitted:
		em := e.Emitted
		if em == nil {
			return
		}
		s.emitted(e, em)
		if s.cur.id == e.Call {
			s.cur.archived = nil // a batch without a Distilled event (no first-seen stage)
		}
	case events.KindFolded:
		f := e.Folded
		if f == nil {
			return
		}
		c := s.callFor(e)
		if c.emitted { // a fold recorded after its Emitted event
			s.attribute(c, -1)
		}
		c.folds++
		c.foldSave += int64(f.Bytes - f.MarkerBytes)
		if c.emitted {
			s.attribute(c, +1)
			for _, r := range c.rows {
				r.Folds++
			}
		}
		if hi, ok := s.handles[f.Handle]; ok && hi.call == c.id && strings.HasPrefix(hi.kind, cutPrefix) {
			// Archived in this call and taken for a cut: it is this fold's.
			if ct := hi.part.ByCut[strings.TrimPrefix(hi.kind, cutPrefix)]; ct != nil {
				ct.Folds--
				ct.Handles--
			}
			delete(s.handles, f.Handle)
		}
		for _, m := range []map[string]*FoldTotals{s.ByFold, c.part.ByFold} {
			ft := m[f.Marker]
			if ft == nil {
				ft = &FoldTotals{}
				m[f.Marker] = ft
			}
			ft.Folds++
			ft.Lines += f.Lines
			ft.Bytes += int64(f.Bytes)
			ft.MarkerBytes += int64(f.MarkerBytes)
			if _, ok := s.handles[f.Handle]; !ok {
				ft.Handles++
			}
		}
		if _, ok := s.handles[f.Handle]; !ok {
			s.handles[f.Handle] = &handleInfo{part: c.part, kind: f.Marker}
		}
	case events.KindArchived:
		if a := e.Archived; a != nil && !a.Again && e.Call != "" {
			c := s.callFor(e)
			c.archived = append(c.archived, a.Handle)
		}
	case events.KindDistilled:
		d := e.Distilled
		if d == nil {
			return
		}
		c := s.callFor(e)
		if c.emitted {
			s.attribute(c, -1)
		}
		dd := *d
		c.dist = &dd
		if c.emitted {
			s.attribute(c, +1)
		}
		// The blocks archived so far in this call are the first-seen
		// stages' cuts (a ledger fold's block, archived in the same batch,
		// is taken back by its Folded event).
		mech := CutMechanism(d)
		for _, h := range c.archived {
			if _, ok := s.handles[h]; ok {
				continue
			}
			s.handles[h] = &handleInfo{part: c.part, kind: cutPrefix + mech, call: c.id}
			ct := c.part.ByCut[mech]
			if ct == nil {
				ct = &FoldTotals{}
				c.part.ByCut[mech] = ct
			}
			ct.Folds++
			ct.Handles++
		}
		c.archived = nil
	case events.KindRetrieved:
		r := e.Retrieved
		if r == nil || !r.Found {
			return
		}
		h, ok := s.handles[r.Handle]
		if !ok {
			return
		}
		if strings.HasPrefix(h.kind, cutPrefix) {
			if ct := h.part.ByCut[strings.TrimPrefix(h.kind, cutPrefix)]; ct != nil {
				ct.Retrieved++
				if !h.retrieved {
					ct.RetrievedHandles++
				}
			}
			h.retrieved = true
			return
		}
		for _, ft := range []*FoldTotals{s.ByFold[h.kind], h.part.ByFold[h.kind]} {
			ft.Retrieved++
			if !h.retrieved {
				ft.RetrievedHandles++
			}
		}
		h.retrieved = true
	case events.KindCompacted:
		s.Compactions++
		if e.Session == "" {
			return
		}
		for _, p := range []*Part{s.Agent, s.Terminal} {
			if n, ok := p.Open[e.Session]; ok {
				p.Compactions++
				if n > 0 {
					p.Lifetimes = append(p.Lifetimes, n)
					p.Open[e.Session] = 0
				}
			}
		}
	}
}

func (s *Stats) emitted(e events.Event, em *events.Emitted) {
	t := s.ByTool[em.Tool]
	if t == nil {
		t = &Totals{}
		s.ByTool[em.Tool] = t
	}
	s.All.add(em)
	t.add(em)

	c := s.callFor(e)
	c.emitted, c.em, c.t = true, *em, e.Time
	c.em.Lines = nil // not needed; do not keep the keys alive
	p := c.part
	p.Totals.add(em)
	if c.persisted {
		p.OverCap.add(em)
	}
	if p.First.IsZero() || e.Time.Before(p.First) {
		p.First = e.Time
	}
	if e.Time.After(p.Last) {
		p.Last = e.Time
	}
	agent := "main"
	if e.Agent != "" {
		agent = "subagent"
	}
	if us := em.DecideMicros; us > 0 {
		i := 0
		for i < len(LatencyBucketsMicros) && us > LatencyBucketsMicros[i] {
			i++
		}
		p.Latency[i]++
	}
	c.rows = []*Row{row(p.ByTool, em.Tool), row(p.ByFamily, Family(em.Tool, em.Source)), row(p.BySession, e.Session),
		row(p.ByHost, c.host), row(p.ByAgent, agent), row(p.ByProject, e.Project),
		row(p.ByMachine, e.Machine), row(p.ByUser, e.User)}
	for _, r := range c.rows {
		r.add(em, c.folds)
	}
	if e.Session != "" {
		p.Open[e.Session]++
	}
	s.attribute(c, +1)
}

// attribute adds (sign +1) or removes (-1) one emitted call's share of the
// mechanism figures and the series. A call belongs to every mechanism that
// changed it; its ledger base is the text the ledger saw (after the
// first-seen stages); a call nothing changed is left alone.
func (s *Stats) attribute(c *call, sign int) {
	p := c.part
	em := &c.em
	pt := p.Series.at(c.t)
	pt.Calls += sign
	pt.RawBytes += int64(sign * em.RawBytes)
	changed := false
	ledgerIn := int64(em.RawBytes)
	if d := c.dist; d != nil {
		ledgerIn = int64(d.DeliveredBytes)
		if d.Redacted > 0 {
			p.Redacted.Values += sign * d.Redacted
		}
		saved := int64(d.RawBytes - d.DeliveredBytes)
		if !d.Passthrough && (saved != 0 || d.Redacted > 0) {
			changed = true
			var m *Mechanism
			var pb *int64
			switch {
			case d.Distiller != "":
				m, pb = &p.Distilled, &pt.Distilled
			case d.Collapsed:
				m, pb = &p.Collapsed, &pt.Collapsed
			case d.Truncated:
				m, pb = &p.Cut, &pt.Cut
			case d.Redacted > 0:
				m, pb = &p.Redacted, &pt.Redacted
			default:
				m, pb = &p.Distilled, &pt.Distilled
			}
			m.Calls += sign
			m.SavedBytes += int64(sign) * saved
			m.BaseBytes += int64(sign * d.RawBytes)
			*pb += int64(sign) * saved
			if d.Redacted > 0 && m != &p.Redacted {
				p.Redacted.Calls += sign // counted, bytes stay with the stage that owns them
			}
		}
	}
	if c.folds > 0 {
		changed = true
		p.Folded.Calls += sign
		p.Folded.Folds += sign * c.folds
		p.Folded.SavedBytes += int64(sign) * c.foldSave
		p.Folded.BaseBytes += int64(sign) * ledgerIn
		pt.Folded += int64(sign) * c.foldSave
	}
	if !changed {
		p.LeftAlone.Calls += sign
		reason := em.Reason
		if reason == "" {
			reason = "unchanged"
		}
		p.LeftAloneReasons[reason] += sign
		if p.LeftAloneReasons[reason] == 0 {
			delete(p.LeftAloneReasons, reason)
		}
	}
}

// Tools returns the tool names in ByTool, sorted.
func (s *Stats) Tools() []string {
	out := make([]string, 0, len(s.ByTool))
	for k := range s.ByTool {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
