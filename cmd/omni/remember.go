package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
)

func newRememberCmd(s streams) *cobra.Command {
	var f projectFlags
	cmd := &cobra.Command{
		Use:   "remember FACT...",
		Short: "Remember a fact about this project for later sessions",
		Long: `Records FACT (the arguments, joined by spaces) for the project (the
repository holding the working directory, or --project) as a Remembered
event. New sessions of the project are told the newest facts in their
SessionStart context; omni goal show lists them all.

Exit codes: 0 recorded; 2 an empty or too long fact (over 1000 bytes), or
the store could not be reached.`,
		Example: `  omni remember 'integration tests need OMNI_NO_DAEMON=1'`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return goalCall(s, &f, "remember", strings.Join(args, " "), func(w io.Writer, r daemon.GoalReply) {
				fmt.Fprintf(w, "remembered for %s (%s in all)\n", r.Project, statsreport.Plural(len(r.Facts), "fact"))
			})
		},
	}
	f.add(cmd, "the session recorded with the event (default $OMNI_SESSION)", true)
	return cmd
}
