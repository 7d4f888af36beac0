package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/platform"
	"github.com/omnictx/omni/redact"
)

// Run timeouts of omni_run, in seconds: the default when the call names
// none, and the most a call may ask for. Hosts bound a tool call themselves
// (Claude Code's MCP tool timeout); these keep a forgotten command from
// holding the server.
const (
	runDefaultTimeout = 120
	runMaxTimeout     = 600
)

// runGrace is how long a timed-out command's process group has between
// SIGTERM and SIGKILL.
const runGrace = 2 * time.Second

// mcpRunIn is the input of omni_run. Arguments beyond these are ignored
// (hosts and models add some: descriptions, ids).
type mcpRunIn struct {
	Command string `json:"command" jsonschema:"shell command line, run with bash -c (sh -c without bash) in the server's directory"`
	Cwd     string `json:"cwd,omitempty" jsonschema:"directory to run in (default: the server's)"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"seconds before the command is stopped (default 120, max 600)"`
}

// RunConfig is what omni_run needs beyond its arguments.
type RunConfig struct {
	// Session and Agent name the reader whose shown-set the ledger
	// consults and extends; an empty Session means no reader: nothing
	// folds and nothing counts as shown (redaction and distillers still
	// run), as with `omni exec` without --session. cmd/omni takes Session
	// from OMNI_SESSION, else CLAUDE_CODE_SESSION_ID (the session id
	// Claude Code puts in the environment of the MCP servers it starts,
	// the same id its hooks carry).
	Session, Agent string
	// Passthrough reports OMNI_PASSTHROUGH; KeepSecrets OMNI_KEEP_SECRETS=1.
	Passthrough, KeepSecrets bool
}

// metaAgent is the request _meta key under which a host names the agent
// (subagent) making a call; omni_run takes it as the reader's agent.
const metaAgent = "claudecode/agentId"

// tolerantSchema is In's input schema with additional properties allowed:
// the SDK derives schemas that refuse unknown arguments, and a host that
// adds one would get a validation error instead of the tool.
func tolerantSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(In), err))
	}
	s.AdditionalProperties = nil
	return s
}

// addRun registers omni_run on srv.
func addRun(srv *mcp.Server, store Store, cfg RunConfig) {
	mcp.AddTool(srv, &mcp.Tool{Name: "omni_run",
		Description: "Run a shell command; returns its exit code and its output as omni shortens it.",
		InputSchema: tolerantSchema[mcpRunIn]()},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpRunIn) (*mcp.CallToolResult, any, error) {
			c := cfg
			if req != nil && req.Params != nil {
				if a, ok := req.Params.Meta[metaAgent].(string); ok && c.Session != "" {
					c.Agent = a
				}
			}
			return mcpRun(ctx, store, c, in), nil, nil
		})
}

// mcpRun runs in.Command and answers with "Exit code N" on the first line
// and what the reader should read after it; IsError is set only when the
// command could not be run at all.
func mcpRun(ctx context.Context, store Store, cfg RunConfig, in mcpRunIn) *mcp.CallToolResult {
	if in.Command == "" {
		return mcpError("omni_run: command is empty")
	}
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = runDefaultTimeout
	}
	timeout = min(timeout, runMaxTimeout)
	text, code, note, err := runShell(ctx, in.Command, in.Cwd, time.Duration(timeout)*time.Second)
	if err != nil {
		return mcpError("omni_run: " + err.Error())
	}
	delivered := text
	if note == "" {
		delivered = deliver(ctx, store, hooks.CallInput{Door: events.DoorExec, Command: in.Command, Text: text,
			ExitCode: code, Session: cfg.Session, Agent: cfg.Agent, Cwd: in.Cwd,
			Passthrough: cfg.Passthrough, KeepSecrets: cfg.KeepSecrets})
	} else {
		// A stopped command's partial output passes raw (redacted): it was
		// never a whole result to fold against.
		delivered = redactText(text, in.Command, cfg.KeepSecrets)
	}
	// A command that ran and failed is a result, not a tool error: the
	// exit code leads the text. Claude Code 2.1.328 cuts an MCP error
	// result to about 10,000 characters and appends its own text to it
	// (measured by e2e TestClaudeCodeMCP), which would drop failure lines.
	return mcpText(fmt.Sprintf("Exit code %d%s\n%s", code, note, delivered))
}

// deliver runs text through the store's pipeline; on any error the text
// passes redacted (fail open, rule 7).
func deliver(ctx context.Context, store Store, in hooks.CallInput) string {
	if in.Cwd == "" {
		in.Cwd, _ = os.Getwd()
	}
	if in.Text == "" || !utf8.ValidString(in.Text) {
		// Invalid UTF-8 cannot cross the JSON request byte for byte:
		// nothing is recorded, the text passes redacted (as omni exec).
		return redactText(in.Text, in.Command, in.KeepSecrets)
	}
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	out, err := store.Call(ctx, in)
	if err != nil {
		return redactText(in.Text, in.Command, in.KeepSecrets)
	}
	return out
}

// redactText is the redaction stage alone, for text that does not pass
// the store, read knowing the command that printed it (redact.Output); a
// panic in it leaves the text (fail open).
func redactText(text, command string, keep bool) (out string) {
	if keep || text == "" {
		return text
	}
	defer func() {
		if recover() != nil {
			out = text
		}
	}()
	out, _ = redact.Output(command, text)
	return out
}

// shell is the interpreter omni_run uses and its flag: bash when
// installed (models write bash), else sh; on Windows without bash,
// PowerShell, else cmd (platform.Shell).
func shell() (string, string) { return platform.Shell() }

// runShell runs command in dir (the current directory when empty) with
// stdin empty and stdout and stderr merged, and returns the output and
// exit code. A command still running after timeout, or when ctx ends, has
// its process group stopped; note then says so (" (stopped after N s)")
// and code is 124 (the timeout(1) convention). A command killed by
// signal N has code 128+N, as a shell reports it. err is set only when
// the command could not be started.
func runShell(ctx context.Context, command, dir string, timeout time.Duration) (text string, code int, note string, err error) {
	sh, _ := shell()
	c := platform.ShellCommand(sh, command) // cmd.exe gets its line verbatim
	c.Dir = dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	platform.Group(c)
	// A background child holding the output pipe open must not hold the
	// call: its output stops being read runGrace after the shell exits.
	c.WaitDelay = runGrace
	if err := c.Start(); err != nil {
		return "", 0, "", err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var werr error
	select {
	case werr = <-done:
	case <-t.C:
		note = fmt.Sprintf(" (stopped after %d s)", int(timeout/time.Second))
	case <-ctx.Done():
		note = " (stopped: the call was cancelled)"
	}
	if note != "" {
		_ = platform.SignalGroup(c.Process.Pid, platform.TermSignal)
		select {
		case <-done:
		case <-time.After(runGrace):
			_ = platform.KillGroup(c.Process.Pid)
			<-done
		}
		return out.String(), 124, note, nil
	}
	if werr != nil && c.ProcessState == nil {
		return out.String(), 0, "", werr
	}
	code = c.ProcessState.ExitCode()
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return out.String(), code, "", nil
}
