package stats

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// invocation returns the batch of one invocation: Invoked, the given middle
// events, Emitted. host "" makes it a terminal row.
func invocation(id, session, host string, at time.Time, em events.Emitted, middle ...events.Event) []events.Event {
	inv := events.Event{ID: id, Kind: events.KindInvoked, Time: at, Session: session, Project: "/p",
		Invoked: &events.Invoked{Door: events.DoorHook, Host: host}}
	if host == "" {
		inv.Invoked.Door = events.DoorExec
	}
	out := []events.Event{inv}
	for _, m := range middle {
		m.Call, m.Time, m.Session, m.Project = id, at, session, "/p"
		out = append(out, m)
	}
	e := em
	out = append(out, events.Event{ID: id + "e", Kind: events.KindEmitted, Time: at, Session: session, Project: "/p", Call: id, Emitted: &e})
	return out
}

func fold(kind, handle string, bytes, marker int) events.Event {
	return events.Event{Kind: events.KindFolded, Folded: &events.Folded{Marker: kind, Handle: handle, Bytes: bytes, MarkerBytes: marker, Lines: 3}}
}

func distilled(d events.Distilled) events.Event {
	return events.Event{Kind: events.KindDistilled, Distilled: &d}
}

func fixture() []events.Event {
	var evs []events.Event
	add := func(b []events.Event) { evs = append(evs, b...) }
	add(invocation("c1", "s1", "claude-code", t0, events.Emitted{Tool: "Bash", Source: "cat a", RawBytes: 1000, DeliveredBytes: 1000, Reason: "no-run"}))
	add(invocation("c2", "s1", "claude-code", t0.Add(time.Minute), events.Emitted{Tool: "Bash", Source: "cat a", RawBytes: 1000, DeliveredBytes: 100, Replied: true},
		fold("whole", "h1", 1000, 100)))
	add(invocation("c3", "s1", "claude-code", t0.Add(2*time.Minute), events.Emitted{Tool: "Bash", Source: "pytest", RawBytes: 4000, DeliveredBytes: 700, Replied: true},
		distilled(events.Distilled{Distiller: "pytest", RawBytes: 4000, DeliveredBytes: 1000}), fold("run", "h2", 400, 100)))
	add(invocation("c4", "", "", t0.Add(3*time.Minute), events.Emitted{Tool: "Bash", RawBytes: 500, DeliveredBytes: 500, Reason: "floor:264"}))
	add(invocation("c5", "s2", "", t0.Add(4*time.Minute), events.Emitted{Tool: "Bash", Source: "cat a", RawBytes: 1000, DeliveredBytes: 100, Replied: true},
		fold("whole", "h3", 1000, 100)))
	// omni exec in a session a host hook named (a PreToolUse rewrite): an agent row.
	add(invocation("c5b", "s1", "", t0.Add(4*time.Minute), events.Emitted{Tool: "Bash", Source: "ls", RawBytes: 10, DeliveredBytes: 10, Reason: "floor:264"}))
	evs = append(evs, events.Event{ID: "r1", Kind: events.KindRetrieved, Time: t0.Add(5 * time.Minute), Session: "s1",
		Retrieved: &events.Retrieved{Handle: "h1", Found: true}})
	evs = append(evs, events.Event{ID: "r2", Kind: events.KindRetrieved, Time: t0.Add(5 * time.Minute),
		Retrieved: &events.Retrieved{Handle: "h1", Found: true}})
	evs = append(evs, events.Event{ID: "k1", Kind: events.KindCompacted, Time: t0.Add(6 * time.Minute), Session: "s1",
		Compacted: &events.Compacted{Trigger: "PreCompact"}})
	evs = append(evs, events.Event{ID: "k2", Kind: events.KindCompacted, Time: t0.Add(6 * time.Minute), Session: "s1",
		Compacted: &events.Compacted{Trigger: "PostCompact"}})
	add(invocation("c6", "s1", "claude-code", t0.Add(7*time.Minute), events.Emitted{Tool: "Read", Source: "/p/x.go", RawBytes: 300, DeliveredBytes: 300, Failed: true, Reason: "failed"}))
	return evs
}

func fold1(evs []events.Event, s *Stats) *Stats {
	for _, e := range evs {
		s.Apply(e)
	}
	return s
}

func TestMechanismsAndPopulations(t *testing.T) {
	r := fold1(fixture(), New()).Report()
	a, term := r.Agent, r.Terminal
	if a.Calls != 5 || term.Calls != 2 {
		t.Fatalf("agent %d calls, terminal %d", a.Calls, term.Calls)
	}
	m := a.Mechanisms
	if m.Folded != (MechanismReport{Calls: 2, Folds: 2, BytesSaved: 900 + 300, BaseBytes: 1000 + 1000, SavedPct: 60}) {
		t.Errorf("folded %+v", m.Folded)
	}
	if m.Distilled != (MechanismReport{Calls: 1, BytesSaved: 3000, BaseBytes: 4000, SavedPct: 75}) {
		t.Errorf("distilled %+v", m.Distilled)
	}
	if m.LeftAlone.Calls != 3 || a.BytesSaved != 4200 || m.Folded.BytesSaved+m.Distilled.BytesSaved != a.BytesSaved {
		t.Errorf("left alone %d, saved %d", m.LeftAlone.Calls, a.BytesSaved)
	}
	if !reflect.DeepEqual(a.LeftAloneReasons, []Count{{"failed", 1}, {"floor:264", 1}, {"no-run", 1}}) {
		t.Errorf("reasons %+v", a.LeftAloneReasons)
	}
	if term.Mechanisms.Folded.Calls != 1 || term.BytesSaved != 900 || term.Sessions != 2 {
		t.Errorf("terminal %+v", term)
	}
	// Calibration: h1 retrieved twice (one handle); h3 is a terminal fold.
	want := []FoldReport{
		{Marker: "run", Folds: 1, Handles: 1, Lines: 3, FoldedBytes: 400, MarkerBytes: 100, BytesSaved: 300},
		{Marker: "whole", Folds: 1, Handles: 1, Lines: 3, FoldedBytes: 1000, MarkerBytes: 100, BytesSaved: 900, Retrieves: 2, RetrievedHandles: 1, RetrievedPct: 100},
	}
	if !reflect.DeepEqual(a.Folds, want) {
		t.Errorf("folds %+v", a.Folds)
	}
	// One compaction (two events) ended a segment of four calls.
	l := a.Lifetimes
	if l.Compactions != 1 || l.CompactionEvents != 2 || l.CallsBeforeCompaction != (Dist{1, 4, 4, 4}) || l.CallsOpen != (Dist{1, 1, 1, 1}) {
		t.Errorf("lifetimes %+v", l)
	}
	if got := a.ByFamily[0]; got.Name != "pytest" || got.BytesSaved != 3300 {
		t.Errorf("families %+v", a.ByFamily)
	}
}

// A Distilled or Folded event recorded after its Emitted event counts the
// same as one recorded before it.
func TestLateEventsCountTheSame(t *testing.T) {
	evs := fixture()
	var late []events.Event
	for i := 0; i < len(evs); {
		j := i + 1
		if evs[i].Kind == events.KindInvoked {
			for j < len(evs) && evs[j].Call == evs[i].ID {
				j++
			}
		}
		batch := evs[i:j]
		if len(batch) > 2 {
			// the Emitted event right after the Invoked one
			late = append(late, batch[0], batch[len(batch)-1])
			late = append(late, batch[1:len(batch)-1]...)
		} else {
			late = append(late, batch...)
		}
		i = j
	}
	if len(late) != len(evs) || late[1].Kind != events.KindEmitted {
		t.Fatal("bad reordering")
	}
	a, _ := json.Marshal(fold1(evs, New()).Report())
	b, _ := json.Marshal(fold1(late, New()).Report())
	if string(a) != string(b) {
		t.Fatalf("reports differ:\n%s\n%s", a, b)
	}
}

func TestSince(t *testing.T) {
	s := fold1(fixture(), NewSince(t0.Add(2*time.Minute)))
	r := s.Report()
	if r.Since != "2026-03-02T09:02:00Z" || r.Agent.Calls != 3 || r.Terminal.Calls != 2 {
		t.Fatalf("since: %+v", r)
	}
	// h1 was folded before the filter: its retrieves count nowhere.
	for _, f := range r.Agent.Folds {
		if f.Retrieves != 0 {
			t.Errorf("retrieve of a fold before the filter counted: %+v", f)
		}
	}
}

// The series keeps at most seriesMax buckets; its width depends only on
// the set of event times, not on their order.
func TestSeriesCoarsens(t *testing.T) {
	var evs []events.Event
	for i := 0; i < 1000; i++ {
		at := t0.Add(time.Duration(i*7) * time.Minute)
		evs = append(evs, invocation(fmt.Sprintf("c%d", i), "s", "claude-code", at, events.Emitted{Tool: "Bash", RawBytes: 10, DeliveredBytes: 5})...)
	}
	fwd := fold1(evs, New()).Report().Agent.Series
	var rev []events.Event
	for i := len(evs) - 2; i >= 0; i -= 2 {
		rev = append(rev, evs[i:i+2]...)
	}
	bwd := fold1(rev, New()).Report().Agent.Series
	if len(fwd.Points) > seriesMax || fwd.BucketSeconds != 3600 || !reflect.DeepEqual(fwd, bwd) {
		t.Fatalf("width %d, %d points; backwards width %d, %d points", fwd.BucketSeconds, len(fwd.Points), bwd.BucketSeconds, len(bwd.Points))
	}
	var calls int
	for _, p := range fwd.Points {
		calls += p.Calls
	}
	if calls != 1000 {
		t.Fatalf("%d calls in the series", calls)
	}
}

func TestFamily(t *testing.T) {
	for _, c := range []struct{ tool, src, want string }{
		{"Bash", "git status --short", "git status"},
		{"Bash", "cd /repo && go test ./... -run X", "go test"},
		{"Bash", "FOO=1 BAR=2 sudo -E make -j4", "make"},
		{"Bash", "timeout 30 python -m pytest -q", "python -m pytest"},
		{"Bash", "/usr/bin/grep -rn foo .", "grep"},
		{"Bash", "git -C x log", "git"},
		{"Bash", "env", "env"},
		{"Bash", "", "(none)"},
		{"Bash", `{"bash_id": "x"}`, "(json)"},
		{"Bash", "ls -la\nrm -rf x", "ls"},
		{"Read", "/p/main.GO", "Read .go"},
		{"Read", "/p/Makefile", "Read"},
		{"Grep", "", "Grep"},
	} {
		if got := Family(c.tool, c.src); got != c.want {
			t.Errorf("Family(%q, %q) = %q, want %q", c.tool, c.src, got, c.want)
		}
	}
}

func TestDist(t *testing.T) {
	if d := dist([]int{5, 1, 9, 3, 7, 2, 8, 4, 6, 10}); d != (Dist{10, 5, 9, 10}) {
		t.Errorf("dist %+v", d)
	}
	if d := dist(nil); d != (Dist{}) {
		t.Errorf("empty dist %+v", d)
	}
}

// TestOverCapBaseline: a call whose Invoked event carries
// events.ParamPersisted is counted in OverCap (its raw bytes are the whole
// output, the baseline the report names), and in the headline as well; a
// call without it is not. Red without the persisted flag on call.
func TestOverCapBaseline(t *testing.T) {
	evs := fixture()
	big := invocation("c7", "s1", "claude-code", t0.Add(8*time.Minute), events.Emitted{Tool: "Bash", Source: "pytest", RawBytes: 90000, DeliveredBytes: 3000, Replied: true})
	big[0].Invoked.Params = map[string]string{string(events.ParamPersisted): "1"}
	evs = append(evs, big...)
	s := fold1(evs, New())
	r := s.Report()
	oc := r.Agent.OverCap
	if oc.Calls != 1 || oc.RawBytes != 90000 || oc.DeliveredBytes != 3000 || oc.BytesSaved != 87000 || oc.SavedPct != 96.7 {
		t.Fatalf("over-cap totals: %+v", oc)
	}
	if r.Agent.Baseline != BaselineRaw || r.Agent.RawBytes < 90000 {
		t.Fatalf("baseline %q, raw %d", r.Agent.Baseline, r.Agent.RawBytes)
	}
	if r.Terminal.OverCap.Calls != 0 {
		t.Fatalf("terminal over-cap: %+v", r.Terminal.OverCap)
	}
	// The snapshot keeps it.
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	s2 := New()
	if err := s2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got := s2.Report().Agent.OverCap; got != oc {
		t.Fatalf("after snapshot %+v, want %+v", got, oc)
	}
}

// TestCutRecallAndTokens: a block a distiller archived is a cut of that
// distiller, a block a ledger fold archived in the same call is the fold's;
// a retrieve of the cut counts in Cuts (recall 100%, flagged past ten
// handles), and token counts add up beside bytes. Red when Distilled does
// not attribute the call's archives, when Folded does not take its own
// block back, or when Totals ignores the token fields.
func TestCutRecallAndTokens(t *testing.T) {
	s := New()
	arch := func(h string) events.Event {
		return events.Event{Kind: events.KindArchived, Archived: &events.Archived{Handle: h, Lines: 3, Bytes: 90}}
	}
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("c%d", i)
		cut, fh := fmt.Sprintf("%015dc", i), fmt.Sprintf("%015df", i)
		for _, e := range invocation(id, "s1", "claude-code", t0.Add(time.Duration(i)*time.Minute),
			events.Emitted{Tool: "Bash", RawBytes: 1000, DeliveredBytes: 300, Replied: true, RawTokens: 250, DeliveredTokens: 80, Tokenizer: "o200k_base"},
			arch(cut), arch(fh), distilled(events.Distilled{Distiller: "pytest", RawBytes: 1000, DeliveredBytes: 500}), fold("run", fh, 400, 60)) {
			s.Apply(e)
		}
		s.Apply(events.Event{ID: id + "r", Kind: events.KindRetrieved, Time: t0.Add(time.Hour), Session: "s1",
			Retrieved: &events.Retrieved{Handle: cut, Found: true}})
	}
	r := s.Report().Agent
	if len(r.Cuts) != 1 || r.Cuts[0].Marker != "pytest" || r.Cuts[0].Handles != 10 || r.Cuts[0].RetrievedHandles != 10 || !r.Cuts[0].Flagged {
		t.Fatalf("cuts %+v", r.Cuts)
	}
	if len(r.Folds) != 1 || r.Folds[0].Handles != 10 || r.Folds[0].RetrievedHandles != 0 || r.Folds[0].Flagged {
		t.Fatalf("folds %+v", r.Folds)
	}
	if tk := r.Tokens; tk.Tokenizer != "o200k_base" || tk.Calls != 10 || tk.RawTokens != 2500 || tk.DeliveredTokens != 800 || tk.TokensSaved != 1700 {
		t.Fatalf("tokens %+v", tk)
	}
}
