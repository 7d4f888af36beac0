// Package ledger is the ledger projection: a pure fold over the event log
// into the shown-sets of every reader and project, the archive index, and
// the deliveries owed after retrieves. It imports events and the standard
// library only: no clock (time comes from each event), no I/O.
//
// What it folds:
//   - Emitted adds the delivered line keys to the reader's session scope and
//     to the project scope; a line keeps the source of its first delivery
//     and the time of its last (a repeat refreshes it).
//   - Compacted empties the session scope of every reader of that session,
//     subagents included; the project scope survives.
//   - Archived indexes a handle (where its bytes live in the log).
//   - Folded remembers which readers were shown a marker naming a handle.
//   - Retrieved owes the asking reader (or, when unknown, every reader shown
//     a marker with that handle) one whole delivery of the block; Emitted's
//     Paid settles it.
//   - Lines last delivered more than Window before the event being decided
//     are ignored, and pruned once a day of event time.
package ledger

import (
	"slices"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
)

// Window is how long a delivered line can still be claimed: 30 days after
// its last delivery, for both
// scopes. There is no
// eviction by size, deliberately: it would drop the busiest project first.
const Window = 30 * 24 * time.Hour

// pruneEvery is the event-time interval between prune sweeps.
const pruneEvery = 24 * time.Hour

type entry struct {
	src int32 // index into Ledger.sources
	t   int64 // unix seconds of the last delivery
}

type shown map[uint64]entry

// holder is a reader shown a marker naming a handle, and when (unix s).
type holder struct {
	r events.Reader
	t int64
}

// debt is the whole deliveries owed for one handle, when the last
// retrieve asked (unix s), and the keys of the block's non-blank lines (nil
// when the Retrieved event did not record them).
type debt struct {
	n    int
	t    int64
	keys []uint64
}

// Block says where an archived handle's bytes live.
type Block struct {
	// Seq and Index locate the Archived event in the log.
	Seq   events.Seq
	Index int
	// Lines and Bytes measure the uncompressed block.
	Lines, Bytes int
	// Ref is the newest sequence that names the handle: its Archived event,
	// a Folded event, or an Emitted event's Handles. omni gc keeps (archives
	// again above the cutoff) every block archived below the cutoff whose
	// Ref is at or above it.
	Ref events.Seq
}

// Ledger is the fold state. The zero value is not usable; call New. It is
// not safe for concurrent use: the owner serialises Apply and reads.
type Ledger struct {
	readers  map[events.Reader]shown
	projects map[string]shown
	sources  []string
	srcIndex map[string]int32
	blocks   map[string]Block
	holders  map[string][]holder
	owed     map[events.Reader]map[string]debt
	last     events.Seq
	pruned   int64
	// purged is the newest Pruned.Before folded: blocks archived below it
	// are stored again by the Archived events that follow the Pruned one.
	purged events.Seq
	// lost holds the sequences recorded as unreadable (Lost events).
	lost map[events.Seq]bool
	// forgotten holds the handles whose bytes omni forget erased.
	forgotten map[string]bool
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{
		readers:  map[events.Reader]shown{},
		projects: map[string]shown{},
		sources:  []string{""},
		srcIndex: map[string]int32{"": 0},
		blocks:   map[string]Block{},
		holders:  map[string][]holder{},
		owed:     map[events.Reader]map[string]debt{},
	}
}

func (l *Ledger) intern(s string) int32 {
	if i, ok := l.srcIndex[s]; ok {
		return i
	}
	i := int32(len(l.sources))
	l.sources = append(l.sources, s)
	l.srcIndex[s] = i
	return i
}

// Apply folds one event. Events must arrive in log order; unknown kinds are
// ignored (forward compatibility).
func (l *Ledger) Apply(e events.Event) {
	if e.Seq > l.last {
		l.last = e.Seq
	}
	now := e.Time.Unix()
	if l.pruned == 0 {
		l.pruned = now
	} else if now-l.pruned >= int64(pruneEvery/time.Second) {
		l.prune(now)
	}
	r := e.Reader()
	switch e.Kind {
	case events.KindEmitted:
		em := e.Emitted
		if em == nil {
			return
		}
		for _, h := range em.Paid {
			if m := l.owed[r]; m != nil {
				if d := m[h]; d.n <= 1 {
					delete(m, h)
				} else {
					m[h] = debt{n: d.n - 1, t: d.t, keys: d.keys}
				}
			}
		}
		for _, h := range em.Handles {
			l.ref(h, e.Seq)
		}
		if len(em.Lines) == 0 {
			return
		}
		// No reader identity, no session scope: the lines count for the
		// project only, so no caller is told another was shown them.
		anon := e.Session == ""
		name := em.Source
		if em.LineSource != "" {
			name = em.LineSource
		}
		src := l.intern(name)
		rs := l.readers[r]
		if rs == nil && !anon {
			rs = shown{}
			l.readers[r] = rs
		}
		ps := l.projects[e.Project]
		if ps == nil {
			ps = shown{}
			l.projects[e.Project] = ps
		}
		cut := now - int64(Window/time.Second)
		for _, k := range em.Lines {
			if !anon {
				record(rs, k, src, now, cut)
			}
			record(ps, k, src, now, cut)
		}
	case events.KindCompacted:
		for rd := range l.readers {
			if rd.Session == e.Session {
				delete(l.readers, rd)
			}
		}
	case events.KindArchived:
		if a := e.Archived; a != nil {
			// A block archived below the last gc cutoff is stored again by
			// the gc's own Archived events: the newer copy is the one kept.
			// So is a block archived again because its known copy could
			// not be read back (Archived.Again).
			if b, ok := l.blocks[a.Handle]; !ok || b.Seq < l.purged || a.Again {
				l.blocks[a.Handle] = Block{Seq: e.Seq, Index: e.Index, Lines: a.Lines, Bytes: a.Bytes, Ref: max(e.Seq, b.Ref)}
			} else {
				l.ref(a.Handle, e.Seq)
			}
		}
	case events.KindPruned:
		if p := e.Pruned; p != nil && p.Before > l.purged {
			l.purge(p)
		}
	case events.KindLost:
		if x := e.Lost; x != nil {
			l.forgetLost(x.Seqs)
		}
	case events.KindForgotten:
		// Their bytes were erased: no marker may name them again.
		if x := e.Forgotten; x != nil {
			for _, h := range x.Handles {
				if l.forgotten == nil {
					l.forgotten = map[string]bool{}
				}
				l.forgotten[h] = true
				delete(l.blocks, h)
				delete(l.holders, h)
				for _, m := range l.owed {
					delete(m, h)
				}
			}
		}
	case events.KindFolded:
		if f := e.Folded; f != nil {
			l.ref(f.Handle, e.Seq)
			hs := l.holders[f.Handle]
			for i := range hs {
				if hs[i].r == r {
					hs[i].t = now
					return
				}
			}
			l.holders[f.Handle] = append(hs, holder{r: r, t: now})
		}
	case events.KindRetrieved:
		rt := e.Retrieved
		if rt == nil || !rt.Found {
			return
		}
		l.ref(rt.Handle, e.Seq) // the debt names the block: gc keeps it
		keys := []uint64(rt.Lines)
		if e.Session != "" {
			l.owe(r, rt.Handle, now, keys)
			return
		}
		for _, x := range l.holders[rt.Handle] {
			l.owe(x.r, rt.Handle, now, keys)
		}
	}
}

// ref notes that the event at seq names handle h.
func (l *Ledger) ref(h string, seq events.Seq) {
	if b, ok := l.blocks[h]; ok && seq > b.Ref {
		b.Ref = seq
		l.blocks[h] = b
	}
}

// purge folds a Pruned event: the blocks archived below p.Before are
// forgotten with the markers and debts naming them, except the kept ones,
// which the Archived events after it move above the cutoff. No marker ever
// names bytes the log no longer holds; a later fold archives them anew.
func (l *Ledger) purge(p *events.Pruned) {
	l.purged = p.Before
	kept := make(map[string]bool, len(p.Kept))
	for _, h := range p.Kept {
		kept[h] = true
	}
	for h, b := range l.blocks {
		if b.Seq >= p.Before || kept[h] {
			continue
		}
		delete(l.blocks, h)
		delete(l.holders, h)
		for _, m := range l.owed {
			delete(m, h)
		}
	}
}

// forgetLost folds a Lost event: the blocks archived in those batches are
// forgotten, with the markers and debts naming them, so no later marker
// names bytes the store can no longer read (a later fold archives them
// anew); the sequences are remembered (LostSeqs).
func (l *Ledger) forgetLost(seqs []events.Seq) {
	if l.lost == nil {
		l.lost = map[events.Seq]bool{}
	}
	these := make(map[events.Seq]bool, len(seqs))
	for _, q := range seqs {
		l.lost[q] = true
		these[q] = true
	}
	// Only this event's sequences: a truncated log reuses the sequences of
	// an earlier Lost event for new batches, whose blocks are good.
	for h, b := range l.blocks {
		if these[b.Seq] {
			delete(l.blocks, h)
			delete(l.holders, h)
			for _, m := range l.owed {
				delete(m, h)
			}
		}
	}
}

// Forgotten reports whether omni forget erased the bytes of handle h (a
// KindForgotten event named it).
func (l *Ledger) Forgotten(h string) bool { return l.forgotten[h] }

// LostSeqs returns, sorted, the sequences recorded as unreadable.
func (l *Ledger) LostSeqs() []events.Seq {
	out := make([]events.Seq, 0, len(l.lost))
	for q := range l.lost {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// Kept returns, sorted, the handles archived below before that an event at
// or after before names (Block.Ref), or that a reader is still owed a
// whole delivery of (a retrieve's debt outlives the retrieve): what omni gc
// must store again before it removes the batches below before.
func (l *Ledger) Kept(before events.Seq) []string {
	owed := map[string]bool{}
	for _, m := range l.owed {
		for h, d := range m {
			if d.n > 0 {
				owed[h] = true
			}
		}
	}
	var out []string
	for h, b := range l.blocks {
		if b.Seq < before && (b.Ref >= before || owed[h]) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// Below counts the archived blocks stored below sequence before.
func (l *Ledger) Below(before events.Seq) int {
	n := 0
	for _, b := range l.blocks {
		if b.Seq < before {
			n++
		}
	}
	return n
}

func record(s shown, k uint64, src int32, now, cut int64) {
	if old, ok := s[k]; ok && old.t >= cut {
		s[k] = entry{src: old.src, t: now}
		return
	}
	s[k] = entry{src: src, t: now}
}

func (l *Ledger) owe(r events.Reader, h string, now int64, keys []uint64) {
	m := l.owed[r]
	if m == nil {
		m = map[string]debt{}
		l.owed[r] = m
	}
	if keys == nil {
		keys = m[h].keys
	}
	m[h] = debt{n: m[h].n + 1, t: now, keys: keys}
}

// prune drops entries older than Window plus one pruneEvery of slack, so a
// decision whose event time is up to a day behind the newest event still
// sees what a never-pruned ledger would (event times need not be monotonic).
func (l *Ledger) prune(now int64) {
	l.pruned = now
	cut := now - int64((Window+pruneEvery)/time.Second)
	for rd, s := range l.readers {
		for k, x := range s {
			if x.t < cut {
				delete(s, k)
			}
		}
		if len(s) == 0 {
			delete(l.readers, rd)
		}
	}
	for p, s := range l.projects {
		for k, x := range s {
			if x.t < cut {
				delete(s, k)
			}
		}
		if len(s) == 0 {
			delete(l.projects, p)
		}
	}
	// Markers shown and debts asked more than Window ago are forgotten too,
	// so these maps stay bounded by a month of folds and retrieves.
	for h, hs := range l.holders {
		kept := hs[:0]
		for _, x := range hs {
			if x.t >= cut {
				kept = append(kept, x)
			}
		}
		if len(kept) == 0 {
			delete(l.holders, h)
		} else {
			l.holders[h] = kept
		}
	}
	for rd, m := range l.owed {
		for h, d := range m {
			if d.t < cut {
				delete(m, h)
			}
		}
		if len(m) == 0 {
			delete(l.owed, rd)
		}
	}
}

// Scope is the answer of Lookup.
type Scope uint8

// Lookup answers.
const (
	NotShown Scope = iota // not delivered within Window
	Session               // delivered to this reader since its last compaction
	Project               // delivered in this project, not (still) to this reader
)

// Lookup returns the scope of line key k for reader r in project p at time
// now, and the source of its first delivery in that scope. A line in both
// scopes counts as Session. A reader without a session id has no identity
// and never gets Session.
func (l *Ledger) Lookup(r events.Reader, p string, k uint64, now time.Time) (Scope, string) {
	cut := now.Unix() - int64(Window/time.Second)
	if x, ok := l.readers[r][k]; ok && x.t >= cut && r.Session != "" {
		return Session, l.sources[x.src]
	}
	if x, ok := l.projects[p][k]; ok && x.t >= cut {
		return Project, l.sources[x.src]
	}
	return NotShown, ""
}

// Holds reports whether reader r holds any line delivered within Window
// before now — false for a fresh reader, right after a compaction, and once
// everything it was shown has aged out.
func (l *Ledger) Holds(r events.Reader, now time.Time) bool {
	cut := now.Unix() - int64(Window/time.Second)
	for _, x := range l.readers[r] {
		if x.t >= cut {
			return true
		}
	}
	return false
}

// Owed reports how many whole deliveries of handle h reader r is owed.
func (l *Ledger) Owed(r events.Reader, h string) int { return l.owed[r][h].n }

// Debt is one handle a reader retrieved and is owed a whole delivery of.
type Debt struct {
	Handle string
	// Keys are the block's non-blank line keys (nil when not recorded).
	Keys []uint64
}

// Debts returns reader r's debts, sorted by handle (nil when none).
func (l *Ledger) Debts(r events.Reader) []Debt {
	m := l.owed[r]
	if len(m) == 0 {
		return nil
	}
	out := make([]Debt, 0, len(m))
	for h, d := range m {
		if d.n > 0 {
			out = append(out, Debt{Handle: h, Keys: d.keys})
		}
	}
	slices.SortFunc(out, func(a, b Debt) int { return strings.Compare(a.Handle, b.Handle) })
	return out
}

// Block returns where handle h's bytes are archived, and whether they are.
func (l *Ledger) Block(h string) (Block, bool) {
	b, ok := l.blocks[h]
	return b, ok
}

// Last returns the sequence of the newest event applied.
func (l *Ledger) Last() events.Seq { return l.last }

// Size reports the number of (reader, line) and (project, line) entries
// and archived blocks, for memory reports.
func (l *Ledger) Size() (readerLines, projectLines, blocks int) {
	for _, s := range l.readers {
		readerLines += len(s)
	}
	for _, s := range l.projects {
		projectLines += len(s)
	}
	return readerLines, projectLines, len(l.blocks)
}
