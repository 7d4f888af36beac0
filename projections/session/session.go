// Package session is the session projection: a pure fold over the event log
// into what omni knows of each host session — its readers (main agent and
// subagents), its compactions, its calls and its last activity. It imports
// events and the standard library only.
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
	// Calls counts Emitted events; Compactions counts Compacted events.
	Calls, Compactions int
	// CallsSinceCompaction counts Emitted events since the last compaction.
	CallsSinceCompaction int
	// First and Last are the times of the first and newest events.
	First, Last time.Time
	// Ended reports a SessionEnded event.
	Ended bool
}

// Sessions is the fold state. Not safe for concurrent use.
type Sessions struct {
	byID map[string]*State
}

// New returns an empty projection.
func New() *Sessions { return &Sessions{byID: map[string]*State{}} }

// Apply folds one event.
func (s *Sessions) Apply(e events.Event) {
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
		st.CallsSinceCompaction = 0
	case events.KindSessionEnded:
		st.Ended = true
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
	sort.Slice(out, func(i, j int) bool {
		if !out[i].First.Equal(out[j].First) {
			return out[i].First.Before(out[j].First)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
