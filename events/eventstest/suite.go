// Package eventstest is the conformance suite every events.Log
// implementation runs: append order, atomic batches, Read from a sequence,
// Get, Last and First, and encoding round trips.
package eventstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// Run runs the suite against fresh logs made by newLog. newLog must return an
// empty log; the suite does not close it.
func Run(t *testing.T, newLog func(t *testing.T) events.Log) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	mk := func(i int, k events.Kind) events.Event {
		e := events.Event{ID: fmt.Sprintf("01J%023d", i), Kind: k, Time: t0.Add(time.Duration(i) * time.Second),
			Project: "/p", Session: "s", Agent: ""}
		switch k {
		case events.KindEmitted:
			e.Emitted = &events.Emitted{Tool: "Bash", Source: "ls", Lines: events.Keys{1, 2, uint64(i)}, RawBytes: 10}
		case events.KindArchived:
			e.Archived = &events.Archived{Handle: "0123456789abcdef", Lines: 1, Bytes: 3, Data: []byte{0, 1, 2, 255}}
		case events.KindCompacted:
			e.Compacted = &events.Compacted{Trigger: "PreCompact"}
		}
		return e
	}
	t.Run("EmptyLog", func(t *testing.T) {
		l := newLog(t)
		last, err := l.Last(ctx)
		if err != nil || last != 0 {
			t.Fatalf("Last on empty = %d, %v; want 0, nil", last, err)
		}
		if _, err := l.Get(ctx, 1); !errors.Is(err, events.ErrNotFound) {
			t.Fatalf("Get(1) on empty: err = %v, want ErrNotFound", err)
		}
		n := 0
		if err := l.Read(ctx, 0, func(events.Event) error { n++; return nil }); err != nil || n != 0 {
			t.Fatalf("Read on empty: %d events, %v", n, err)
		}
	})
	t.Run("AppendOrderAndRoundTrip", func(t *testing.T) {
		l := newLog(t)
		var want []events.Event
		for b := 0; b < 5; b++ {
			batch := []events.Event{mk(b*3, events.KindArchived), mk(b*3+1, events.KindEmitted), mk(b*3+2, events.KindCompacted)}
			seq, err := l.Append(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			if seq != events.Seq(b+1) {
				t.Fatalf("batch %d got seq %d", b, seq)
			}
			for i := range batch {
				batch[i].Seq, batch[i].Index = seq, i
			}
			want = append(want, batch...)
		}
		var got []events.Event
		if err := l.Read(ctx, 1, func(e events.Event) error { got = append(got, e); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("read %d events, want %d", len(got), len(want))
		}
		for i := range want {
			a, _ := events.Encode([]events.Event{want[i]})
			b, _ := events.Encode([]events.Event{got[i]})
			if !bytes.Equal(a, b) || got[i].Seq != want[i].Seq || got[i].Index != want[i].Index || !got[i].Time.Equal(want[i].Time) {
				t.Fatalf("event %d differs:\nwant %s (%d.%d)\ngot  %s (%d.%d)", i, a, want[i].Seq, want[i].Index, b, got[i].Seq, got[i].Index)
			}
		}
		// Read from the middle is inclusive.
		var seqs []events.Seq
		_ = l.Read(ctx, 4, func(e events.Event) error { seqs = append(seqs, e.Seq); return nil })
		if len(seqs) != 6 || seqs[0] != 4 || seqs[5] != 5 {
			t.Fatalf("Read(4) seqs = %v", seqs)
		}
		evs, err := l.Get(ctx, 3)
		if err != nil || len(evs) != 3 || evs[1].Emitted == nil || evs[1].Emitted.Lines[2] != 7 {
			t.Fatalf("Get(3) = %+v, %v", evs, err)
		}
		last, _ := l.Last(ctx)
		first, _ := l.First(ctx)
		if last != 5 || first != 1 {
			t.Fatalf("First, Last = %d, %d; want 1, 5", first, last)
		}
	})
	t.Run("ReadStopsOnError", func(t *testing.T) {
		l := newLog(t)
		for i := 0; i < 3; i++ {
			if _, err := l.Append(ctx, []events.Event{mk(i, events.KindCompacted)}); err != nil {
				t.Fatal(err)
			}
		}
		stop := errors.New("stop")
		n := 0
		err := l.Read(ctx, 1, func(events.Event) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("Read returned %v after %d events; want stop after 1", err, n)
		}
	})
	t.Run("Purge", func(t *testing.T) {
		l := newLog(t)
		p, ok := l.(interface {
			Purge(context.Context, events.Seq) error
		})
		if !ok {
			t.Skip("this log cannot remove batches")
		}
		for i := 0; i < 5; i++ {
			if _, err := l.Append(ctx, []events.Event{mk(i, events.KindCompacted)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Purge(ctx, 3); err != nil {
			t.Fatal(err)
		}
		first, err := l.First(ctx)
		if err != nil || first != 3 {
			t.Fatalf("First after Purge(3) = %d, %v; want 3", first, err)
		}
		if _, err := l.Get(ctx, 2); !errors.Is(err, events.ErrNotFound) {
			t.Fatalf("Get(2) after Purge(3): %v, want ErrNotFound", err)
		}
		var seqs []events.Seq
		if err := l.Read(ctx, 0, func(e events.Event) error { seqs = append(seqs, e.Seq); return nil }); err != nil ||
			fmt.Sprint(seqs) != "[3 4 5]" {
			t.Fatalf("Read after Purge(3) = %v, %v; want [3 4 5]", seqs, err)
		}
		// The newest batch is never removed; sequences are never reused.
		if err := p.Purge(ctx, 99); err != nil {
			t.Fatal(err)
		}
		if first, _ := l.First(ctx); first != 5 {
			t.Fatalf("First after Purge(99) = %d, want 5 (the newest batch stays)", first)
		}
		if seq, err := l.Append(ctx, []events.Event{mk(9, events.KindCompacted)}); err != nil || seq != 6 {
			t.Fatalf("Append after Purge = %d, %v; want 6", seq, err)
		}
	})
	t.Run("AppendAfter", func(t *testing.T) {
		l := newLog(t)
		c, ok := l.(events.Conditional)
		if !ok {
			t.Skip("the log has no conditional append")
		}
		if _, err := c.AppendAfter(ctx, []events.Event{mk(1, events.KindCompacted)}, 3); !errors.Is(err, events.ErrConflict) {
			t.Fatalf("AppendAfter(3) on empty: err = %v, want ErrConflict", err)
		}
		if seq, err := c.AppendAfter(ctx, []events.Event{mk(1, events.KindCompacted)}, 0); err != nil || seq != 1 {
			t.Fatalf("AppendAfter(0) on empty = %d, %v; want 1", seq, err)
		}
		if _, err := l.Append(ctx, []events.Event{mk(2, events.KindCompacted)}); err != nil {
			t.Fatal(err)
		}
		// Another writer appended batch 2: an append after 1 is refused
		// and stores nothing.
		if _, err := c.AppendAfter(ctx, []events.Event{mk(3, events.KindCompacted)}, 1); !errors.Is(err, events.ErrConflict) {
			t.Fatalf("AppendAfter(1) with 2 batches: err = %v, want ErrConflict", err)
		}
		if last, _ := l.Last(ctx); last != 2 {
			t.Fatalf("Last after a refused append = %d, want 2", last)
		}
		if seq, err := c.AppendAfter(ctx, []events.Event{mk(3, events.KindCompacted)}, 2); err != nil || seq != 3 {
			t.Fatalf("AppendAfter(2) = %d, %v; want 3", seq, err)
		}
	})
}
