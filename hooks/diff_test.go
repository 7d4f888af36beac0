package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/memlog"
)

func TestDiff(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Diff(ctx, log, 0, nil); !errors.Is(err, ErrNoDelivery) {
		t.Fatalf("empty log: %v", err)
	}
	text := explainText("alpha", 30)
	_, first := hookSeq(t, e, log, bashPayload("s1", "", "cat a.txt", text))
	r, second := hookSeq(t, e, log, bashPayload("s1", "", "cat a.txt", "head\n"+text))
	hookSeq(t, e, log, compactPayload("s1")) // not a delivery: seq 0 skips it
	d, err := Diff(ctx, log, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Seq != second || d.Raw != "head\n"+text || d.Delivered != r.Delivered || !d.Match || len(d.Folds) != 1 {
		t.Fatalf("diff %+v", d)
	}
	if !strings.Contains(d.Delivered, "[OMNI: 30 lines already shown") || d.Tool != "Bash" || d.Source != "cat a.txt" || d.Reader != "s1" {
		t.Fatalf("diff %+v", d)
	}
	d, err = Diff(ctx, log, first, nil)
	if err != nil || d.Raw != text || d.Delivered != text || !d.Match || len(d.Folds) != 0 {
		t.Fatalf("first: %+v %v", d, err)
	}
	if _, err := Diff(ctx, log, 3, nil); !errors.Is(err, ErrNoDelivery) {
		t.Fatalf("compaction batch: %v", err)
	}
	if _, err := Diff(ctx, log, 42, nil); !errors.Is(err, ErrNoDelivery) {
		t.Fatalf("beyond the log: %v", err)
	}
	// exec door
	res, err := e.Call(ctx, CallInput{Door: "exec", Command: "cat a.txt", Text: text, Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.Call(ctx, CallInput{Door: "exec", Command: "cat a.txt", Text: text, Session: "s2"})
	if err != nil || len(res.Folds) != 1 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	d, err = Diff(ctx, log, 0, nil)
	if err != nil || d.Door != "exec" || d.Raw != text || d.Delivered != res.Delivered || !d.Match {
		t.Fatalf("exec diff %+v %v", d, err)
	}
}
