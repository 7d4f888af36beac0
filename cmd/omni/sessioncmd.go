package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/spf13/cobra"
)

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
				return usageErr("omni session: give --status or --history, not both")
			}
			op := "status"
			if history || all {
				op = "history"
			}
			project, err := f.resolve()
			if err != nil {
				return failErr(err, "omni session: "+errMsg(err))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess := ""
			if cmd.Flags().Changed("session") || op == "status" {
				sess = f.session
			}
			r, err := newClient().Session(ctx, daemon.SessionRequest{Op: op, Project: project, Session: sess, All: all})
			if err != nil {
				return failErr(err, "omni session: "+errMsg(err))
			}
			if f.asJSON {
				return writeJSON(s.Out, r)
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

func renderSession(w io.Writer, r daemon.SessionReply, op string) {
	fmt.Fprintf(w, "project %s", events.Printable(r.Project))
	if r.Goal != "" {
		fmt.Fprintf(w, " · goal: %s", r.Goal)
	}
	fmt.Fprintf(w, " · %s remembered\n", statsreport.Plural(r.Facts, "fact"))
	if len(r.Sessions) == 0 {
		fmt.Fprintln(w, "no session recorded")
	}
	if op == "history" {
		fmt.Fprintf(w, "%-38s %-20s %-20s %7s %12s  %s\n", "session", "first", "last", "calls", "compactions", "calls before each compaction")
		for _, st := range r.Sessions {
			segs := make([]string, len(st.Segments))
			for i, n := range st.Segments {
				segs[i] = statsreport.Num(n)
			}
			end := ""
			if st.Ended {
				end = " (ended)"
			}
			line := fmt.Sprintf("%-38s %-20s %-20s %7s %12s  %s%s", statsreport.ClipName(st.ID, 38), st.First, st.Last, statsreport.Num(st.Calls),
				statsreport.Num(len(st.Segments)), strings.Join(segs, " "), end)
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
		return
	}
	for _, st := range r.Sessions {
		state := "active"
		if st.Ended {
			state = "ended"
		}
		fmt.Fprintf(w, "session %s (%s)\n", events.Printable(st.ID), state)
		fmt.Fprintf(w, "  %s … %s\n", st.First, st.Last)
		fmt.Fprintf(w, "  readers: %s\n", events.Printable(strings.Join(st.Readers, ", ")))
		fmt.Fprintf(w, "  calls %s; compactions %s", statsreport.Num(st.Calls), statsreport.Num(len(st.Segments)))
		if len(st.Segments) > 0 {
			segs := make([]string, len(st.Segments))
			for i, n := range st.Segments {
				segs[i] = statsreport.Num(n)
			}
			fmt.Fprintf(w, " (calls before each: %s)", strings.Join(segs, ", "))
		}
		fmt.Fprintf(w, "; calls since the last compaction %s\n", statsreport.Num(st.CallsOpen))
	}
	if r.Context != "" {
		fmt.Fprintln(w, "a new session of this project is told:")
		for _, l := range strings.Split(r.Context, "\n") {
			fmt.Fprintln(w, "  | "+l)
		}
	}
}
