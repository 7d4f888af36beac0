package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// Fold tests with hand-built events: only delivered lines are recorded,
// a retrieve owes one whole delivery, a compaction empties the session's
// readers, and a line is forgotten 30 days after its last delivery.

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// lt is a ledger under test with a sequence counter.
type lt struct {
	*Ledger
	seq events.Seq
}

func newLT() *lt { return &lt{Ledger: New()} }

func (l *lt) apply(e events.Event) {
	l.seq++
	e.Seq = l.seq
	l.Apply(e)
}

func ev(kind events.Kind, r events.Reader, project string, at time.Time) events.Event {
	return events.Event{ID: fmt.Sprintf("id-%d", at.UnixNano()), Kind: kind, Time: at, Project: project,
		Session: r.Session, Agent: r.Agent}
}

func (l *lt) emit(r events.Reader, project, source string, at time.Time, keys ...uint64) {
	e := ev(events.KindEmitted, r, project, at)
	e.Emitted = &events.Emitted{Tool: "Bash", Source: source, Lines: keys}
	l.apply(e)
}

func (l *lt) pay(r events.Reader, at time.Time, handles ...string) {
	e := ev(events.KindEmitted, r, "p", at)
	e.Emitted = &events.Emitted{Tool: "Bash", Paid: handles}
	l.apply(e)
}

func (l *lt) compact(session string, at time.Time) {
	e := ev(events.KindCompacted, events.Reader{Session: session}, "p", at)
	e.Compacted = &events.Compacted{Trigger: "PreCompact"}
	l.apply(e)
}

func (l *lt) folded(r events.Reader, h string, at time.Time) {
	e := ev(events.KindFolded, r, "p", at)
	e.Folded = &events.Folded{Marker: "run", Scope: events.ScopeSession, Handle: h, Lines: 3, Bytes: 300}
	l.apply(e)
}

func (l *lt) retrieved(r events.Reader, h string, found bool, at time.Time) {
	e := ev(events.KindRetrieved, r, "", at)
	e.Retrieved = &events.Retrieved{Handle: h, Found: found}
	l.apply(e)
}

func (l *lt) want(t *testing.T, r events.Reader, project string, k uint64, at time.Time, scope Scope, src string) {
	t.Helper()
	s, got := l.Lookup(r, project, k, at)
	if s != scope || got != src {
		t.Fatalf("Lookup(%v, %q, %d, %s) = %d %q, want %d %q", r, project, k, at.Format(time.DateTime), s, got, scope, src)
	}
}

var (
	main1 = events.Reader{Session: "s1"}
	sub1  = events.Reader{Session: "s1", Agent: "a1"}
	sub2  = events.Reader{Session: "s1", Agent: "a2"}
	main2 = events.Reader{Session: "s2"}
)

// TestEmittedAddsToReaderAndProject: delivered keys go to the reader's own
// scope and to its project's; other readers of the project see Project,
// other projects nothing; a subagent is its own reader.
func TestEmittedAddsToReaderAndProject(t *testing.T) {
	l := newLT()
	l.emit(main1, "p", "cat a.go", t0, 1, 2)
	at := t0.Add(time.Minute)
	l.want(t, main1, "p", 1, at, Session, "cat a.go")
	l.want(t, main1, "p", 2, at, Session, "cat a.go")
	l.want(t, main1, "p", 3, at, NotShown, "")
	l.want(t, main2, "p", 1, at, Project, "cat a.go")
	l.want(t, sub1, "p", 1, at, Project, "cat a.go")
	l.want(t, main2, "q", 1, at, NotShown, "")
	if !l.Holds(main1, t0.Add(2*time.Minute)) || l.Holds(main2, t0.Add(2*time.Minute)) || l.Holds(sub1, t0.Add(2*time.Minute)) {
		t.Fatal("Holds: only the emitting reader holds lines")
	}
	if rl, pl, _ := l.Size(); rl != 2 || pl != 2 {
		t.Fatalf("Size %d reader lines, %d project lines", rl, pl)
	}
}

// TestLineInBothScopesCountsAsSession: a line this reader was delivered is
// Session with this reader's first source, even when the project first got
// it from another reader and another command. Red when Lookup asks the
// project scope first.
func TestLineInBothScopesCountsAsSession(t *testing.T) {
	l := newLT()
	l.emit(main2, "p", "make", t0, 7)
	l.emit(main1, "p", "cat a.go", t0.Add(time.Hour), 7)
	at := t0.Add(2 * time.Hour)
	l.want(t, main1, "p", 7, at, Session, "cat a.go")
	l.want(t, sub1, "p", 7, at, Project, "make")
}

// TestEmittedKeepsFirstSourceRefreshesTime: a repeat keeps the first source
// and refreshes the time, in both scopes; after the window a new delivery
// starts afresh with its own source. Red when record overwrites the source,
// or does not refresh the time.
func TestEmittedKeepsFirstSourceRefreshesTime(t *testing.T) {
	l := newLT()
	l.emit(main1, "p", "cat a.go", t0, 5)
	l.emit(main1, "p", "sed -n 1,9p a.go", t0.Add(20*day), 5)
	at := t0.Add(35 * day) // 35 days after the first delivery, 15 after the repeat
	l.want(t, main1, "p", 5, at, Session, "cat a.go")
	l.want(t, main2, "p", 5, at, Project, "cat a.go")
	l.want(t, main1, "p", 5, t0.Add(50*day), Session, "cat a.go")
	l.want(t, main1, "p", 5, t0.Add(50*day+time.Second), NotShown, "")
	// After expiry the next delivery's source is the first one again.
	l.emit(main1, "p", "grep -n x a.go", t0.Add(60*day), 5)
	l.want(t, main1, "p", 5, t0.Add(61*day), Session, "grep -n x a.go")
	l.want(t, main2, "p", 5, t0.Add(61*day), Project, "grep -n x a.go")
}

// TestWindow: a line delivered exactly 30 days before counts; 30 days and
// one second before it does not, in either scope; pruning agrees. Red with
// Window = 31 days, or `>` for `>=` in Lookup.
func TestWindow(t *testing.T) {
	if Window != 30*day {
		t.Fatalf("Window %v", Window)
	}
	l := newLT()
	l.emit(main1, "p", "cat a.go", t0, 9)
	l.want(t, main1, "p", 9, t0.Add(Window), Session, "cat a.go")
	l.want(t, main2, "p", 9, t0.Add(Window), Project, "cat a.go")
	late := t0.Add(Window + time.Second)
	l.want(t, main1, "p", 9, late, NotShown, "")
	l.want(t, main2, "p", 9, late, NotShown, "")
	// An unrelated event a day later prunes; the answers stay.
	l.emit(main2, "q", "ls", late.Add(day), 10)
	l.want(t, main1, "p", 9, late.Add(day), NotShown, "")
	if l.Holds(main1, t0.Add(2*time.Minute)) {
		t.Fatal("a reader whose every line expired still holds lines after a prune")
	}
	if rl, pl, _ := l.Size(); rl != 1 || pl != 1 {
		t.Fatalf("after prune: %d reader lines, %d project lines, want 1 and 1", rl, pl)
	}
	// A repeat within the window keeps a line alive past 30 days from its
	// first delivery.
	l2 := newLT()
	l2.emit(main1, "p", "cat a.go", t0, 9)
	l2.emit(main1, "p", "cat a.go", t0.Add(29*day), 9)
	l2.emit(main2, "p", "ls", t0.Add(40*day), 11) // prunes at day 40
	l2.want(t, main1, "p", 9, t0.Add(40*day), Session, "cat a.go")
}

// TestCompactedEmptiesEveryReaderOfSession: compaction forgets what every
// reader of the session (main and subagents) was shown, not other sessions,
// and not the project scope. Red when Compacted deletes only the event's
// own reader.
func TestCompactedEmptiesEveryReaderOfSession(t *testing.T) {
	l := newLT()
	for _, r := range []events.Reader{main1, sub1, sub2, main2} {
		l.emit(r, "p", "cat "+r.String(), t0, 1, 2)
	}
	l.compact("s1", t0.Add(time.Hour))
	at := t0.Add(2 * time.Hour)
	for _, r := range []events.Reader{main1, sub1, sub2} {
		if l.Holds(r, t0.Add(2*time.Minute)) {
			t.Fatalf("%v still holds lines after its session was compacted", r)
		}
		s, _ := l.Lookup(r, "p", 1, at)
		if s != Project {
			t.Fatalf("%v after compaction: scope %d, want Project (the project scope survives)", r, s)
		}
	}
	if !l.Holds(main2, t0.Add(2*time.Minute)) {
		t.Fatal("compaction of s1 emptied s2")
	}
	l.want(t, main2, "p", 1, at, Session, "cat s2")
	// The reader starts over: its next delivery is its own again.
	l.emit(sub1, "p", "make", at, 3)
	l.want(t, sub1, "p", 3, at, Session, "make")
	l.want(t, sub1, "p", 1, at, Project, "cat s1")
}

// TestRetrievedOwesKnownReader: a retrieve by a known reader owes that
// reader one whole delivery per retrieve; Paid settles one debt each; a
// retrieve of nothing owes nothing. Red when Paid clears every debt at
// once, or when a retrieve owes the holders instead of the asker.
func TestRetrievedOwesKnownReader(t *testing.T) {
	l := newLT()
	const h = "0123456789abcdef"
	for _, r := range []events.Reader{main1, sub1, main2} {
		l.folded(r, h, t0)
	}
	l.retrieved(main1, h, true, t0.Add(time.Minute))
	if l.Owed(main1, h) != 1 || l.Owed(sub1, h) != 0 || l.Owed(main2, h) != 0 {
		t.Fatalf("owed %d %d %d, want 1 0 0", l.Owed(main1, h), l.Owed(sub1, h), l.Owed(main2, h))
	}
	l.retrieved(main1, h, true, t0.Add(2*time.Minute))
	l.retrieved(main1, "fedcba9876543210", false, t0.Add(3*time.Minute))
	if l.Owed(main1, h) != 2 || l.Owed(main1, "fedcba9876543210") != 0 {
		t.Fatalf("owed %d after two retrieves", l.Owed(main1, h))
	}
	l.pay(main1, t0.Add(4*time.Minute), h)
	if l.Owed(main1, h) != 1 {
		t.Fatalf("owed %d after one payment, want 1", l.Owed(main1, h))
	}
	l.pay(sub1, t0.Add(5*time.Minute), h) // another reader's payment settles nothing here
	if l.Owed(main1, h) != 1 {
		t.Fatal("another reader's payment settled this reader's debt")
	}
	l.pay(main1, t0.Add(6*time.Minute), h)
	l.pay(main1, t0.Add(7*time.Minute), h) // an extra payment does not go negative
	if l.Owed(main1, h) != 0 {
		t.Fatalf("owed %d after paying twice", l.Owed(main1, h))
	}
	l.retrieved(sub1, h, true, t0.Add(8*time.Minute))
	if l.Owed(sub1, h) != 1 || l.Owed(main1, h) != 0 {
		t.Fatal("a subagent's retrieve must owe the subagent")
	}
}

// TestRetrievedUnknownReaderOwesHolders: a retrieve with no session owes
// every reader that was shown a marker with that handle, once each, and no
// one else. Red when the unknown-reader branch owes nobody.
func TestRetrievedUnknownReaderOwesHolders(t *testing.T) {
	l := newLT()
	const h, other = "0123456789abcdef", "1111111111111111"
	l.folded(main1, h, t0)
	l.folded(main1, h, t0.Add(time.Second)) // shown twice: still one holder
	l.folded(sub1, h, t0)
	l.folded(main2, other, t0)
	l.retrieved(events.Reader{}, h, true, t0.Add(time.Minute))
	for r, want := range map[events.Reader]int{main1: 1, sub1: 1, sub2: 0, main2: 0, {}: 0} {
		if got := l.Owed(r, h); got != want {
			t.Fatalf("Owed(%v) = %d, want %d", r, got, want)
		}
	}
	l.retrieved(events.Reader{}, "2222222222222222", true, t0.Add(time.Minute))
	if l.Owed(main1, "2222222222222222") != 0 {
		t.Fatal("a handle nobody was shown owes someone")
	}
}

// TestHolds: false for a fresh reader, true after a delivery with lines,
// false again after a compaction; a delivery of nothing (a payment only)
// holds nothing.
func TestHolds(t *testing.T) {
	l := newLT()
	if l.Holds(main1, t0.Add(2*time.Minute)) {
		t.Fatal("fresh reader holds lines")
	}
	l.pay(main1, t0, "0123456789abcdef")
	if l.Holds(main1, t0.Add(2*time.Minute)) {
		t.Fatal("a delivery without lines made the reader hold lines")
	}
	l.emit(main1, "p", "ls", t0, 1)
	if !l.Holds(main1, t0.Add(2*time.Minute)) {
		t.Fatal("Holds false after a delivery")
	}
	if l.Holds(main1, t0.Add(Window+time.Second)) {
		t.Fatal("Holds true once every delivered line is older than Window")
	}
	l.compact("s1", t0.Add(time.Minute))
	if l.Holds(main1, t0.Add(2*time.Minute)) {
		t.Fatal("Holds true after compaction")
	}
}

// TestBlockFromArchived: Archived indexes a handle at its sequence and
// index; the first archive of a handle wins; Last follows the log.
func TestBlockFromArchived(t *testing.T) {
	l := New()
	a := events.Event{Seq: 5, Index: 2, Kind: events.KindArchived, Time: t0,
		Archived: &events.Archived{Handle: "abcdefabcdefabcd", Lines: 3, Bytes: 120, Codec: events.CodecZstd, Data: []byte{1}}}
	l.Apply(a)
	b := a
	b.Seq, b.Index = 9, 0
	b.Archived = &events.Archived{Handle: "abcdefabcdefabcd", Lines: 3, Bytes: 120}
	l.Apply(b)
	got, ok := l.Block("abcdefabcdefabcd")
	if !ok || got != (Block{Seq: 5, Index: 2, Lines: 3, Bytes: 120, Ref: 9}) {
		t.Fatalf("Block = %+v %v", got, ok)
	}
	if _, ok := l.Block("0000000000000000"); ok {
		t.Fatal("unknown handle found")
	}
	if l.Last() != 9 {
		t.Fatalf("Last %d", l.Last())
	}
	if _, _, n := l.Size(); n != 1 {
		t.Fatalf("%d blocks", n)
	}
}

type mEntry struct {
	src string
	t   int64
}

// refModel is the ledger's shown-sets without pruning: the model for
// the property test.
type refModel struct {
	readers  map[events.Reader]map[uint64]mEntry
	projects map[string]map[uint64]mEntry
}

func newRefModel() *refModel {
	return &refModel{readers: map[events.Reader]map[uint64]mEntry{}, projects: map[string]map[uint64]mEntry{}}
}

func (m *refModel) apply(e events.Event) {
	now := e.Time.Unix()
	cut := now - int64(Window/time.Second)
	rec := func(s map[uint64]mEntry, k uint64, src string) {
		if old, ok := s[k]; ok && old.t >= cut {
			s[k] = mEntry{old.src, now}
			return
		}
		s[k] = mEntry{src, now}
	}
	switch e.Kind {
	case events.KindEmitted:
		if e.Emitted == nil || len(e.Emitted.Lines) == 0 {
			return
		}
		r := e.Reader()
		if m.readers[r] == nil {
			m.readers[r] = map[uint64]mEntry{}
		}
		if m.projects[e.Project] == nil {
			m.projects[e.Project] = map[uint64]mEntry{}
		}
		for _, k := range e.Emitted.Lines {
			rec(m.readers[r], k, e.Emitted.Source)
			rec(m.projects[e.Project], k, e.Emitted.Source)
		}
	case events.KindCompacted:
		for r := range m.readers {
			if r.Session == e.Session {
				delete(m.readers, r)
			}
		}
	}
}

func (m *refModel) lookup(r events.Reader, p string, k uint64, now time.Time) (Scope, string) {
	cut := now.Unix() - int64(Window/time.Second)
	if x, ok := m.readers[r][k]; ok && x.t >= cut {
		return Session, x.src
	}
	if x, ok := m.projects[p][k]; ok && x.t >= cut {
		return Project, x.src
	}
	return NotShown, ""
}

func (m *refModel) holdsLive(r events.Reader, now time.Time) bool {
	cut := now.Unix() - int64(Window/time.Second)
	for _, x := range m.readers[r] {
		if x.t >= cut {
			return true
		}
	}
	return false
}

var (
	propReaders  = []events.Reader{main1, sub1, sub2, main2, {Session: "s3"}}
	propProjects = []string{"p", "q"}
	propSources  = []string{"", "cat a.go", "make", "ls"}
)

// genEvent makes one event from 4 bytes: kind, reader, key spread and a
// time step (never backwards).
func genEvent(b [4]byte, at time.Time) events.Event {
	r := propReaders[int(b[1])%len(propReaders)]
	p := propProjects[int(b[1]>>4)%len(propProjects)]
	h := fmt.Sprintf("%016x", b[2]%4)
	switch b[0] % 8 {
	case 0, 1, 2, 3:
		n := 1 + int(b[2]%6)
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = uint64(b[3]%16) + uint64(i)*uint64(1+b[2]%3)
		}
		e := ev(events.KindEmitted, r, p, at)
		var paid []string
		if b[3]&0x80 != 0 {
			paid = []string{h}
		}
		e.Emitted = &events.Emitted{Source: propSources[int(b[0]>>3)%len(propSources)], Lines: keys, Paid: paid}
		return e
	case 4:
		e := ev(events.KindCompacted, r, p, at)
		e.Compacted = &events.Compacted{}
		return e
	case 5:
		e := ev(events.KindFolded, r, p, at)
		e.Folded = &events.Folded{Handle: h}
		return e
	case 6:
		if b[3]&1 == 0 {
			r = events.Reader{}
		}
		e := ev(events.KindRetrieved, r, "", at)
		e.Retrieved = &events.Retrieved{Handle: h, Found: b[3]&2 == 0}
		return e
	}
	e := ev(events.KindArchived, r, p, at)
	if b[3]%3 == 0 {
		e.Kind = "future_kind" // unknown kinds are ignored
	} else if b[3]%3 == 1 {
		e.Archived = &events.Archived{Handle: h, Lines: 1, Bytes: 1}
	} // else: an Archived event without its payload
	return e
}

func stepOf(b byte) time.Duration {
	switch b % 4 {
	case 0:
		return 0
	case 1:
		return time.Duration(b) * time.Minute
	case 2:
		return time.Duration(b%12) * day
	}
	return time.Duration(b%40)*day + time.Duration(b)*time.Second
}

// checkAgainstModel applies a byte-driven event sequence to the ledger and
// to the unpruned model, and compares every lookup at the time of each
// event and later.
func checkAgainstModel(t *testing.T, data []byte) {
	l := newLT()
	m := newRefModel()
	at := t0
	for i := 0; i+4 <= len(data); i += 4 {
		var b [4]byte
		copy(b[:], data[i:i+4])
		at = at.Add(stepOf(b[3] ^ b[0]))
		e := genEvent(b, at)
		l.apply(e)
		m.apply(e)
		for _, later := range []time.Duration{0, day, 29 * day, 31 * day} {
			now := at.Add(later)
			for _, r := range propReaders {
				for _, p := range propProjects {
					for k := uint64(0); k < 40; k++ {
						s1, src1 := l.Lookup(r, p, k, now)
						s2, src2 := m.lookup(r, p, k, now)
						if s1 != s2 || src1 != src2 {
							t.Fatalf("event %d (%s at +%v), lookup(%v, %s, %d) at +%v: ledger %d %q, unpruned %d %q",
								i/4, e.Kind, at.Sub(t0), r, p, k, now.Sub(t0), s1, src1, s2, src2)
						}
					}
				}
				if m.holdsLive(r, at) && !l.Holds(r, t0.Add(2*time.Minute)) {
					t.Fatalf("event %d: %v holds live lines but Holds is false", i/4, r)
				}
			}
		}
		for _, r := range propReaders {
			for j := 0; j < 4; j++ {
				if l.Owed(r, fmt.Sprintf("%016x", j)) < 0 {
					t.Fatal("negative debt")
				}
			}
		}
	}
}

// TestPruneMatchesUnprunedLookup (property): with event times that never go
// back, the pruned ledger answers every Lookup at or after the newest event
// exactly as a ledger that never prunes. Red when prune uses a shorter cut
// than Window, or when prune forgets to run at all and Holds reports
// stale readers (the Holds check).
func TestPruneMatchesUnprunedLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for run := 0; run < 60; run++ {
		data := make([]byte, 4*(20+r.IntN(120)))
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		checkAgainstModel(t, data)
	}
}

// FuzzApply: any event sequence (kinds, readers, handles, time steps,
// payloads missing, unknown kinds) never panics and keeps the pruned ledger
// equal to the unpruned model.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 1, 0, 0, 5, 1, 1, 0, 6, 0, 1, 3, 0, 1, 2, 0x80})
	f.Add([]byte("emit compact fold retrieve archive unknown kinds and long gaps in time"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4*400 {
			data = data[:4*400]
		}
		checkAgainstModel(t, data)
		// Raw events straight from the bytes, with nil payloads and zero
		// times, must not panic either.
		l := New()
		for i, c := range data {
			e := events.Event{Seq: events.Seq(i), Kind: []events.Kind{events.KindEmitted, events.KindCompacted,
				events.KindArchived, events.KindFolded, events.KindRetrieved, events.KindInvoked, ""}[int(c)%7],
				Time: time.Unix(int64(c)*int64(day/time.Second), 0), Session: string(rune('a' + c%3))}
			l.Apply(e)
		}
	})
}

// TestPruneForgetsOldMarkersAndDebts: a marker shown, and a debt asked, more
// than Window (plus the prune slack) ago are pruned, so an unknown reader's
// retrieve of an old handle owes nobody and old debts stop counting.
func TestPruneForgetsOldMarkersAndDebts(t *testing.T) {
	l := newLT()
	l.folded(main1, "aaaaaaaaaaaaaaaa", t0)
	l.retrieved(main2, "bbbbbbbbbbbbbbbb", true, t0)
	late := t0.Add(Window + 2*pruneEvery + time.Hour)
	l.emit(sub1, "p", "ls", late, 9) // any event this late prunes
	l.retrieved(events.Reader{}, "aaaaaaaaaaaaaaaa", true, late)
	if n := l.Owed(main1, "aaaaaaaaaaaaaaaa"); n != 0 {
		t.Fatalf("a marker shown a month ago still makes its reader owed: %d", n)
	}
	if n := l.Owed(main2, "bbbbbbbbbbbbbbbb"); n != 0 {
		t.Fatalf("a month-old debt is still owed: %d", n)
	}
	// A recent marker still counts.
	l.folded(main1, "cccccccccccccccc", late)
	l.retrieved(events.Reader{}, "cccccccccccccccc", true, late.Add(time.Minute))
	if n := l.Owed(main1, "cccccccccccccccc"); n != 1 {
		t.Fatalf("a fresh marker's retrieve owes %d, want 1", n)
	}
}
