package main

// omni mcp: an MCP server over stdio (HOSTS.md §11) with the official Go
// SDK. Tool definitions are paid on every request of every session
// (REFERENCE.md §11.7), so two short ones are advertised by default.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/pipeline"
)

// mcpCallTimeout bounds one tool call's trip to the store.
const mcpCallTimeout = 30 * time.Second

// mcpRetrieveIn is the input of omni_retrieve.
type mcpRetrieveIn struct {
	Handle string `json:"handle" jsonschema:"16-hex handle from an [OMNI ...] marker"`
}

// mcpSavingsIn is the input of omni_explain_savings.
type mcpSavingsIn struct {
	N int `json:"n,omitempty" jsonschema:"how many recent calls (default 10, max 100)"`
}

// mcpEmpty is the input of tools that take none.
type mcpEmpty struct{}

func newMCPCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve omni's MCP tools over stdio",
		Long: `Runs an MCP server on stdin/stdout (newline-delimited JSON-RPC; logs go to
stderr) until stdin closes. Tools:

  omni_retrieve         the exact bytes behind a marker's handle (the reserved
                        example 0000000000000000 is refused)
  omni_explain_savings  what omni did to the last n tool outputs: bytes in and
                        out, markers and their handles, or why nothing changed

Only these two are advertised, because every tool definition is sent with
every request. OMNI_MCP_TOOLS=all adds omni_stats (savings totals).

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
			srv := newMCPServer(omniHome(), os.Getenv("OMNI_MCP_TOOLS") == "all")
			d := newMCPDrain(s.In, s.Out, mcpDrainWait)
			t := &mcp.IOTransport{Reader: d, Writer: d}
			if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !isEOF(err) {
				return &exitError{code: 1, msg: "omni mcp: " + err.Error()}
			}
			return nil
		},
	}
}

// mcpDrainWait bounds how long the server keeps answering after stdin ends.
const mcpDrainWait = 30 * time.Second

// mcpDrain sits between the transport and stdin/stdout and holds back the
// end of stdin until every request read so far has been answered (or wait
// has passed), so that requests piped in all get their answers: the SDK
// stops serving at the end of its input.
type mcpDrain struct {
	in   *bufio.Reader
	out  io.Writer
	wait time.Duration

	mu        sync.Mutex
	cond      *sync.Cond
	requests  int    // requests read (a method and an id)
	responses int    // responses written (an id and no method)
	pending   []byte // read but not yet returned
	partial   []byte // written, not yet a whole line
}

func newMCPDrain(in io.Reader, out io.Writer, wait time.Duration) *mcpDrain {
	d := &mcpDrain{in: bufio.NewReaderSize(in, 64<<10), out: out, wait: wait}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// rpcShape is enough of a JSON-RPC message to tell requests from responses.
type rpcShape struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (s rpcShape) hasID() bool { return len(s.ID) > 0 && string(s.ID) != "null" }

// Read returns stdin line by line, counting requests; at the end of stdin
// it waits for the outstanding answers before reporting io.EOF.
func (d *mcpDrain) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		line, err := d.in.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 && !json.Valid(t) {
			// A line that is not JSON would end the SDK's read loop and the
			// server with it: skip it (its sender gets no answer) and go on.
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			var m rpcShape
			if json.Unmarshal(line, &m) == nil && m.hasID() && m.Method != "" {
				d.mu.Lock()
				d.requests++
				d.mu.Unlock()
			}
			d.pending = line
		} else if err != nil {
			if err == io.EOF {
				d.drain()
			}
			return 0, err
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

func (d *mcpDrain) drain() {
	deadline := time.Now().Add(d.wait)
	t := time.AfterFunc(d.wait, func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer t.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.responses < d.requests && time.Now().Before(deadline) {
		d.cond.Wait()
	}
}

// Write passes the server's output on, counting responses.
func (d *mcpDrain) Write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		var m rpcShape
		if json.Unmarshal(d.partial[:i], &m) == nil && m.hasID() && m.Method == "" {
			d.responses++
		}
		d.partial = d.partial[i+1:]
	}
	d.cond.Broadcast()
	d.mu.Unlock()
	return n, err
}

// Close is a no-op: stdin and stdout belong to the process.
func (d *mcpDrain) Close() error { return nil }

func isEOF(err error) bool {
	return err == io.EOF || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "closed")
}

// newMCPServer builds the server over the store of home; all adds the tools
// beyond the default two.
func newMCPServer(home string, all bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "omni", Version: version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	mcp.AddTool(srv, &mcp.Tool{Name: "omni_retrieve", Description: "Exact original bytes behind an [OMNI ...] marker's handle."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in mcpRetrieveIn) (*mcp.CallToolResult, any, error) {
			return mcpRetrieve(ctx, home, in.Handle), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "omni_explain_savings", Description: "What omni did to the last n tool outputs: bytes, markers, handles."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in mcpSavingsIn) (*mcp.CallToolResult, any, error) {
			return mcpExplain(ctx, home, in.N), nil, nil
		})
	if all {
		mcp.AddTool(srv, &mcp.Tool{Name: "omni_stats", Description: "omni's savings totals as JSON."},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ mcpEmpty) (*mcp.CallToolResult, any, error) {
				ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
				defer cancel()
				rep, err := fetchStats(ctx, home, time.Time{})
				if err != nil {
					return mcpError("omni_stats: " + err.Error()), nil, nil
				}
				b, err := json.Marshal(rep)
				if err != nil {
					return mcpError("omni_stats: " + err.Error()), nil, nil
				}
				return mcpText(string(b)), nil, nil
			})
	}
	return srv
}

func mcpText(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func mcpError(s string) *mcp.CallToolResult {
	r := mcpText(s)
	r.IsError = true
	return r
}

// mcpRetrieve answers omni_retrieve with the archived bytes, exactly: text
// when they are UTF-8, else a base64 blob.
func mcpRetrieve(ctx context.Context, home, handle string) *mcp.CallToolResult {
	h := normalizeHandle(handle)
	if h == pipeline.ExampleHandle {
		return mcpError(h + " is the documentation example, not a real handle; real handles come from markers in tool output")
	}
	if len(h) != pipeline.HandleLen || strings.Trim(h, "0123456789abcdef") != "" {
		return mcpError(fmt.Sprintf("%q is not a handle: a handle is 16 hex characters", handle))
	}
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	b, err := mcpClient(home).Retrieve(ctx, daemon.RetrieveRequest{Handle: h})
	if err != nil {
		if errors.Is(err, daemon.ErrUnknownHandle) {
			return mcpError("no archived content for " + h)
		}
		return mcpError("omni_retrieve: " + err.Error())
	}
	if utf8.Valid(b) {
		return mcpText(string(b))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
		URI: "omni://retrieve/" + h, MIMEType: "application/octet-stream", Blob: b}}}}
}

// mcpExplain answers omni_explain_savings from the "recent" method.
func mcpExplain(ctx context.Context, home string, n int) *mcp.CallToolResult {
	if n <= 0 {
		n = 10
	}
	n = min(n, 100)
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	rs, err := mcpClient(home).Recent(ctx, daemon.RecentRequest{N: n})
	if err != nil {
		return mcpError("omni_explain_savings: " + err.Error())
	}
	return mcpText(explainRecent(rs))
}

// explainRecent renders recent calls, newest first, one paragraph each.
func explainRecent(rs []hooks.Recent) string {
	if len(rs) == 0 {
		return "omni has recorded no tool output yet."
	}
	var raw, del int
	for _, r := range rs {
		raw += r.RawBytes
		del += r.DeliveredBytes
	}
	var b strings.Builder
	fmt.Fprintf(&b, "last %d calls: %d B produced, %d B read by the model", len(rs), raw, del)
	if raw > 0 {
		fmt.Fprintf(&b, " (%.0f%% saved)", 100*float64(raw-del)/float64(raw))
	}
	b.WriteString("\n")
	for _, r := range rs {
		src := r.Source
		if len(src) > 80 {
			src = src[:77] + "..."
		}
		fmt.Fprintf(&b, "- %s %s %s %q: %d B -> %d B", r.Time, r.Reader, r.Tool, src, r.RawBytes, r.DeliveredBytes)
		switch {
		case r.Changed && r.Distiller != "":
			fmt.Fprintf(&b, ", distilled (%s)", r.Distiller)
		case r.Changed && len(r.Folds) == 0:
			b.WriteString(", shortened")
		case r.Changed:
		case r.Failed:
			b.WriteString(", failed call passed through")
		case r.Reason != "":
			fmt.Fprintf(&b, ", unchanged (%s)", r.Reason)
		default:
			b.WriteString(", unchanged")
		}
		b.WriteString("\n")
		for _, f := range r.Folds {
			fmt.Fprintf(&b, "  %s: %d lines (%d B), omni retrieve %s\n", f.Marker, f.Lines, f.Bytes, f.Handle)
		}
	}
	return b.String()
}

// mcpClient is the daemon client of home.
func mcpClient(home string) *daemon.Client {
	return daemon.NewClient(configOf(home))
}
