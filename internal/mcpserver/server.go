// Package mcpserver is omni's MCP server (omni mcp) on the official Go SDK:
// the tools omni_retrieve and omni_explain_savings (and, on request,
// omni_run and omni_stats) over a Store that cmd/omni backs with the
// daemon. Every tool definition is sent to the model with every request of
// every session, so only the two short ones are advertised by default.
// Every tool accepts arguments beyond its own (hosts add some) and ignores
// them.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnictx/omni/hooks"
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

// Store is what the tools read: omni's store, through the daemon or
// opened in-process (cmd/omni's adapter).
type Store interface {
	// Retrieve returns the exact archived bytes of handle h (16 lower-case
	// hex); the error wraps hooks.ErrUnknownHandle when nothing is
	// archived under h.
	Retrieve(ctx context.Context, h string) ([]byte, error)
	// Recent returns the last n tool calls recorded, newest first.
	Recent(ctx context.Context, n int) ([]hooks.Recent, error)
	// Stats returns the savings totals as JSON (omni stats --json).
	Stats(ctx context.Context) ([]byte, error)
	// Call runs one command's output through the pipeline (redaction,
	// distillers, the ledger of in's reader) and returns the text the
	// reader should read, as omni exec prints it. On an error the caller
	// delivers the text redacted (fail open).
	Call(ctx context.Context, in hooks.CallInput) (string, error)
}

// Optional tools, advertised only when named in Options.Extra.
const (
	// ToolRun is omni_run: run a command through the pipeline.
	ToolRun = "omni_run"
	// ToolStats is omni_stats: the savings totals.
	ToolStats = "omni_stats"
)

// Options chooses the tools and configures omni_run.
type Options struct {
	// Extra names the optional tools to advertise (ToolRun, ToolStats).
	Extra map[string]bool
	// Run is the reader and switches omni_run runs with.
	Run RunConfig
}

// ParseTools reads OMNI_MCP_TOOLS: "all" names every optional tool, else
// a comma- or blank-separated list of tool names; unknown names are
// ignored.
func ParseTools(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch f {
		case "all":
			out[ToolRun], out[ToolStats] = true, true
		case ToolRun, ToolStats:
			out[f] = true
		}
	}
	return out
}

// OptionsFromEnv reads the options from the environment through getenv:
// OMNI_MCP_TOOLS (ParseTools), the reader's session from OMNI_SESSION,
// else CLAUDE_CODE_SESSION_ID, OMNI_PASSTHROUGH (any value) and
// OMNI_KEEP_SECRETS=1.
func OptionsFromEnv(getenv func(string) string) Options {
	session := getenv("OMNI_SESSION")
	if session == "" {
		session = getenv("CLAUDE_CODE_SESSION_ID")
	}
	return Options{Extra: ParseTools(getenv("OMNI_MCP_TOOLS")), Run: RunConfig{Session: session,
		Passthrough: getenv("OMNI_PASSTHROUGH") != "", KeepSecrets: getenv("OMNI_KEEP_SECRETS") == "1"}}
}

// NormalizeHandle reads a handle as a model may quote it: blanks, quotes,
// back-ticks and an omni_retrieve(...) wrapper dropped, lower-cased.
func NormalizeHandle(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "omni_retrieve(")
	s = strings.TrimSuffix(s, ")")
	s = strings.Trim(s, "\"'` ")
	return strings.ToLower(s)
}

// New builds the server over store, announcing version, with the default
// two tools and the optional ones opt names.
func New(store Store, version string, opt Options) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "omni", Version: version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	mcp.AddTool(srv, &mcp.Tool{Name: "omni_retrieve", Description: "Exact original bytes behind an [OMNI ...] marker's handle.",
		InputSchema: tolerantSchema[mcpRetrieveIn]()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in mcpRetrieveIn) (*mcp.CallToolResult, any, error) {
			return mcpRetrieve(ctx, store, in.Handle), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "omni_explain_savings", Description: "What omni did to the last n tool outputs: bytes, markers, handles.",
		InputSchema: tolerantSchema[mcpSavingsIn]()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in mcpSavingsIn) (*mcp.CallToolResult, any, error) {
			return mcpExplain(ctx, store, in.N), nil, nil
		})
	if opt.Extra[ToolRun] {
		addRun(srv, store, opt.Run)
	}
	if opt.Extra[ToolStats] {
		mcp.AddTool(srv, &mcp.Tool{Name: ToolStats, Description: "omni's savings totals as JSON.", InputSchema: tolerantSchema[mcpEmpty]()},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ mcpEmpty) (*mcp.CallToolResult, any, error) {
				ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
				defer cancel()
				b, err := store.Stats(ctx)
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
func mcpRetrieve(ctx context.Context, store Store, handle string) *mcp.CallToolResult {
	h := NormalizeHandle(handle)
	if h == pipeline.ExampleHandle {
		return mcpError(h + " is the documentation example, not a real handle; real handles come from markers in tool output")
	}
	if len(h) != pipeline.HandleLen || strings.Trim(h, "0123456789abcdef") != "" {
		return mcpError(fmt.Sprintf("%q is not a handle: a handle is 16 hex characters", handle))
	}
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	b, err := store.Retrieve(ctx, h)
	if err != nil {
		if errors.Is(err, hooks.ErrUnknownHandle) {
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
func mcpExplain(ctx context.Context, store Store, n int) *mcp.CallToolResult {
	if n <= 0 {
		n = 10
	}
	n = min(n, 100)
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	rs, err := store.Recent(ctx, n)
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
