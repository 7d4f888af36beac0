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
	cmd := &cobra.Command{
		Use:   "pretool",
		Short: "Claude Code PreToolUse hook: pipe a test or build run's output through omni, the host still running and judging the command",
		Long: `Reads one Claude Code PreToolUse payload on stdin. For a foreground Bash call
whose command is in the rewrite's grammar (simple commands of plain or
quoted words joined by &&, || or ;, the last one a test or build runner
after && or ;, no builtin but cd, true, false, echo, printf, test, [, pwd
and :; no pipe, expansion, redirection but 2>&1, group or newline) it prints
{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{...}}}
with every original tool_input key and 'set -o pipefail' put just before the
runner and the filter behind it:

  cd web && npm test   ->   cd web && set -o pipefail && npm test 2>&1 | OMNI pipe --call TOKEN

Every word the agent wrote stays: Claude Code's own shell runs it with its
shell set-up, cwd, timeout and stdin, and its own permission check judges
every part of the rewritten text. The reply never carries a permission
decision. TOKEN names a one-use ticket written under $OMNI_HOME/pretool:
the reader, the runner, the host's timeout ('omni pipe --help').

It is left alone (prints nothing): a background call, plan mode, a command
outside the grammar, and any call whose judgment the rewrite could change:
a deny or ask rule that could match the line, one of its simple commands,
'set -o pipefail' or the filter; an allow rule naming a whole compound
line; outside bypassPermissions mode a missing allow rule for either added
part ('omni init --claude' writes both: Bash(set -o pipefail) and
Bash(OMNI pipe:*)). A settings file it cannot parse stops the rewrite.
Reads BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, CLAUDE_CONFIG_DIR,
CLAUDE_PROJECT_DIR and HOME as Claude Code does; OMNI_PRETOOL_REWRITE=0
turns it off without unregistering. When the thin hook client omni-hook
sits beside omni, 'omni init' registers 'omni-hook pretool' instead: the
same answer, without starting this binary on every Bash call.

Exit codes: always 0; on any problem, or no answer within 4 s (a settings
file that does not answer), it prints nothing and the host runs
the command as written.`,
		Example: `  echo '{"hook_event_name":"PreToolUse","session_id":"s","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"go test ./..."}}' | omni pretool`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("OMNI_PRETOOL_REWRITE") == "0" {
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
			if reply := rewrite.ReplyWithin(stdin, rewrite.PreTool{Omni: self, Home: omniHome()}, hookDeadline); reply != nil {
				_, _ = s.Out.Write(reply)
			}
			return nil
		},
	}
	return cmd
}
