package hostsetup

// Factory Droid (npm @factory/cli-linux-x64 0.225.2, driven by the e2e
// suite's TestDroid; docs/HOSTS.md "Factory Droid"). Droid's hooks take
// Claude Code's shape, but its PostToolUse cannot replace a tool's output:
// the hook's reply may stop the run, add an additionalContext message the
// model reads besides the output, or show the user a message; the tool
// result itself is kept. Its PreToolUse may rewrite an Execute command
// (updatedInput), but Droid then drops the model's risk level and judges
// the rewritten command as high risk, so each rewrite would ask the user
// (or end a droid exec below --auto high). So omni registers no hook with
// Droid. What omni init --droid writes is the MCP server, with omni_run
// offered, in ~/.factory/mcp.json (--project: .factory/mcp.json, which a
// team commits). Droid names no session to its MCP servers, so omni_run
// runs there without a reader: it redacts and distils as omni exec does but
// never folds a repeat; the registration pins the session variables empty
// so that none inherited from another host's shell names one.

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
			// The session variables are pinned empty: a droid started
			// from another host's shell (a Claude Code session running
			// droid exec, a user's OMNI_SESSION) passes them on, and
			// omni_run would then claim lines shown to a reader that
			// never read them.
			v := omap{{"type", "stdio"}, {"command", omni}, {"args", []string{"mcp"}},
				{"env", omap{{"OMNI_MCP_TOOLS", "omni_run"}, {"OMNI_SESSION", ""}, {"CLAUDE_CODE_SESSION_ID", ""}}}}
			return []part{{"mcp", path, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})}}
		},
		notes: func(o Options) []string {
			return []string{"Droid's PostToolUse cannot replace a tool's output, so omni registers no hook with it; the omni_run MCP tool gives its model a command's whole output, redacted and distilled, but never folds a repeat (Droid names no session to MCP servers), where Droid's own Execute keeps a long output's first and last 30 lines; restart droid to load the MCP server"}
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
