package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/projections/session"
)

// sessionReq is the "session" request: Op is "status" or "history".
type sessionReq struct {
	Op      string `json:"op"`
	Project string `json:"project"`
	// Session picks the session of status (default: the project's newest).
	Session string `json:"session,omitempty"`
	// All lists the sessions of every project (history).
	All bool `json:"all,omitempty"`
}

// sessionJSON is one session in a reply.
type sessionJSON struct {
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

// sessionResp is the "session" reply.
type sessionResp struct {
	Project  string        `json:"project"`
	Goal     string        `json:"goal,omitempty"`
	Facts    int           `json:"facts"`
	Sessions []sessionJSON `json:"sessions"`
	// Context is what a new session of the project is told at SessionStart.
	Context string `json:"session_start_context"`
}

func sessionOf(st *session.State) sessionJSON {
	readers := make([]string, len(st.Readers))
	for i, r := range st.Readers {
		if r == "" {
			r = "main"
		}
		readers[i] = r
	}
	segs := append([]int{}, st.Segments...)
	return sessionJSON{ID: st.ID, Project: st.Project, Readers: readers, Calls: st.Calls, Compactions: st.Compactions,
		Segments: segs, CallsOpen: st.CallsSinceCompaction, First: st.First.UTC().Format(time.RFC3339),
		Last: st.Last.UTC().Format(time.RFC3339), Ended: st.Ended}
}

// sessionMethod serves "session".
func (s *service) sessionMethod(ctx context.Context, req []byte) ([]byte, error) {
	var in sessionReq
	if err := json.Unmarshal(req, &in); err != nil {
		return nil, fmt.Errorf("session request: %w", err)
	}
	if in.Op != "status" && in.Op != "history" {
		return nil, fmt.Errorf("session request: unknown op %q", in.Op)
	}
	out := sessionResp{Project: in.Project, Sessions: []sessionJSON{}}
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
	return json.Marshal(out)
}

func newSessionCmd(s streams) *cobra.Command {
	var f projectFlags
	var status, history, all bool
	cmd := &cobra.Command{
		Use:   "session [--status | --history] [--all]",
		Short: "Show this project's sessions: calls, compactions, goal",
		Long: `--status (the default) shows one session — --session ID, else the newest of
the project (the repository holding the working directory, or --project) —
with its readers, its calls, how many calls it made before each compaction,
the project's goal, and the context a new session of the project is given
at SessionStart. --history lists the project's sessions, newest first
(--all: every project's).

Everything shown is a fold over the event log.

Exit codes: 0 printed; 2 a bad flag, or the store could not be reached.`,
		Example: `  omni session --history`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if status && history {
				return &exitError{code: 2, msg: "omni session: give --status or --history, not both"}
			}
			op := "status"
			if history || all {
				op = "history"
			}
			project, err := f.resolve()
			if err != nil {
				return &exitError{code: 2, msg: "omni session: " + errMsg(err)}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess := ""
			if cmd.Flags().Changed("session") || op == "status" {
				sess = f.session
			}
			req, _ := json.Marshal(sessionReq{Op: op, Project: project, Session: sess, All: all})
			b, err := callOrLocal(ctx, omniHome(), "session", req)
			if err != nil {
				return &exitError{code: 2, msg: "omni session: " + errMsg(err)}
			}
			if f.asJSON {
				_, err := s.Out.Write(append(b, '\n'))
				return err
			}
			var r sessionResp
			if err := json.Unmarshal(b, &r); err != nil {
				return err
			}
			renderSession(s.Out, r, op)
			return nil
		},
	}
	f.add(cmd, "with --status: the session to show (default $OMNI_SESSION, else the newest)", false)
	cmd.Flags().BoolVar(&status, "status", false, "one session: the given or the newest (default)")
	cmd.Flags().BoolVar(&history, "history", false, "every session of the project, newest first")
	cmd.Flags().BoolVar(&all, "all", false, "with --history: every project")
	return cmd
}

func renderSession(w io.Writer, r sessionResp, op string) {
	fmt.Fprintf(w, "project %s", r.Project)
	if r.Goal != "" {
		fmt.Fprintf(w, " · goal: %s", r.Goal)
	}
	fmt.Fprintf(w, " · %s remembered\n", plural(r.Facts, "fact"))
	if len(r.Sessions) == 0 {
		fmt.Fprintln(w, "no session recorded")
	}
	if op == "history" {
		fmt.Fprintf(w, "%-38s %-20s %-20s %7s %12s  %s\n", "session", "first", "last", "calls", "compactions", "calls before each compaction")
		for _, st := range r.Sessions {
			segs := make([]string, len(st.Segments))
			for i, n := range st.Segments {
				segs[i] = num(n)
			}
			end := ""
			if st.Ended {
				end = " (ended)"
			}
			line := fmt.Sprintf("%-38s %-20s %-20s %7s %12s  %s%s", clipName(st.ID, 38), st.First, st.Last, num(st.Calls),
				num(len(st.Segments)), strings.Join(segs, " "), end)
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
		return
	}
	for _, st := range r.Sessions {
		state := "active"
		if st.Ended {
			state = "ended"
		}
		fmt.Fprintf(w, "session %s (%s)\n", st.ID, state)
		fmt.Fprintf(w, "  %s … %s\n", st.First, st.Last)
		fmt.Fprintf(w, "  readers: %s\n", strings.Join(st.Readers, ", "))
		fmt.Fprintf(w, "  calls %s; compactions %s", num(st.Calls), num(len(st.Segments)))
		if len(st.Segments) > 0 {
			segs := make([]string, len(st.Segments))
			for i, n := range st.Segments {
				segs[i] = num(n)
			}
			fmt.Fprintf(w, " (calls before each: %s)", strings.Join(segs, ", "))
		}
		fmt.Fprintf(w, "; calls since the last compaction %s\n", num(st.CallsOpen))
	}
	if r.Context != "" {
		fmt.Fprintln(w, "a new session of this project is told:")
		for _, l := range strings.Split(r.Context, "\n") {
			fmt.Fprintln(w, "  | "+l)
		}
	}
}
