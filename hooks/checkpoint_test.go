package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// drive runs n hook calls (repeated outputs, so folds and archives happen,
// a compaction and retrieves) against e.
func drive(t *testing.T, e *Engine, from, n int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < from+n; i++ {
		var sb strings.Builder
		for j := 0; j < 30+i%7; j++ {
			fmt.Fprintf(&sb, "  %4d  /alpha/item-%02d/shards/segment-%03d.idx\n", 1000+j, (i/3+j)%50, j*13)
		}
		session := fmt.Sprintf("s%d", i%3)
		agent := ""
		if i%5 == 0 {
			agent = "a1"
		}
		r, err := e.HookResult(ctx, HookInput{Stdin: bashPayload(session, agent, fmt.Sprintf("python3 rank.py %d", i%4), sb.String())})
		if err != nil {
			t.Fatal(err)
		}
		if i%9 == 4 && len(r.Folds) > 0 {
			if _, err := e.Retrieve(ctx, r.Folds[0].Handle, r.Reader); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func engineState(t *testing.T, e *Engine) []any {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	return []any{e.ledger.Snapshot(), e.stats.Snapshot(), e.session.Snapshot(), e.applied, e.firstID}
}

func roundTrip(t *testing.T, cp Checkpoint) *Checkpoint {
	t.Helper()
	b, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out Checkpoint
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestCheckpointPlusTailIsFullFold: an Engine restored from a checkpoint
// taken at batch k and folding the tail has exactly the state of a full
// fold of the log, and of the live Engine that appended it.
func TestCheckpointPlusTailIsFullFold(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	live, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, live, 0, 40)
	cp, err := live.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if last, _ := log.Last(ctx); cp.Seq != last {
		t.Fatalf("checkpoint at %d, log at %d", cp.Seq, last)
	}
	drive(t, live, 40, 40)

	full, err := New(ctx, log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	fromCP, err := NewFromCheckpoint(ctx, log, Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}, roundTrip(t, cp))
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) > 0 {
		t.Fatalf("valid checkpoint was ignored: %v", logged)
	}
	want := engineState(t, full)
	if got := engineState(t, live); !reflect.DeepEqual(got, want) {
		t.Fatal("live engine differs from a full fold")
	}
	if got := engineState(t, fromCP); !reflect.DeepEqual(got, want) {
		t.Fatal("checkpoint + tail differs from a full fold")
	}
	c1, _ := full.Checkpoint()
	c2, _ := fromCP.Checkpoint()
	b1, _ := c1.MarshalBinary()
	b2, _ := c2.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatal("checkpoint encodings differ")
	}
	// Both keep deciding alike: the restored engine appends and folds on.
	drive(t, fromCP, 80, 10)
	s, err := Verify(ctx, log, nil, nil)
	if err != nil || s.Identical != s.Compared || s.Compared != 90 {
		t.Fatalf("verify %+v %v", s, err)
	}
}

// TestCheckpointIgnoredWhenStale: a checkpoint from another log, past the
// end of the log, or with broken projections is logged and ignored, and
// the Engine is a full fold.
func TestCheckpointIgnoredWhenStale(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	live, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, live, 0, 20)
	good, err := live.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	want := engineState(t, live)
	bads := map[string]func(cp *Checkpoint){
		"other log":   func(cp *Checkpoint) { cp.FirstID = "01ARZ3NDEKTSV4RRFFQ69G5FAV" },
		"past end":    func(cp *Checkpoint) { cp.Seq += 100 },
		"zero":        func(cp *Checkpoint) { cp.Seq = 0 },
		"ledger junk": func(cp *Checkpoint) { cp.Ledger = []byte("junk") },
		"stats junk":  func(cp *Checkpoint) { cp.Stats = cp.Stats[:len(cp.Stats)/2] },
		"no session":  func(cp *Checkpoint) { cp.Session = nil },
		"ahead":       func(cp *Checkpoint) { cp.Seq--; cp.FirstID = mustFirstID(t, log, cp.Seq) },
	}
	for name, mutate := range bads {
		cp := *roundTrip(t, good)
		mutate(&cp)
		var logged []string
		e, err := NewFromCheckpoint(ctx, log, Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}, &cp)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "checkpoint ignored") {
			t.Fatalf("%s: logged %q", name, logged)
		}
		if got := engineState(t, e); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: state differs from a full fold", name)
		}
	}
	b, _ := good.MarshalBinary()
	for name, data := range map[string][]byte{"empty": nil, "version": append([]byte{CheckpointVersion + 1}, b[1:]...), "truncated": b[:len(b)/2]} {
		var cp Checkpoint
		if err := cp.UnmarshalBinary(data); !errors.Is(err, ErrBadCheckpoint) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func mustFirstID(t *testing.T, log events.Log, seq events.Seq) string {
	t.Helper()
	b, err := log.Get(context.Background(), seq)
	if err != nil {
		t.Fatal(err)
	}
	return b[0].ID
}
