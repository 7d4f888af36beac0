package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/replay"
)

type counter struct{ seqs []events.Seq }

func (c *counter) Apply(e events.Event) { c.seqs = append(c.seqs, e.Seq) }

func fill(t *testing.T, n int) *memlog.Log {
	t.Helper()
	l := memlog.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		b := []events.Event{
			{ID: "a", Kind: events.KindCompacted, Time: t0, Compacted: &events.Compacted{Trigger: "PreCompact"}},
			{ID: "b", Kind: events.KindCompacted, Time: t0, Compacted: &events.Compacted{Trigger: "PostCompact"}},
		}
		if _, err := l.Append(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestFoldRange: Fold applies exactly the events with from <= Seq < to, in
// order, to every projection, and reports the last batch applied.
func TestFoldRange(t *testing.T) {
	l := fill(t, 5)
	a, b := &counter{}, &counter{}
	last, err := replay.Fold(context.Background(), l, 2, 4, a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []events.Seq{2, 2, 3, 3}
	if last != 3 || len(a.seqs) != 4 || len(b.seqs) != 4 {
		t.Fatalf("last %d, applied %v / %v; want last 3, %v", last, a.seqs, b.seqs, want)
	}
	for i := range want {
		if a.seqs[i] != want[i] || b.seqs[i] != want[i] {
			t.Fatalf("applied %v, want %v", a.seqs, want)
		}
	}
	all := &counter{}
	if last, _ := replay.Fold(context.Background(), l, 0, 0, all); last != 5 || len(all.seqs) != 10 {
		t.Fatalf("whole fold: last %d, %d events", last, len(all.seqs))
	}
}

// TestBatches: each batch arrives whole, once, in order.
func TestBatches(t *testing.T) {
	l := fill(t, 4)
	var got [][]events.Event
	err := replay.Batches(context.Background(), l, 0, 4, func(b []events.Event) error {
		got = append(got, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d batches, want 3 (seq 1..3)", len(got))
	}
	for i, b := range got {
		if len(b) != 2 || b[0].Seq != events.Seq(i+1) || b[1].Index != 1 {
			t.Fatalf("batch %d = %+v", i, b)
		}
	}
}
