package session

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/omnictx/omni/events/eventstest"
)

// TestSnapshotFoldEquivalence: folding A then B equals folding A,
// marshalling, unmarshalling into a fresh projection and folding B.
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
			for _, name := range p1.Projects() {
				a, b := p1.Project(name), p3.Project(name)
				if !reflect.DeepEqual(a.HotFiles(10, 0), b.HotFiles(10, 0)) {
					t.Fatalf("HotFiles(%q) differ", name)
				}
				e1, ok1 := a.LastError()
				e2, ok2 := b.LastError()
				if e1 != e2 || ok1 != ok2 {
					t.Fatalf("LastError(%q) differs", name)
				}
			}
			if !reflect.DeepEqual(p1.All(), p3.All()) {
				t.Fatal("All differs")
			}
		}
	}
}
