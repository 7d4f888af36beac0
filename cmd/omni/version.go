package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon/wire"
)

// versionReport is `omni version --json`.
type versionReport struct {
	// Version is the release version (set with -ldflags "-X main.version=...").
	Version string `json:"version"`
	// Build is the build identity daemons and clients compare
	// (wire.BuildID): "rev:<VCS revision>" for a clean checkout, else
	// "exe:<SHA-256 prefix of the executable>".
	Build string `json:"build"`
	wire.BuildInfo
	// Protocol is the daemon protocol this binary speaks.
	Protocol int `json:"protocol"`
}

// fullVersion is the version with its build, as --version and doctor
// print it ("0.1.0-dev+rev:0123abcd…"): two builds never share it.
func fullVersion() string { return version + "+" + wire.BuildID() }

func newVersionCmd(s streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print this binary's version and build",
		Long: `Prints the version and the build identity: the VCS revision of a clean
checkout ("rev:..."), or, when the binary records none (built with
-buildvcs=false, as CI does) or was built from a modified work tree, a hash
of the executable ("exe:..."). A daemon of another build is replaced at the
next call, and 'omni doctor' reports one.

Exit codes: 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep := versionReport{Version: version, Build: wire.BuildID(), BuildInfo: wire.ReadBuild(), Protocol: wire.Protocol}
			if asJSON {
				return writeJSON(s.Out, rep)
			}
			fmt.Fprintf(s.Out, "omni %s\nbuild %s\n", version, rep.Build)
			var parts []string
			if rep.Revision != "" {
				rev := "revision " + rep.Revision
				if rep.Modified {
					rev += " (modified)"
				}
				parts = append(parts, rev)
			}
			if rep.Version != "" {
				parts = append(parts, "module "+rep.Module+" "+rep.BuildInfo.Version)
			}
			parts = append(parts, rep.GoVersion, fmt.Sprintf("protocol %d", wire.Protocol))
			fmt.Fprintln(s.Out, strings.Join(parts, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
