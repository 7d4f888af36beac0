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
whose command is a test or build runner in a strict grammar (an optional
'cd DIR &&', then the runner and its arguments as plain words: no quote,
escape, expansion, redirection, pipe or other operator) it prints
{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{...}}}
with every original tool_input key and the command rewritten as

  set -o pipefail; COMMAND 2>&1 | OMNI pipe --host claude-code --session S [--agent A] --timeout-ms T --command 'RUNNER'

COMMAND is the agent's text, untouched: Claude Code's own shell runs it
with its shell set-up, cwd, timeout and stdin, and its own permission check
judges every part of the rewritten text. The reply never carries a
permission decision. 'omni pipe' reads the runner's output (stdout and
stderr in the order written) and prints it as the reader should read it; a
failing run is distilled to its failure lines, tally and a handle.

It is left alone (prints nothing): a background call, plan mode, a command
outside the grammar, and any call where the host would not let the added
parts run as the original would: a deny or ask rule that could match
'set -o pipefail' or the filter, and outside bypassPermissions mode a
missing allow rule for either ('omni init --claude' writes both:
Bash(set -o pipefail) and Bash(OMNI pipe:*)). A settings file it cannot
parse stops the rewrite. OMNI_PRETOOL_REWRITE=0 turns it off without
unregistering. When the thin hook client omni-hook sits beside omni,
'omni init' registers 'omni-hook pretool' instead: the same answer,
without starting this binary on every Bash call.

Exit codes: always 0; on any problem it prints nothing and the host runs
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
			if reply := rewrite.Reply(stdin, rewrite.PreTool{Omni: self, Home: omniHome()}); reply != nil {
				_, _ = s.Out.Write(reply)
			}
			return nil
		},
	}
	return cmd
}
