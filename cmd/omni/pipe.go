package main

// Pipe mode: `CMD | omni --session S`, the root command with no
// subcommand and stdin not a terminal.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
)

func runPipe(ctx context.Context, s streams, session, agent string, keepSecrets bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := io.ReadAll(io.LimitReader(s.In, hooks.MaxInput+1))
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	text := string(b)
	out := text
	if len(b) <= hooks.MaxInput {
		out = deliverCall(ctx, hooks.CallInput{Door: events.DoorPipe, Text: text, Session: session, Agent: agent,
			Cwd: cwd(), Passthrough: os.Getenv("OMNI_PASSTHROUGH") != "", KeepSecrets: keepSecrets})
	}
	_, err = io.WriteString(s.Out, out)
	if len(b) > hooks.MaxInput {
		_, err = io.Copy(s.Out, s.In)
	}
	return err
}
