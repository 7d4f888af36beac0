package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
)

// projectFlags are the flags every project-scoped command shares.
type projectFlags struct {
	project string
	session string
	agent   string
	asJSON  bool
}

func (f *projectFlags) add(cmd *cobra.Command, sessionUsage string, withAgent bool) {
	cmd.Flags().StringVar(&f.project, "project", "", "the project directory (default: the repository holding the working directory)")
	cmd.Flags().StringVar(&f.session, "session", os.Getenv("OMNI_SESSION"), sessionUsage)
	if withAgent {
		cmd.Flags().StringVar(&f.agent, "agent", "", "the agent id within the session")
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the reply as JSON")
}

// resolve returns the project the way hooks record it: the repository top
// level of the directory.
func (f *projectFlags) resolve() (string, error) {
	dir := f.project
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	return projectOf(dir), nil
}

// goalCall sends one "goal" request and prints the reply.
func goalCall(s streams, f *projectFlags, op, text string, render func(io.Writer, daemon.GoalReply)) error {
	project, err := f.resolve()
	if err != nil {
		return failErr(err, "omni goal: "+errMsg(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := newClient().Goal(ctx, daemon.GoalRequest{Op: op, Project: project, Session: f.session, Agent: f.agent, Text: text})
	if err != nil {
		return failErr(err, "omni: "+err.Error())
	}
	if f.asJSON {
		return writeJSON(s.Out, r)
	}
	render(s.Out, r)
	return nil
}

func newGoalCmd(s streams) *cobra.Command {
	var f projectFlags
	var history bool
	cmd := &cobra.Command{
		Use:   "goal set TEXT... | show | clear",
		Short: "Pin, show or clear the goal of this project",
		Long: `omni goal set TEXT pins TEXT as the goal of the project (the repository
holding the working directory, or --project). A new session of the project
is told the goal, the remembered facts, the files read most and the last
failure not yet followed by a success (SessionStart additionalContext, at
most 800 characters). omni goal show prints the goal and the remembered
facts (--history: every change); omni goal clear removes the goal.

Each change is a GoalSet event in the log; nothing else stores it.

Exit codes: 0 done; 2 a bad argument, or the store could not be reached.`,
		Example: `  omni goal set "make omni stats match the bench exactly"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			op := args[0]
			switch op {
			case "set":
				if len(args) < 2 {
					return usageErr("omni goal set: give the goal, e.g. omni goal set \"ship the stats view\"")
				}
				return goalCall(s, &f, "set", strings.Join(args[1:], " "), func(w io.Writer, r daemon.GoalReply) {
					fmt.Fprintf(w, "goal of %s: %s\n", r.Project, r.Goal.Text)
				})
			case "clear", "show":
				if len(args) > 1 {
					return usageErr("omni goal %s: takes no argument", op)
				}
				return goalCall(s, &f, op, "", func(w io.Writer, r daemon.GoalReply) { renderGoal(w, r, op == "show" && history) })
			}
			return usageErr("omni goal: %q: want set, show or clear", op)
		},
	}
	f.add(cmd, "the session recorded with the event (default $OMNI_SESSION)", true)
	cmd.Flags().BoolVar(&history, "history", false, "with show: every goal change, oldest first")
	return cmd
}

func renderGoal(w io.Writer, r daemon.GoalReply, history bool) {
	if r.Goal != nil {
		fmt.Fprintf(w, "goal of %s: %s\n  (set %s", r.Project, r.Goal.Text, r.Goal.Time)
		if r.Goal.Session != "" {
			fmt.Fprintf(w, " in session %s", r.Goal.Session)
		}
		fmt.Fprintf(w, ", seq %d)\n", r.Goal.Seq)
	} else {
		fmt.Fprintf(w, "no goal for %s\n", r.Project)
	}
	if history {
		fmt.Fprintln(w, "history:")
		for _, g := range r.History {
			text := g.Text
			if text == "" {
				text = "(cleared)"
			}
			fmt.Fprintf(w, "  %s  seq %-6d %s\n", g.Time, g.Seq, text)
		}
	}
	if len(r.Facts) > 0 {
		fmt.Fprintln(w, "remembered:")
		for _, f := range r.Facts {
			fmt.Fprintf(w, "  %s  %s\n", f.Time, f.Text)
		}
	}
}
