package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// explainText returns n distinct lines tagged tag.
func explainText(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s row %03d  /srv/data/%s/part-%04d.bin  checksum %08x\n", tag, i, tag, i*7, i*2654435761)
	}
	return b.String()
}

func hookSeq(t *testing.T, e *Engine, log *memlog.Log, payload []byte) (Result, events.Seq) {
	t.Helper()
	ctx := context.Background()
	r, err := e.HookResult(ctx, HookInput{Stdin: payload})
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := log.Last(ctx)
	return r, seq
}

func compactPayload(session string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": "PreCompact", "trigger": "auto"})
	return b
}

func TestExplainSessionFold(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	text := explainText("alpha", 30)
	_, first := hookSeq(t, e, log, bashPayload("s1", "", "cat alpha.txt", text))
	// Another reader's delivery must not count for s1.
	hookSeq(t, e, log, bashPayload("s2", "", "cat alpha.txt", text))
	r, second := hookSeq(t, e, log, bashPayload("s1", "", "cat alpha.txt", text))
	if len(r.Folds) != 1 {
		t.Fatalf("second call: %d folds (%s)", len(r.Folds), r.Reason)
	}
	h := r.Folds[0].Handle
	if _, err := e.Retrieve(ctx, h, events.Reader{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	_, compacted := hookSeq(t, e, log, compactPayload("s1"))

	for _, target := range []string{h, strings.ToUpper(h), fmt.Sprint(second)} {
		x, err := Explain(ctx, log, target)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if len(x.Folds) != 1 || x.TotalFolds != 1 {
			t.Fatalf("%s: %d folds", target, len(x.Folds))
		}
		w := x.Folds[0]
		if w.Seq != second || w.Reader != "s1" || w.Marker != "whole" || w.Scope != "session" || w.Handle != h {
			t.Errorf("%s: fold %+v", target, w)
		}
		if w.First == nil || w.First.Seq != first || w.First.Reader != "s1" || w.First.Source != "cat alpha.txt" || w.First.Tool != "Bash" {
			t.Errorf("%s: first delivery %+v, want seq %d", target, w.First, first)
		}
		if w.BlockLines != 30 || w.TracedLines != 30 || len(w.Deliveries) != 1 || w.Deliveries[0].Lines != 30 {
			t.Errorf("%s: traced %d of %d lines, deliveries %+v", target, w.TracedLines, w.BlockLines, w.Deliveries)
		}
		if w.GainBytes != 64 || w.BarBytes != w.MarkerBytes+64 || !w.Cleared || w.Bytes != len(text) {
			t.Errorf("%s: bar %d gain %d bytes %d cleared %v", target, w.BarBytes, w.GainBytes, w.Bytes, w.Cleared)
		}
		if len(w.Retrieves) != 1 || w.Retrieves[0].Reader != "s1" {
			t.Errorf("%s: retrieves %+v", target, w.Retrieves)
		}
		if w.Compacted == nil || w.Compacted.Seq != compacted || w.Compacted.What != "PreCompact" {
			t.Errorf("%s: compacted %+v, want seq %d", target, w.Compacted, compacted)
		}
	}
}

func TestExplainAfterCompactionAndProject(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	a, b := explainText("alpha", 20), explainText("beta", 20)
	_, early := hookSeq(t, e, log, bashPayload("s1", "", "cat a.txt", a))
	hookSeq(t, e, log, compactPayload("s1"))
	_, late := hookSeq(t, e, log, bashPayload("s1", "", "cat a2.txt", a))
	r, seq := hookSeq(t, e, log, bashPayload("s1", "", "cat both.txt", b+a))
	if len(r.Folds) != 1 {
		t.Fatalf("%d folds (%s)", len(r.Folds), r.Reason)
	}
	x, err := Explain(ctx, log, fmt.Sprint(seq))
	if err != nil {
		t.Fatal(err)
	}
	w := x.Folds[0]
	if w.First == nil || w.First.Seq != late || w.First.Source != "cat a2.txt" {
		t.Errorf("after a compaction the first delivery is seq %d, got %+v (early %d)", late, w.First, early)
	}
	// The ledger names a plain file read by its file (Emitted.LineSource);
	// the traced delivery by its command.
	if w.LedgerSource != "a2.txt" || w.First.LineSource != "a2.txt" {
		t.Errorf("ledger source %q, traced %q", w.LedgerSource, w.First.Source)
	}

	// A reader that holds something gets a project fold of lines another
	// reader was shown.
	c := explainText("gamma", 20)
	hookSeq(t, e, log, bashPayload("s3", "", "cat own.txt", explainText("own", 20)))
	r, seq = hookSeq(t, e, log, bashPayload("s3", "", "cat mixed.txt", explainText("new", 20)+c))
	_ = r
	_, cseq := hookSeq(t, e, log, bashPayload("s4", "", "cat c.txt", c))
	r, seq = hookSeq(t, e, log, bashPayload("s3", "", "cat mixed2.txt", explainText("fresh", 20)+c))
	_ = cseq
	if len(r.Folds) != 1 || r.Folds[0].Scope != 1 {
		t.Fatalf("want one session fold of gamma lines (own delivery), got %+v", r.Folds)
	}
	// s5 never saw gamma: its fold is a project fold, first delivered to s3.
	hookSeq(t, e, log, bashPayload("s5", "", "cat own5.txt", explainText("own5", 20)))
	r, seq = hookSeq(t, e, log, bashPayload("s5", "", "cat mixed5.txt", explainText("fresh5", 20)+c))
	if len(r.Folds) != 1 || r.Folds[0].Kind != "project" {
		t.Fatalf("want one project fold, got %+v (%s)", r.Folds, r.Reason)
	}
	x, err = Explain(ctx, log, r.Folds[0].Handle)
	if err != nil {
		t.Fatal(err)
	}
	w = x.Folds[len(x.Folds)-1]
	if w.Seq != seq || w.Scope != "project" || w.GainBytes != 128 || w.First == nil || w.First.Reader != "s3" || w.First.Source != "cat mixed.txt" {
		t.Errorf("project fold: %+v first %+v", w, w.First)
	}
}

func TestExplainErrors(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, _ := New(ctx, log, Options{Now: fixedClock()})
	hookSeq(t, e, log, bashPayload("s1", "", "ls", "a\n"))
	for target, want := range map[string]error{"xyz": ErrBadTarget, "0": ErrBadTarget, "1": ErrNoFold, "99": ErrNoFold, "0123456789abcdef": ErrNoFold} {
		if _, err := Explain(ctx, log, target); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", target, err, want)
		}
	}
}

// A handle the first-seen stages archived (a cut, a collapse) names no
// ledger fold; the error says where it came from.
func TestExplainArchivedNotFolded(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	batch := []events.Event{
		{ID: "i", Kind: events.KindInvoked, Time: at, Session: "s", Invoked: &events.Invoked{Door: events.DoorHook, Host: HostClaudeCode}},
		{ID: "a", Kind: events.KindArchived, Time: at, Session: "s", Call: "i", Archived: &events.Archived{Handle: "00000000000000ab", Lines: 1, Bytes: 2, Data: []byte("x\n")}},
		{ID: "d", Kind: events.KindDistilled, Time: at, Session: "s", Call: "i", Distilled: &events.Distilled{Distiller: "pytest", RawBytes: 9, DeliveredBytes: 5}},
	}
	if _, err := log.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	_, err := Explain(ctx, log, "00000000000000ab")
	if !errors.Is(err, ErrNoFold) || !strings.Contains(err.Error(), "archived at seq 1 by the pytest distiller") {
		t.Fatalf("%v", err)
	}
}
