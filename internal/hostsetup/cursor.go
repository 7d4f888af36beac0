package hostsetup

// Cursor (IDE and CLI), from its documented hooks (docs/HOSTS.md,
// "Cursor"; not driven here: Cursor is not on npm). Cursor reads
// ~/.cursor/hooks.json (user) and <project>/.cursor/hooks.json, shaped
// {"version": 1, "hooks": {"<event>": [{"command", "matcher"?,
// "timeout"?}]}}; an event key it does not know rejects the whole file,
// so omni writes only postToolUse and preCompact. Its postToolUse can
// replace an MCP tool's output (updated_mcp_tool_output) but never a
// Shell or Read output, so the matcher selects MCP tools only ("MCP:" is
// the prefix Cursor gives their tool_name); preCompact only observes, and
// omni empties the session's shown-set there. MCP servers come from
// ~/.cursor/mcp.json and <project>/.cursor/mcp.json ("mcpServers").
//
// Cursor also runs the hooks of ~/.claude/settings.json with its own
// payloads: the handler omni writes here runs `omni-hook cursor` (or `omni
// hook cursor`), a command of its own, and omni's Claude Code handlers
// stay silent under Cursor (wire.CursorDuplicate), so no call is handled
// twice.

import "path/filepath"

// Cursor is the Cursor editor and its CLI agent.
const Cursor Host = "cursor"

// CursorArg is the argument of the hook command omni registers with
// Cursor; it tells omni's hook that Cursor's own registration called it.
const CursorArg = "cursor"

// cursorEvents are the events omni registers with Cursor, with their
// matchers and timeouts in seconds. No preToolUse: a command rewrite
// (answered in hooks/cursor.go with updated_input only, never a
// permission) joins this list when its design common to every host lands.
var cursorEvents = []struct {
	name, matcher string
	timeout       int
}{{"postToolUse", "^MCP:", 30}, {"preCompact", "", 10}}

// cursorHandler is the handler omni writes for one event.
func cursorHandler(r hookCmd, matcher string, timeout int) omap {
	cmd, _ := r.hook("hook", CursorArg)
	h := omap{{"command", cmd}}
	if matcher != "" {
		h = append(h, kv{"matcher", matcher})
	}
	return append(h, kv{"timeout", timeout})
}

func init() {
	AllHosts = append(AllHosts, Cursor)
	hostNames[Cursor] = "Cursor"
	hostTiers[Cursor] = "MCP-tools"
	specs[Cursor] = hostSpec{
		dirs: func(o Options) []string {
			if o.Project != "" {
				return []string{filepath.Join(o.Project, ".cursor")}
			}
			return []string{filepath.Join(o.Home, ".cursor")}
		},
		paths: func(o Options) (string, string) {
			dir := filepath.Join(o.Home, ".cursor")
			if o.Project != "" {
				dir = filepath.Join(o.Project, ".cursor")
			}
			return filepath.Join(dir, "hooks.json"), filepath.Join(dir, "mcp.json")
		},
		hooks: func(o Options, path string) []part {
			if !hookCmdFor(o, Cursor).runnable() {
				return nil // left out, and said (leftOutNotes)
			}
			var hs []flatHook
			for _, e := range cursorEvents {
				hs = append(hs, flatHook{e.name, cursorHandler(hookCmdFor(o, Cursor), e.matcher, e.timeout)})
			}
			omni := o.Omni
			return []part{{"hooks", path, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyFlatHooks(src, hs, "command", omap{{"version", 1}}, omni, install)
			})}}
		},
		mcp: func(o Options, path string) []part {
			omni := o.Omni
			v := omap{{"command", omni}, {"args", []string{"mcp"}}}
			return []part{{"mcp", path, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})}}
		},
		notes: func(o Options) []string {
			if o.MCPOnly {
				return nil
			}
			return []string{"Cursor cannot replace the output of its Shell and Read tools: omni shortens MCP tools' outputs there (updated_mcp_tool_output) and empties the session's shown-set at preCompact; Cursor loads project hooks only in a trusted workspace"}
		},
	}
}
