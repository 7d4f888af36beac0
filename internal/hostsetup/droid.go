package hostsetup

// Factory Droid (npm @factory/cli; its hooks and MCP files read from the
// 0.225.2 linux-x64 binary and its documentation, docs/HOSTS.md "Factory
// Droid"). Droid's hooks take Claude Code's shape, but its PostToolUse
// cannot replace a tool's output: the hook's reply may stop the run, add
// an additionalContext message the model reads besides the output, or show
// the user a message; the tool result itself is kept. So omni registers no
// hook with Droid: the only way to shorten what its model reads is the
// PreToolUse rewrite of an Execute command (updatedInput), which waits for
// the rewrite's design common to every host. What omni init --droid
// writes is the MCP server, with omni_run offered, in
// ~/.factory/mcp.json (--project: .factory/mcp.json, which a team
// commits): the model may run a command through omni's pipeline and
// retrieve a marker's bytes.

import "path/filepath"

// Droid is Factory's Droid CLI.
const Droid Host = "droid"

func init() {
	AllHosts = append(AllHosts, Droid)
	hostNames[Droid] = "Droid"
	hostTiers[Droid] = "MCP-only"
	specs[Droid] = hostSpec{
		dirs: func(o Options) []string { return []string{droidDir(o)} },
		paths: func(o Options) (string, string) {
			return "", filepath.Join(droidDir(o), "mcp.json")
		},
		mcp: func(o Options, path string) []part {
			omni := o.Omni
			v := omap{{"type", "stdio"}, {"command", omni}, {"args", []string{"mcp"}}, {"env", omap{{"OMNI_MCP_TOOLS", "omni_run"}}}}
			return []part{{"mcp", path, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})}}
		},
		notes: func(o Options) []string {
			return []string{"Droid's PostToolUse cannot replace a tool's output, so omni registers no hook with it: its model reads shorter output only through the omni_run MCP tool (ask it to run commands through omni_run); restart droid to load the MCP server"}
		},
	}
}

// droidDir is ~/.factory, or the project's .factory.
func droidDir(o Options) string {
	if o.Project != "" {
		return filepath.Join(o.Project, ".factory")
	}
	return filepath.Join(o.Home, ".factory")
}
