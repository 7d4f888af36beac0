package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/mcpserver"
	"github.com/omnictx/omni/pipeline"
)

func newRetrieveCmd(s streams) *cobra.Command {
	var session, agent string
	cmd := &cobra.Command{
		Use:   "retrieve HANDLE",
		Short: "Print the exact bytes behind a marker's handle",
		Long: `Prints the archived bytes named by HANDLE (16 hex characters, as printed in an
[OMNI: ...] marker) to stdout, byte for byte, and nothing else: a one-line
frame goes to stderr only when stderr is a terminal.
Records a Retrieved event: the reader (--session/--agent, or else every reader
that was shown a marker with this handle) gets the block whole, once, the next
time it would fold.

HANDLE may also be written omni_retrieve("HANDLE") or quoted.

Exit codes: 0 printed; 1 unknown or malformed handle (not 16 hex
characters), a handle whose stored bytes a damaged
store can no longer read or 'omni forget' erased, or the reserved documentation example
0000000000000000; 2 the store could not be reached, or the home
($OMNI_HOME, default ~/.omni) does not exist.`,
		Example: `  omni retrieve 819dd12d2d605079`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h := normalizeHandle(args[0])
			if !validHandle(h) {
				return failErr(daemon.ErrBadHandle, fmt.Sprintf("omni retrieve: %q is not a handle: a handle is 16 hex characters, as printed in an [OMNI: ...] marker", args[0]))
			}
			if h == pipeline.ExampleHandle {
				return failErr(daemon.ErrReservedHandle, fmt.Sprintf("omni retrieve: %s is the documentation example, not a real handle; real handles come from markers in tool output", h))
			}
			if err := requireHome("retrieve", omniHome()); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := newClient().Retrieve(ctx, daemon.RetrieveRequest{Handle: h, Session: session, Agent: agent})
			switch {
			case err == nil:
			case errors.Is(err, daemon.ErrDamaged):
				return failErr(err, fmt.Sprintf("omni retrieve: `%s`: %s", h, errMsg(err)))
			case errors.Is(err, daemon.ErrForgotten):
				return failErr(err, fmt.Sprintf("omni retrieve: `%s`: its archived bytes were erased by 'omni forget' (they held a value forgotten since): they cannot be printed", h))
			case errors.Is(err, daemon.ErrUnknownHandle):
				why := strings.TrimSpace(strings.TrimPrefix(errMsg(err), "no archived content for this handle"))
				return failErr(err, strings.TrimSpace(fmt.Sprintf("omni retrieve: no archived content for `%s` %s", h, why)))
			case errors.Is(err, daemon.ErrBadHandle), errors.Is(err, daemon.ErrReservedHandle):
				return failErr(err, fmt.Sprintf("omni retrieve: no archived content for `%s` (%s)", h, remoteMsg(err)))
			default:
				return failErr(err, "omni retrieve: "+err.Error())
			}
			if _, err := s.Out.Write(b); err != nil {
				return err
			}
			// The frame goes to a terminal only: run through a host's Bash
			// tool, stderr is joined to stdout and the frame would be glued
			// to the block's last line (measured on Claude Code 2.1.328,
			// docs/HOSTS.md).
			if s.ErrIsTerminal {
				fmt.Fprintf(s.Err, "omni retrieve %s · %d lines · %d B\n", h, len(pipeline.SplitLines(nil, string(b))), len(b))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the reader asking (default: every reader shown this handle)")
	cmd.Flags().StringVar(&agent, "agent", "", "the asking reader's agent id")
	return cmd
}

// normalizeHandle accepts h, "h", 'h', omni_retrieve("h") and upper case.
func normalizeHandle(s string) string { return mcpserver.NormalizeHandle(s) }

func remoteMsg(err error) string {
	m := err.Error()
	if i := strings.LastIndex(m, ": "); i >= 0 && strings.Contains(m, "handle") {
		return m[i+2:]
	}
	return m
}

func validHandle(h string) bool {
	if len(h) != pipeline.HandleLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
