package main

// omni pretool: the opt-in PreToolUse rewrite.

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
)

func newPretoolCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "pretool",
		Short: "Claude Code PreToolUse hook: run plain Bash commands through omni exec (opt-in)",
		Long: `Reads one Claude Code PreToolUse payload on stdin. For a Bash call whose
command is a plain command of a known program (git, go, cargo, npm, pytest,
make, docker, kubectl, ls, cat, grep, ...; no pipe, redirection, list,
background job, substitution, newline, leading assignment or cd) it prints
{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{...}}}
with every original tool_input key and the command wrapped in
'omni exec --session S [--agent A] -- CMD'. Otherwise it prints nothing.

It is registered only by 'omni init --claude --rewrite'. It never sends a
permissionDecision: the user's permission rules decide, and they see the
rewritten command. Claude Code rewrites output in PostToolUse anyway, so this
is rarely needed; OMNI_PRETOOL_REWRITE=0 turns it off without unregistering.

Exit codes: always 0; on any problem it prints nothing and the host runs
the command as written.`,
		Example: `  echo '{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"go test ./..."}}' | omni pretool`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("OMNI_PRETOOL_REWRITE") == "0" {
				return nil
			}
			stdin, err := io.ReadAll(io.LimitReader(s.In, hooks.MaxInput+1))
			if err != nil || len(stdin) > hooks.MaxInput {
				return nil
			}
			self, err := os.Executable()
			if err != nil {
				return nil
			}
			if reply := hooks.PreToolRewrite(stdin, self); reply != nil {
				_, _ = s.Out.Write(reply)
			}
			return nil
		},
	}
}
