// Package session is the session projection: a pure fold over the event log
// into what omni knows of each host session — its readers (main agent and
// subagents), its compactions, its calls and its last activity — and of
// each project across sessions: the pinned goal, remembered facts, the
// files read most, and the failures not yet followed by a success. It
// imports events and the standard library only: no clock (time comes from
// each event), no I/O.
package session

import (
	"sort"
	"time"

	"github.com/omnictx/omni/events"
)

// State is one host session.
type State struct {
	ID      string
	Project string
	// Readers lists the agent ids seen in this session ("" = main), sorted.
	Readers []string
	// Calls counts Emitted events; Compactions counts Compacted events (a
	// host may send several for one compaction: PreCompact, PostCompact).
	Calls, Compactions int
	// CallsSinceCompaction counts Emitted events since the last compaction.
	CallsSinceCompaction int
	// Segments lists the calls made before each compaction that ended a
	// segment with at least one call, oldest first: the session's lifetimes.
	Segments []int
	// First and Last are the times of the first and newest events.
	First, Last time.Time
	// Ended reports a SessionEnded event.
	Ended bool
}

// Goal is one GoalSet event: the goal pinned for a project from then on.
type Goal struct {
	// Text is the goal; "" means the goal was cleared.
	Text    string
	Time    time.Time
	Session string
	Seq     events.Seq
}

// Fact is one Remembered event.
type Fact struct {
	Text    string
	Time    time.Time
	Session string
	Seq     events.Seq
}

// File is one path read in a project (Read tool deliveries that did not fail).
type File struct {
	Path  string
	Reads int
	Last  time.Time
}

// Failure is a failed call (Emitted with Failed) not yet followed, in the
// same project, by a successful call of the same tool and source.
type Failure struct {
	Seq                          events.Seq
	Index                        int
	Time                         time.Time
	Session, Agent, Tool, Source string
}

// maxActive bounds the active failures kept per project; the oldest go first.
const maxActive = 32

// Project is what omni knows of one project across sessions.
type Project struct {
	Name string
	// Goal is the pinned goal (Text "" when none); Goals every change,
	// oldest first, clears included.
	Goal  Goal
	Goals []Goal
	// Facts are the remembered facts, oldest first.
	Facts []Fact
	// Last is the time of the newest event of the project.
	Last   time.Time
	files  map[string]*File
	active map[string]Failure
}

// Sessions is the fold state. Not safe for concurrent use.
type Sessions struct {
	byID      map[string]*State
	byProject map[string]*Project
	// distillSeq is the batch of the newest omni distill invocation: its
	// Emitted event is a what-would-the-model-read trial, not work on the
	// project, so it is neither a failure nor a success nor a read there.
	// (An Invoked event comes before its Emitted in the same batch, so
	// this needs no snapshot.)
	distillSeq events.Seq
}

// New returns an empty projection.
func New() *Sessions {
	return &Sessions{byID: map[string]*State{}, byProject: map[string]*Project{}}
}

func (s *Sessions) project(name string) *Project {
	p := s.byProject[name]
	if p == nil {
		p = &Project{Name: name, files: map[string]*File{}, active: map[string]Failure{}}
		s.byProject[name] = p
	}
	return p
}

// Apply folds one event.
func (s *Sessions) Apply(e events.Event) {
	s.applyProject(e)
	if e.Session == "" {
		return
	}
	st := s.byID[e.Session]
	if st == nil {
		st = &State{ID: e.Session, Project: e.Project, First: e.Time}
		s.byID[e.Session] = st
	}
	st.Last = e.Time
	i := sort.SearchStrings(st.Readers, e.Agent)
	if i == len(st.Readers) || st.Readers[i] != e.Agent {
		st.Readers = append(st.Readers, "")
		copy(st.Readers[i+1:], st.Readers[i:])
		st.Readers[i] = e.Agent
	}
	switch e.Kind {
	case events.KindEmitted:
		st.Calls++
		st.CallsSinceCompaction++
	case events.KindCompacted:
		st.Compactions++
		if st.CallsSinceCompaction > 0 {
			st.Segments = append(st.Segments, st.CallsSinceCompaction)
		}
		st.CallsSinceCompaction = 0
	case events.KindSessionEnded:
		st.Ended = true
	}
}

func (s *Sessions) applyProject(e events.Event) {
	switch e.Kind {
	case events.KindInvoked:
		if e.Invoked != nil && e.Invoked.Door == events.DoorDistill {
			s.distillSeq = e.Seq
		}
	case events.KindGoalSet:
		if e.GoalSet == nil {
			return
		}
		p := s.project(e.Project)
		g := Goal{Text: e.GoalSet.Text, Time: e.Time, Session: e.Session, Seq: e.Seq}
		p.Goal = g
		p.Goals = append(p.Goals, g)
		p.touch(e.Time)
	case events.KindRemembered:
		if e.Remembered == nil {
			return
		}
		p := s.project(e.Project)
		p.Facts = append(p.Facts, Fact{Text: e.Remembered.Fact, Time: e.Time, Session: e.Session, Seq: e.Seq})
		p.touch(e.Time)
	case events.KindEmitted:
		em := e.Emitted
		if em == nil || (e.Seq == s.distillSeq && e.Seq != 0) {
			return
		}
		p := s.project(e.Project)
		p.touch(e.Time)
		key := em.Tool + "\x00" + em.Source
		if em.Failed {
			p.active[key] = Failure{Seq: e.Seq, Index: e.Index, Time: e.Time, Session: e.Session, Agent: e.Agent,
				Tool: em.Tool, Source: em.Source}
			if len(p.active) > maxActive {
				var oldest string
				var of Failure
				first := true
				for k, f := range p.active {
					if first || before(f, of) {
						oldest, of, first = k, f, false
					}
				}
				delete(p.active, oldest)
			}
			return
		}
		delete(p.active, key)
		if em.Tool == "Read" && em.Source != "" {
			f := p.files[em.Source]
			if f == nil {
				f = &File{Path: em.Source}
				p.files[em.Source] = f
			}
			f.Reads++
			f.Last = e.Time
		}
	}
}

func before(a, b Failure) bool {
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Index < b.Index
}

func (p *Project) touch(t time.Time) {
	if t.After(p.Last) {
		p.Last = t
	}
}

// Get returns the state of one session, or nil.
func (s *Sessions) Get(id string) *State { return s.byID[id] }

// All returns every session, ordered by first event time then id.
func (s *Sessions) All() []*State {
	out := make([]*State, 0, len(s.byID))
	for _, st := range s.byID {
		out = append(out, st)
	}
	sortStates(out)
	return out
}

// ForProject returns the sessions whose first event was in project, ordered
// by first event time then id.
func (s *Sessions) ForProject(project string) []*State {
	var out []*State
	for _, st := range s.byID {
		if st.Project == project {
			out = append(out, st)
		}
	}
	sortStates(out)
	return out
}

func sortStates(out []*State) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].First.Equal(out[j].First) {
			return out[i].First.Before(out[j].First)
		}
		return out[i].ID < out[j].ID
	})
}

// Project returns what is known of a project, or nil.
func (s *Sessions) Project(name string) *Project { return s.byProject[name] }

// Projects returns the names of every project seen, sorted.
func (s *Sessions) Projects() []string {
	out := make([]string, 0, len(s.byProject))
	for k := range s.byProject {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HotFiles returns up to n files read in the project within window before
// its newest event (window 0: any time), most reads first, then most
// recently read, then by path.
func (p *Project) HotFiles(n int, window time.Duration) []File {
	var out []File
	for _, f := range p.files {
		if window > 0 && f.Last.Before(p.Last.Add(-window)) {
			continue
		}
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Reads != b.Reads {
			return a.Reads > b.Reads
		}
		if !a.Last.Equal(b.Last) {
			return a.Last.After(b.Last)
		}
		return a.Path < b.Path
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// LastError returns the newest failure of the project not yet followed by
// a success of the same tool and source, and whether there is one.
func (p *Project) LastError() (Failure, bool) {
	var best Failure
	found := false
	for _, f := range p.active {
		if !found || before(best, f) {
			best, found = f, true
		}
	}
	return best, found
}
