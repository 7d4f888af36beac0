package session

import (
	"reflect"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func emitted(seq events.Seq, session, project, tool, src string, failed bool, at time.Time) events.Event {
	return events.Event{Seq: seq, Kind: events.KindEmitted, Time: at, Session: session, Project: project,
		Emitted: &events.Emitted{Tool: tool, Source: src, Failed: failed}}
}

func TestProjectMemory(t *testing.T) {
	s := New()
	evs := []events.Event{
		{Seq: 1, Kind: events.KindGoalSet, Time: t0, Project: "/p", Session: "s1", GoalSet: &events.GoalSet{Text: "ship it"}},
		{Seq: 2, Kind: events.KindRemembered, Time: t0, Project: "/p", Remembered: &events.Remembered{Fact: "use make"}},
		emitted(3, "s1", "/p", "Read", "/p/a.go", false, t0.Add(time.Minute)),
		emitted(4, "s1", "/p", "Read", "/p/a.go", false, t0.Add(2*time.Minute)),
		emitted(5, "s1", "/p", "Read", "/p/b.go", false, t0.Add(3*time.Minute)),
		emitted(6, "s1", "/p", "Read", "/p/old.go", false, t0.Add(-30*24*time.Hour)),
		emitted(7, "s1", "/p", "Bash", "go vet", true, t0.Add(4*time.Minute)),
		emitted(8, "s1", "/p", "Bash", "go test", true, t0.Add(5*time.Minute)),
		emitted(9, "s1", "/p", "Bash", "go test", false, t0.Add(6*time.Minute)),
		{Seq: 10, Kind: events.KindCompacted, Time: t0.Add(7 * time.Minute), Session: "s1", Project: "/p", Compacted: &events.Compacted{}},
		{Seq: 11, Kind: events.KindCompacted, Time: t0.Add(7 * time.Minute), Session: "s1", Project: "/p", Compacted: &events.Compacted{}},
		emitted(12, "s1", "/p", "Bash", "ls", false, t0.Add(8*time.Minute)),
		{Seq: 13, Kind: events.KindGoalSet, Time: t0.Add(9 * time.Minute), Project: "/q", GoalSet: &events.GoalSet{Text: "other"}},
	}
	for _, e := range evs {
		s.Apply(e)
	}
	p := s.Project("/p")
	if p.Goal.Text != "ship it" || p.Goal.Session != "s1" || len(p.Goals) != 1 || len(p.Facts) != 1 || p.Facts[0].Text != "use make" {
		t.Fatalf("goal %+v facts %+v", p.Goal, p.Facts)
	}
	hot := p.HotFiles(5, 7*24*time.Hour)
	if len(hot) != 2 || hot[0].Path != "/p/a.go" || hot[0].Reads != 2 || hot[1].Path != "/p/b.go" {
		t.Fatalf("hot files %+v", hot)
	}
	if all := p.HotFiles(1, 0); len(all) != 1 || all[0].Path != "/p/a.go" {
		t.Fatalf("hot files without window %+v", all)
	}
	f, ok := p.LastError()
	if !ok || f.Source != "go vet" || f.Seq != 7 {
		t.Fatalf("last error %+v %v", f, ok)
	}
	st := s.Get("s1")
	if st.Calls != 8 || st.Compactions != 2 || !reflect.DeepEqual(st.Segments, []int{7}) || st.CallsSinceCompaction != 1 {
		t.Fatalf("session %+v", st)
	}
	if got := s.Projects(); !reflect.DeepEqual(got, []string{"/p", "/q"}) {
		t.Fatalf("projects %v", got)
	}
	if got := s.ForProject("/p"); len(got) != 1 || got[0].ID != "s1" {
		t.Fatalf("for project %+v", got)
	}
	// A cleared goal stays in the history.
	s.Apply(events.Event{Seq: 14, Kind: events.KindGoalSet, Time: t0.Add(10 * time.Minute), Project: "/p", GoalSet: &events.GoalSet{}})
	if p.Goal.Text != "" || len(p.Goals) != 2 {
		t.Fatalf("cleared goal %+v", p.Goals)
	}
}

func TestActiveFailuresBounded(t *testing.T) {
	s := New()
	for i := 1; i <= maxActive+5; i++ {
		s.Apply(emitted(events.Seq(i), "s", "/p", "Bash", "cmd"+string(rune('A'+i)), true, t0.Add(time.Duration(i)*time.Minute)))
	}
	p := s.Project("/p")
	if len(p.active) != maxActive {
		t.Fatalf("%d active failures", len(p.active))
	}
	if f, _ := p.LastError(); f.Seq != maxActive+5 {
		t.Fatalf("last error %+v", f)
	}
}
