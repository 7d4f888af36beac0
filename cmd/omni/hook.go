package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// hookDeadline bounds one hook invocation end to end; past it the hook
// prints nothing and the host keeps its raw output (fail open).
const hookDeadline = 4 * time.Second

func newHookCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "hook [EVENT]",
		Short: "Handle one Claude Code hook payload on stdin",
		Long: `Reads one Claude Code hook payload (JSON) on stdin and dispatches on its
hook_event_name (Claude Code; Codex, Gemini CLI and OpenCode payloads are
recognised and answered in their own shapes). PostToolUse for Bash, Read,
Grep, Glob and WebFetch: when the text changed (lines this reader was already
shown folded; for Bash also redaction, a distiller, collapse or the final
cut), prints {"hookSpecificOutput":{"hookEventName":"PostToolUse",
"updatedToolOutput":...}} echoing tool_response with only the text changed;
otherwise prints nothing. PostToolUseFailure is recorded, never answered.
PreCompact, PostCompact and SessionStart (compact, clear) empty the session's
shown-sets; SessionStart may answer with additionalContext (the project's
pinned goal, remembered facts, hot files, last active error). The optional
EVENT argument is ignored (the payload decides), except 'cursor', which
omni init --cursor writes: Cursor also runs the hooks of
~/.claude/settings.json, and a Cursor payload reaching a hook without it
(CURSOR_VERSION set) is answered with nothing, so no call is handled twice.

Exit codes: always 0. On any error, timeout or panic it prints nothing, so
the host keeps its own output, and writes one line to $OMNI_HOME/omni.log.`,
		Example: `  echo '{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash",
        "tool_input":{"command":"ls"},"tool_response":{"stdout":"a\n","stderr":"","interrupted":false}}' | omni hook`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runHook(s, len(args) == 1 && args[0] == wire.CursorArg)
			return nil
		},
	}
}

// runHook never fails: every problem is logged and answered with silence.
func runHook(s streams, fromCursorEntry bool) {
	home := omniHome()
	logf := homeLogf(home)
	defer func() {
		if p := recover(); p != nil {
			logf("hook: panic: %v", p)
		}
	}()
	if os.Getenv("OMNI_REPORT_RSS") != "" {
		// omni bench --latency reads the hook's own peak RSS here: a
		// child's ru_maxrss on Linux starts at its spawner's.
		defer func() { fmt.Fprintf(s.Err, "omni: peak RSS %d KiB\n", bench.PeakRSS(os.Getpid())) }()
	}
	// The request is one flags byte and the payload, read straight into
	// one buffer (no second copy of a payload of up to 16 MiB).
	flags := byte(0)
	if os.Getenv("OMNI_PASSTHROUGH") != "" {
		flags |= daemon.HookPassthrough
	}
	var buf bytes.Buffer
	buf.WriteByte(flags)
	if _, err := buf.ReadFrom(io.LimitReader(s.In, hooks.MaxInput+1)); err != nil {
		logf("hook: read stdin: %v", err)
		return
	}
	req := buf.Bytes()
	if len(req) == 1 {
		logf("hook: empty stdin")
		return
	}
	if len(req)-1 > hooks.MaxInput {
		logf("hook: stdin over %d bytes, left to the host", hooks.MaxInput)
		return
	}
	if wire.CursorDuplicate(fromCursorEntry, req[1:]) {
		return // omni's Claude Code hook run by Cursor: its own entry answers
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookDeadline)
	defer cancel()
	reply, err := newClient().Hook(ctx, req)
	if err != nil {
		logf("hook: %v", err)
		return
	}
	if ctx.Err() != nil {
		logf("hook: deadline passed")
		return
	}
	s.Out.Write(reply)
}
