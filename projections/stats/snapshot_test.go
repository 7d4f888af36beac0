package stats

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/omnictx/omni/events/eventstest"
)

// TestSnapshotFoldEquivalence: folding A then B equals folding A,
// marshalling, unmarshalling into fresh stats and folding B — for random
// event sequences split at random points (between any two events, even
// between an invocation's Emitted event and a later Folded one).
func TestSnapshotFoldEquivalence(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		evs := eventstest.RandomBatches(seed, 400)
		rng := rand.New(rand.NewSource(seed))
		cuts := []int{0, 1, len(evs)}
		for i := 0; i < 8; i++ {
			cuts = append(cuts, rng.Intn(len(evs)))
		}
		for _, since := range []time.Time{{}, evs[len(evs)/2].Time} {
			for _, cut := range cuts {
				p1, p2 := NewSince(since), NewSince(since)
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
				j1, _ := json.Marshal(p1.Report())
				j3, _ := json.Marshal(p3.Report())
				if string(j1) != string(j3) {
					t.Fatalf("seed %d cut %d: reports differ:\n%s\n%s", seed, cut, j1, j3)
				}
				b1, _ := p1.MarshalBinary()
				b3, _ := p3.MarshalBinary()
				if string(b1) != string(b3) {
					t.Fatalf("seed %d cut %d: encodings differ", seed, cut)
				}
			}
		}
	}
}

func TestSnapshotRejectsGarbage(t *testing.T) {
	s := New()
	for _, e := range eventstest.RandomBatches(7, 50) {
		s.Apply(e)
	}
	want := s.Snapshot()
	for _, bad := range [][]byte{nil, {1, 2, 3}, []byte("not gob at all")} {
		if err := s.UnmarshalBinary(bad); err == nil {
			t.Fatalf("UnmarshalBinary(%q) succeeded", bad)
		}
	}
	if !reflect.DeepEqual(s.Snapshot(), want) {
		t.Fatal("a failed UnmarshalBinary changed the stats")
	}
}
