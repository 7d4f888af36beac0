package daemon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/projections/session"
)

// GoalRequest is the "goal" request: Op is "set", "clear", "show" or
// "remember" (omni remember goes through this method too).
type GoalRequest struct {
	Op      string `json:"op"`
	Project string `json:"project"`
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Text    string `json:"text,omitempty"`
}

// GoalItem is one goal or fact in a reply.
type GoalItem struct {
	Text    string     `json:"text"`
	Time    string     `json:"time"`
	Session string     `json:"session,omitempty"`
	Seq     events.Seq `json:"seq"`
}

// GoalReply is the "goal" reply: the project's state after the request.
type GoalReply struct {
	Project string     `json:"project"`
	Goal    *GoalItem  `json:"goal,omitempty"`
	History []GoalItem `json:"history"`
	Facts   []GoalItem `json:"facts"`
	// Seq is the batch the request appended (0 for show).
	Seq events.Seq `json:"seq,omitempty"`
}

// Goal sets, clears or shows the project's goal, or remembers a fact
// (in.Op), and returns the project's state after it. Errors: an empty goal
// to set, an unknown op, the Engine's (hooks.ErrEmptyFact,
// hooks.ErrTooLong, the log's).
func (s *Service) Goal(ctx context.Context, in GoalRequest) (GoalReply, error) {
	r := events.Reader{Session: in.Session, Agent: in.Agent}
	var out GoalReply
	var err error
	switch in.Op {
	case "set":
		if strings.TrimSpace(in.Text) == "" {
			return GoalReply{}, errors.New("omni goal set needs a goal (omni goal clear removes it)")
		}
		out.Seq, err = s.engine.SetGoal(ctx, in.Project, r, in.Text)
	case "clear":
		out.Seq, err = s.engine.SetGoal(ctx, in.Project, r, "")
	case "remember":
		out.Seq, err = s.engine.Remember(ctx, in.Project, r, in.Text)
	case "show":
	default:
		return GoalReply{}, fmt.Errorf("goal request: unknown op %q", in.Op)
	}
	if err != nil {
		return GoalReply{}, err
	}
	out.Project = in.Project
	out.History, out.Facts = []GoalItem{}, []GoalItem{}
	s.engine.SessionView(func(ss *session.Sessions) {
		p := ss.Project(in.Project)
		if p == nil {
			return
		}
		if p.Goal.Text != "" {
			g := goalOf(p.Goal.Text, p.Goal.Time, p.Goal.Session, p.Goal.Seq)
			out.Goal = &g
		}
		for _, g := range p.Goals {
			out.History = append(out.History, goalOf(g.Text, g.Time, g.Session, g.Seq))
		}
		for _, f := range p.Facts {
			out.Facts = append(out.Facts, goalOf(f.Text, f.Time, f.Session, f.Seq))
		}
	})
	return out, nil
}

func goalOf(text string, t time.Time, session string, seq events.Seq) GoalItem {
	return GoalItem{Text: text, Time: t.UTC().Format(time.RFC3339), Session: session, Seq: seq}
}

// SessionRequest is the "session" request: Op is "status" or "history".
type SessionRequest struct {
	Op      string `json:"op"`
	Project string `json:"project"`
	// Session picks the session of status (default: the project's newest).
	Session string `json:"session,omitempty"`
	// All lists the sessions of every project (history).
	All bool `json:"all,omitempty"`
}

// SessionItem is one session in a reply.
type SessionItem struct {
	ID          string   `json:"id"`
	Project     string   `json:"project"`
	Readers     []string `json:"readers"`
	Calls       int      `json:"calls"`
	Compactions int      `json:"compaction_events"`
	// Segments are the calls made before each compaction; CallsOpen the
	// calls since the last one (or the start).
	Segments  []int  `json:"calls_before_compaction"`
	CallsOpen int    `json:"calls_since_compaction"`
	First     string `json:"first_event"`
	Last      string `json:"last_event"`
	Ended     bool   `json:"ended"`
}

// SessionReply is the "session" reply.
type SessionReply struct {
	Project  string        `json:"project"`
	Goal     string        `json:"goal,omitempty"`
	Facts    int           `json:"facts"`
	Sessions []SessionItem `json:"sessions"`
	// Context is what a new session of the project is told at SessionStart.
	Context string `json:"session_start_context"`
}

func sessionOf(st *session.State) SessionItem {
	readers := make([]string, len(st.Readers))
	for i, r := range st.Readers {
		if r == "" {
			r = "main"
		}
		readers[i] = r
	}
	segs := append([]int{}, st.Segments...)
	return SessionItem{ID: st.ID, Project: st.Project, Readers: readers, Calls: st.Calls, Compactions: st.Compactions,
		Segments: segs, CallsOpen: st.CallsSinceCompaction, First: st.First.UTC().Format(time.RFC3339),
		Last: st.Last.UTC().Format(time.RFC3339), Ended: st.Ended}
}

// Session returns one session of the project (in.Op "status") or its
// sessions, newest first ("history"). Errors: an unknown op.
func (s *Service) Session(ctx context.Context, in SessionRequest) (SessionReply, error) {
	if in.Op != "status" && in.Op != "history" {
		return SessionReply{}, fmt.Errorf("session request: unknown op %q", in.Op)
	}
	out := SessionReply{Project: in.Project, Sessions: []SessionItem{}}
	s.engine.SessionView(func(ss *session.Sessions) {
		if p := ss.Project(in.Project); p != nil {
			out.Goal, out.Facts = p.Goal.Text, len(p.Facts)
		}
		var list []*session.State
		switch {
		case in.Op == "status" && in.Session != "":
			if st := ss.Get(in.Session); st != nil {
				list = []*session.State{st}
			}
		case in.All:
			list = ss.All()
		default:
			list = ss.ForProject(in.Project)
		}
		// Newest activity first.
		sort.SliceStable(list, func(i, j int) bool { return list[i].Last.After(list[j].Last) })
		if in.Op == "status" && len(list) > 1 {
			list = list[:1]
		}
		for _, st := range list {
			out.Sessions = append(out.Sessions, sessionOf(st))
		}
	})
	out.Context = s.engine.SessionContext(in.Project)
	return out, nil
}
