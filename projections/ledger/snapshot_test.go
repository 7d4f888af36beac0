package ledger

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/eventstest"
)

// TestSnapshotFoldEquivalence: folding A then B equals folding A,
// marshalling, unmarshalling into a fresh ledger and folding B — for random
// event sequences split at random points (between any two events, even
// inside a batch).
func TestSnapshotFoldEquivalence(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		evs := eventstest.RandomBatches(seed, 400)
		rng := rand.New(rand.NewSource(seed))
		for _, cut := range []int{0, 1, rng.Intn(len(evs)), rng.Intn(len(evs)), len(evs)} {
			p1, p2 := New(), New()
			for _, e := range evs {
				p1.Apply(e)
			}
			for _, e := range evs[:cut] {
				p2.Apply(e)
			}
			b, err := p2.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			p3 := New()
			p3.Apply(events.Event{Kind: events.KindEmitted, Session: "junk", Time: time.Unix(5, 0),
				Emitted: &events.Emitted{Lines: events.Keys{1, 2}}}) // overwritten by UnmarshalBinary
			if err := p3.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p2, p3) {
				t.Fatalf("seed %d cut %d: unmarshalled state differs from the marshalled one", seed, cut)
			}
			for _, e := range evs[cut:] {
				p3.Apply(e)
			}
			if !reflect.DeepEqual(p1.Snapshot(), p3.Snapshot()) {
				t.Fatalf("seed %d cut %d: snapshots differ", seed, cut)
			}
			if !reflect.DeepEqual(p1, p3) {
				t.Fatalf("seed %d cut %d: states differ", seed, cut)
			}
			sameAnswers(t, p1, p3, evs[len(evs)-1].Time)
			b1, _ := p1.MarshalBinary()
			b3, _ := p3.MarshalBinary()
			if string(b1) != string(b3) {
				t.Fatalf("seed %d cut %d: encodings differ", seed, cut)
			}
		}
	}
}

func sameAnswers(t *testing.T, a, b *Ledger, last time.Time) {
	t.Helper()
	readers := []events.Reader{{}, {Session: "s1"}, {Session: "s2"}, {Session: "s3"}, {Session: "s1", Agent: "a1"}, {Session: "s3", Agent: "a1"}, {Agent: "a1"}}
	handles := []string{"h000000000000001", "h000000000000002", "h000000000000003", "h000000000000004", "h000000000000005", "nope"}
	for _, now := range []time.Time{last, last.Add(-48 * time.Hour), last.Add(40 * 24 * time.Hour)} {
		for _, r := range readers {
			if a.Holds(r, now) != b.Holds(r, now) {
				t.Fatalf("Holds(%v) differs", r)
			}
			for _, p := range []string{"/p1", "/p2", ""} {
				for k := uint64(0); k < 210; k++ {
					s1, src1 := a.Lookup(r, p, k, now)
					s2, src2 := b.Lookup(r, p, k, now)
					if s1 != s2 || src1 != src2 {
						t.Fatalf("Lookup(%v,%q,%d) = %v %q, want %v %q", r, p, k, s2, src2, s1, src1)
					}
				}
			}
			for _, h := range handles {
				if a.Owed(r, h) != b.Owed(r, h) {
					t.Fatalf("Owed(%v,%s) differs", r, h)
				}
			}
		}
	}
	for _, h := range handles {
		b1, ok1 := a.Block(h)
		b2, ok2 := b.Block(h)
		if b1 != b2 || ok1 != ok2 {
			t.Fatalf("Block(%s) differs", h)
		}
	}
	if a.Last() != b.Last() {
		t.Fatal("Last differs")
	}
}

func TestSnapshotRejectsGarbage(t *testing.T) {
	l := New()
	for _, e := range eventstest.RandomBatches(7, 50) {
		l.Apply(e)
	}
	want := l.Snapshot()
	for _, bad := range [][]byte{nil, {1, 2, 3}, []byte("not gob at all")} {
		if err := l.UnmarshalBinary(bad); err == nil {
			t.Fatalf("UnmarshalBinary(%q) succeeded", bad)
		}
	}
	if !reflect.DeepEqual(l.Snapshot(), want) {
		t.Fatal("a failed UnmarshalBinary changed the ledger")
	}
}
