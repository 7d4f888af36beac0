package stats

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"slices"
	"time"

	"github.com/omnictx/omni/events"
)

// Snapshot is the exported mirror of a Stats' whole state, in a
// deterministic order (maps as sorted slices; pointers into the parts as
// part numbers and map keys), for checkpoints.
type Snapshot struct {
	All         Totals
	ByTool      []Named[Totals]
	ByFold      []Named[FoldTotals]
	Compactions int
	Agent       PartSnapshot
	Terminal    PartSnapshot
	Since       time.Time
	Handles     []HandleSnapshot // sorted by Handle
	Hosted      []Named[bool]
	Cur         CallSnapshot
	Events      int
	First, Last time.Time
}

// Named is one entry of a map keyed by string.
type Named[V any] struct {
	Key   string
	Value V
}

// PartSnapshot mirrors a Part.
type PartSnapshot struct {
	Totals                                                 Totals
	OverCap                                                Totals
	Folded, Distilled, Collapsed, Redacted, Cut, LeftAlone Mechanism
	LeftAloneReasons                                       []Named[int]
	// Rows are ByTool, ByFamily, BySession, ByHost, ByAgent, ByProject,
	// ByMachine, ByUser.
	Rows        [8][]Named[Row]
	ByFold      []Named[FoldTotals]
	ByCut       []Named[FoldTotals]
	Lifetimes   []int
	Open        []Named[int]
	Compactions int
	SeriesStep  int
	SeriesKeys  []int64 // sorted; SeriesPoints[i] is bucket SeriesKeys[i]
	SeriesNil   bool    // the bucket map was never made
	SeriesPts   []Point
	First, Last time.Time
	Latency     [len(LatencyBucketsMicros) + 1]int
}

// HandleSnapshot mirrors a handleInfo; Part is 0 (Agent) or 1 (Terminal).
type HandleSnapshot struct {
	Handle    string
	Part      int
	Kind      string
	Retrieved bool
	Call      string
}

// RowRef names a breakdown row: Map indexes PartSnapshot.Rows.
type RowRef struct {
	Map int
	Key string
}

// CallSnapshot mirrors the invocation being accumulated; Part is -1 (none),
// 0 (Agent) or 1 (Terminal).
type CallSnapshot struct {
	ID   string
	Part int
	Host string
	// Persisted mirrors call.persisted.
	Persisted bool
	Folds     int
	FoldSave  int64
	Dist      *events.Distilled
	Archived  []string
	Emitted   bool
	Em        events.Emitted
	T         time.Time
	Rows      []RowRef
	RowsNil   bool
}

func (p *Part) rowMaps() [8]map[string]*Row {
	return [8]map[string]*Row{p.ByTool, p.ByFamily, p.BySession, p.ByHost, p.ByAgent, p.ByProject, p.ByMachine, p.ByUser}
}

func namedPtr[V any](m map[string]*V) []Named[V] {
	out := make([]Named[V], 0, len(m))
	for k, v := range m {
		out = append(out, Named[V]{k, *v})
	}
	slices.SortFunc(out, func(a, b Named[V]) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

func namedVal[V any](m map[string]V) []Named[V] {
	out := make([]Named[V], 0, len(m))
	for k, v := range m {
		out = append(out, Named[V]{k, v})
	}
	slices.SortFunc(out, func(a, b Named[V]) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

func ptrMap[V any](xs []Named[V]) map[string]*V {
	m := make(map[string]*V, len(xs))
	for _, x := range xs {
		v := x.Value
		m[x.Key] = &v
	}
	return m
}

func valMap[V any](xs []Named[V]) map[string]V {
	m := make(map[string]V, len(xs))
	for _, x := range xs {
		m[x.Key] = x.Value
	}
	return m
}

func (p *Part) snapshot() PartSnapshot {
	x := PartSnapshot{
		Totals: p.Totals, OverCap: p.OverCap, Folded: p.Folded, Distilled: p.Distilled, Collapsed: p.Collapsed, Redacted: p.Redacted,
		Cut: p.Cut, LeftAlone: p.LeftAlone, LeftAloneReasons: namedVal(p.LeftAloneReasons),
		ByFold: namedPtr(p.ByFold), ByCut: namedPtr(p.ByCut), Lifetimes: slices.Clone(p.Lifetimes), Open: namedVal(p.Open),
		Compactions: p.Compactions, SeriesStep: p.Series.step, SeriesNil: p.Series.buckets == nil,
		First: p.First, Last: p.Last, Latency: p.Latency,
	}
	for i, m := range p.rowMaps() {
		x.Rows[i] = namedPtr(m)
	}
	for k := range p.Series.buckets {
		x.SeriesKeys = append(x.SeriesKeys, k)
	}
	slices.Sort(x.SeriesKeys)
	for _, k := range x.SeriesKeys {
		x.SeriesPts = append(x.SeriesPts, *p.Series.buckets[k])
	}
	return x
}

func (x PartSnapshot) part() (*Part, error) {
	if x.SeriesStep < 0 || x.SeriesStep >= len(seriesSteps) {
		return nil, fmt.Errorf("stats snapshot: series step %d out of range", x.SeriesStep)
	}
	if len(x.SeriesKeys) != len(x.SeriesPts) {
		return nil, fmt.Errorf("stats snapshot: series lengths differ")
	}
	p := &Part{
		Totals: x.Totals, OverCap: x.OverCap, Folded: x.Folded, Distilled: x.Distilled, Collapsed: x.Collapsed, Redacted: x.Redacted,
		Cut: x.Cut, LeftAlone: x.LeftAlone, LeftAloneReasons: valMap(x.LeftAloneReasons),
		ByTool: ptrMap(x.Rows[0]), ByFamily: ptrMap(x.Rows[1]), BySession: ptrMap(x.Rows[2]),
		ByHost: ptrMap(x.Rows[3]), ByAgent: ptrMap(x.Rows[4]), ByProject: ptrMap(x.Rows[5]),
		ByMachine: ptrMap(x.Rows[6]), ByUser: ptrMap(x.Rows[7]),
		ByFold: ptrMap(x.ByFold), ByCut: ptrMap(x.ByCut), Lifetimes: slices.Clone(x.Lifetimes), Open: valMap(x.Open),
		Compactions: x.Compactions, First: x.First, Last: x.Last, Latency: x.Latency,
	}
	p.Series.step = x.SeriesStep
	if !x.SeriesNil {
		p.Series.buckets = make(map[int64]*Point, len(x.SeriesKeys))
		for i, k := range x.SeriesKeys {
			pt := x.SeriesPts[i]
			p.Series.buckets[k] = &pt
		}
	}
	return p, nil
}

// Snapshot copies the stats' state into its exported mirror.
func (s *Stats) Snapshot() Snapshot {
	partNo := func(p *Part) int {
		switch p {
		case nil:
			return -1
		case s.Agent:
			return 0
		case s.Terminal:
			return 1
		}
		return -2 // not one of ours: FromSnapshot rejects it
	}
	x := Snapshot{
		All: s.All, ByTool: namedPtr(s.ByTool), ByFold: namedPtr(s.ByFold), Compactions: s.Compactions,
		Agent: s.Agent.snapshot(), Terminal: s.Terminal.snapshot(), Since: s.since,
		Hosted: namedVal(s.hosted), Events: s.Events, First: s.First, Last: s.Last,
	}
	for h, hi := range s.handles {
		x.Handles = append(x.Handles, HandleSnapshot{Handle: h, Part: partNo(hi.part), Kind: hi.kind, Retrieved: hi.retrieved, Call: hi.call})
	}
	slices.SortFunc(x.Handles, func(a, b HandleSnapshot) int { return cmp.Compare(a.Handle, b.Handle) })
	c := s.cur
	x.Cur = CallSnapshot{ID: c.id, Part: partNo(c.part), Host: c.host, Persisted: c.persisted, Folds: c.folds, FoldSave: c.foldSave,
		Emitted: c.emitted, Em: c.em, T: c.t, RowsNil: c.rows == nil, Archived: slices.Clone(c.archived)}
	x.Cur.Em.Lines = slices.Clone(c.em.Lines)
	x.Cur.Em.Paid = slices.Clone(c.em.Paid)
	if c.dist != nil {
		d := *c.dist
		x.Cur.Dist = &d
	}
	if c.part != nil && len(c.rows) > 0 {
		maps := c.part.rowMaps()
		for i, r := range c.rows {
			ref := RowRef{Map: -1}
			// The rows are added in rowMaps order; look there first.
			order := []int{i}
			for j := range maps {
				if j != i {
					order = append(order, j)
				}
			}
		search:
			for _, j := range order {
				if j >= len(maps) {
					continue
				}
				for k, v := range maps[j] {
					if v == r {
						ref = RowRef{Map: j, Key: k}
						break search
					}
				}
			}
			x.Cur.Rows = append(x.Cur.Rows, ref)
		}
	}
	return x
}

// FromSnapshot returns the stats whose state x mirrors.
func FromSnapshot(x Snapshot) (*Stats, error) {
	s := NewSince(x.Since)
	var err error
	if s.Agent, err = x.Agent.part(); err != nil {
		return nil, err
	}
	if s.Terminal, err = x.Terminal.part(); err != nil {
		return nil, err
	}
	part := func(n int) (*Part, error) {
		switch n {
		case -1:
			return nil, nil
		case 0:
			return s.Agent, nil
		case 1:
			return s.Terminal, nil
		}
		return nil, fmt.Errorf("stats snapshot: part %d", n)
	}
	s.All, s.ByTool, s.ByFold, s.Compactions = x.All, ptrMap(x.ByTool), ptrMap(x.ByFold), x.Compactions
	s.hosted = valMap(x.Hosted)
	s.Events, s.First, s.Last = x.Events, x.First, x.Last
	for _, h := range x.Handles {
		p, err := part(h.Part)
		if err != nil || p == nil {
			return nil, fmt.Errorf("stats snapshot: handle %s has no part", h.Handle)
		}
		s.handles[h.Handle] = &handleInfo{part: p, kind: h.Kind, retrieved: h.Retrieved, call: h.Call}
	}
	c := x.Cur
	p, err := part(c.Part)
	if err != nil {
		return nil, err
	}
	s.cur = call{id: c.ID, part: p, host: c.Host, persisted: c.Persisted, folds: c.Folds, foldSave: c.FoldSave, emitted: c.Emitted, em: c.Em, t: c.T,
		archived: slices.Clone(c.Archived)}
	if c.Dist != nil {
		d := *c.Dist
		s.cur.dist = &d
	}
	if !c.RowsNil {
		s.cur.rows = []*Row{}
	}
	for _, ref := range c.Rows {
		if p == nil || ref.Map < 0 || ref.Map >= len(PartSnapshot{}.Rows) {
			return nil, fmt.Errorf("stats snapshot: unresolved breakdown row")
		}
		r := p.rowMaps()[ref.Map][ref.Key]
		if r == nil {
			return nil, fmt.Errorf("stats snapshot: no row %q in breakdown %d", ref.Key, ref.Map)
		}
		s.cur.rows = append(s.cur.rows, r)
	}
	return s, nil
}

// MarshalBinary encodes the stats' whole state (gob of Snapshot).
func (s *Stats) MarshalBinary() ([]byte, error) { return s.Snapshot().Encode() }

// Encode is what MarshalBinary returns for the state x mirrors: a caller
// can take the Snapshot under its lock and encode it outside.
func (x Snapshot) Encode() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(x); err != nil {
		return nil, fmt.Errorf("stats snapshot: %w", err)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary replaces the stats' state with what MarshalBinary
// encoded. On error the stats are unchanged.
func (s *Stats) UnmarshalBinary(data []byte) error {
	var x Snapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&x); err != nil {
		return fmt.Errorf("stats snapshot: %w", err)
	}
	n, err := FromSnapshot(x)
	if err != nil {
		return err
	}
	*s = *n
	return nil
}
