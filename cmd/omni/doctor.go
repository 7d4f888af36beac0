package main

// omni doctor: is omni installed, reachable and registered where each host
// reads it? One line per problem, each saying how to fix it (the checks are
// internal/doctor's).

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/doctor"
	"github.com/omnictx/omni/internal/hostsetup"
)

func newDoctorCmd(s streams) *cobra.Command {
	var fix, asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--fix] [--json]",
		Short: "Check the binary, the store, the daemon and every host's registration",
		Long: `Checks, and prints one line each:

  - the omni binary on $PATH and its version (hosts run it by path; an older
    omni first on $PATH is a problem);
  - the store under $OMNI_HOME opens under its lock and the daemon answers
    (unless OMNI_NO_DAEMON is set), and runs this version;
  - for each host omni init sets up: whether omni's hooks
    (or plugin) and MCP server are registered where the host reads them
    (user and project files), complete, not duplicated, and naming a binary
    that exists; and the tier that gives: Full (the host applies omni's
    rewrite), Full-text-only (Codex: the rewrite arrives as plain text),
    Plugin (OpenCode and Cline, through omni's plugin), MCP-only (retrieve and
    explain only, nothing shortened);
  - the last hook errors in $OMNI_HOME/omni.log.

Every problem is one line saying how to fix it. --fix re-registers hosts
whose registration is stale, incomplete or duplicated (as 'omni init' would)
and stops a daemon of another version; then it checks again.

Exit codes: 0 nothing wrong; 1 at least one problem (listed); 2 usage error.`,
		Example: `  omni doctor
  omni doctor --fix
  omni doctor --json | jq .hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := hostsetup.DefaultOptions()
			if err != nil {
				return failErr(errProblems, "omni doctor: "+err.Error())
			}
			rep := doctor.Run(doctorConfig(o))
			if fix && len(rep.Problems) > 0 {
				fixed := doctor.Fix(doctorConfig(o), rep)
				rep = doctor.Run(doctorConfig(o))
				rep.Fixed = fixed
			}
			if asJSON {
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(s.Out, string(b))
			} else {
				doctor.Print(s.Out, rep)
			}
			if len(rep.Problems) > 0 {
				return failErr(errProblems, "")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fix, "fix", false, "repair what can be repaired (stale registrations, a daemon of another version), then check again")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// doctorConfig is the doctor's view of this process: $OMNI_HOME, this
// build (fullVersion, which tests override), its daemon client, the
// working directory.
func doctorConfig(o hostsetup.Options) doctor.Config {
	wd, _ := os.Getwd()
	return doctor.Config{Setup: o, Home: omniHome(), Version: fullVersion(), Client: newClient,
		WorkDir: wd, StopTimeout: daemonStopTimeout}
}
