package main

// omni pretool: the PreToolUse rewrite (rewrite.Reply).

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/rewrite"
)

func newPretoolCmd(s streams) *cobra.Command {
	var form string
	cmd := &cobra.Command{
		Use:   "pretool [--form narrow|all]",
		Short: "Claude Code PreToolUse hook: run Bash commands through omni exec, within the user's permission rules",
		Long: `Reads one Claude Code PreToolUse payload on stdin. For a foreground Bash call
the form takes (narrow: test and build runners such as go test, pytest, cargo
test, npm test, make, optionally after 'cd DIR &&', no pipe, no output to a
file; all: any plain foreground command) it prints
{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{...}}}
with every original tool_input key and the command wrapped in
'omni exec --session S [--agent A] --host claude-code --timeout-ms T -- CMD',
so a failing run is distilled too. Otherwise it prints nothing.

Claude Code matches its permission rules against the rewritten command only,
so pretool reads the settings files the host merges (managed settings,
~/.claude/settings.json, the project's .claude/settings.json and
settings.local.json) and never rewrites a command a deny or ask rule could
match; outside bypassPermissions mode it rewrites only a command an allow
rule permits, and then answers permissionDecision "allow". A settings file it
cannot parse stops every rewrite. run_in_background calls are left alone.
OMNI_PRETOOL_REWRITE=0 turns it off without unregistering. When the thin
hook client omni-hook sits beside omni, 'omni init' registers
'omni-hook pretool' instead: the same decision, without starting this
binary on every Bash call.

Exit codes: always 0; on any problem it prints nothing and the host runs
the command as written.`,
		Example: `  echo '{"hook_event_name":"PreToolUse","session_id":"s","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"go test ./..."}}' | omni pretool`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, ok := rewrite.ParseForm(form)
			if os.Getenv("OMNI_PRETOOL_REWRITE") == "0" || !ok {
				return nil
			}
			stdin, err := io.ReadAll(io.LimitReader(s.In, hooks.MaxInput+1))
			if err != nil || len(stdin) > hooks.MaxInput || wire.CursorDuplicate(false, stdin) {
				return nil // Cursor runs Claude Code's hooks too: never a permission reply there
			}
			self, err := os.Executable()
			if err != nil {
				return nil
			}
			if reply := rewrite.Reply(stdin, rewrite.PreTool{Omni: self, Form: f}); reply != nil {
				_, _ = s.Out.Write(reply)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&form, "form", string(rewrite.Narrow), "which commands to rewrite: narrow (test and build runners) or all")
	return cmd
}
