package main

// omni mcp: the command line of internal/mcpserver, and the store it reads
// through the daemon.

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/mcpserver"
)

func newMCPCmd(s streams) *cobra.Command {
	var wholeHome bool
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve omni's MCP tools over stdio",
		Long: `Runs an MCP server on stdin/stdout (newline-delimited JSON-RPC; logs go to
stderr) until stdin closes. Tools:

  omni_retrieve         the exact bytes behind a marker's handle (the reserved
                        example 0000000000000000 is refused)
  omni_explain_savings  what omni did to the last n tool outputs: bytes in and
                        out, markers and their handles, or why nothing changed

Both are scoped to the project of the directory the host starts the server
in (its repository's top level): omni_retrieve knows only the handles
archived in that project, and omni_explain_savings lists only its calls, and
only the host's session's when the host names one ($OMNI_SESSION, else
$CLAUDE_CODE_SESSION_ID). --whole-home lifts the scope: every project and
session of the home.

Only these two are advertised, because every tool definition is sent with
every request. OMNI_MCP_TOOLS names more (comma-separated, or "all"):

  omni_run              run a command through omni's pipeline (as omni exec)
                        and return "Exit code N" and what the model should
                        read; for hosts whose hooks cannot rewrite output. Its
                        reader is $OMNI_SESSION, else $CLAUDE_CODE_SESSION_ID.
  omni_stats            savings totals

Hosts start it themselves once registered ('omni init'). A handle's bytes
that are not valid UTF-8 come back as a base64 blob resource.

Exit codes: 0 when stdin closes; 1 on a transport error.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | omni mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			opt := mcpserver.OptionsFromEnv(os.Getenv)
			store := mcpStore{home: omniHome()}
			if !wholeHome {
				store.dir, _ = os.Getwd()
				store.session = opt.Run.Session
			}
			srv := mcpserver.New(store, version, opt)
			d := mcpserver.NewDrain(s.In, s.Out, mcpserver.DrainWait)
			t := &mcp.IOTransport{Reader: d, Writer: d}
			if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !isEOF(err) {
				return failErr(errProblems, "omni mcp: "+err.Error())
			}
			return nil
		},
	}
	c.Flags().BoolVar(&wholeHome, "whole-home", false, "serve every project and session of the home, not only this directory's project")
	return c
}

// mcpStore is the MCP server's Store: the daemon client of home, which
// opens the store in-process when no daemon can serve. dir, when set,
// scopes retrieve and recent to its project; session, when set, scopes
// recent to that session.
type mcpStore struct{ home, dir, session string }

func (m mcpStore) client() *daemon.Client { return daemon.NewClient(configOf(m.home)) }

// Retrieve asks for the archived bytes of h; the error wraps
// daemon.ErrUnknownHandle (hooks.ErrUnknownHandle) when nothing is archived
// under h, as its code crossed the wire.
func (m mcpStore) Retrieve(ctx context.Context, h string) ([]byte, error) {
	return m.client().Retrieve(ctx, daemon.RetrieveRequest{Handle: h, Dir: m.dir})
}

// Recent asks for the last n calls.
func (m mcpStore) Recent(ctx context.Context, n int) ([]hooks.Recent, error) {
	return m.client().Recent(ctx, daemon.RecentRequest{N: n, Dir: m.dir, Session: m.session})
}

// Stats asks for the savings totals and returns them as JSON.
func (m mcpStore) Stats(ctx context.Context) ([]byte, error) {
	rep, err := m.client().Stats(ctx, daemon.StatsRequest{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(rep)
}

// Call runs an omni_run output through the pipeline.
func (m mcpStore) Call(ctx context.Context, in hooks.CallInput) (string, error) {
	r, err := m.client().Call(ctx, in)
	return r.Delivered, err
}

func isEOF(err error) bool {
	return err == io.EOF || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "closed")
}
