package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSeed builds omni, folds one Bash output in a fresh OMNI_HOME and
// returns the binary, the environment, the handle and `omni retrieve`'s
// exact stdout for it.
func mcpSeed(t *testing.T) (bin string, env []string, handle string, want []byte, proj string) {
	t.Helper()
	bin = hostOmniBinary(t)
	home := t.TempDir()
	proj = filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "OMNI_HOME="+filepath.Join(home, "omni"), "OMNI_NO_DAEMON=1", "HOME="+home)
	var out strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&out, "src/pkg/file_%03d.go:%d: the quick brown fox jumps over the lazy dog\n", i, i*7)
	}
	payload, _ := json.Marshal(map[string]any{"session_id": "s-mcp", "cwd": proj, "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "grep -rn fox src"},
		"tool_response": map[string]any{"stdout": out.String(), "stderr": "", "interrupted": false}})
	var reply []byte
	for i := 0; i < 2; i++ {
		cmd := exec.Command(bin, "hook")
		cmd.Env, cmd.Stdin = env, bytes.NewReader(payload)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("omni hook: %v", err)
		}
		reply = b
	}
	m := regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`).FindSubmatch(reply)
	if m == nil {
		t.Fatalf("no fold in %s", reply)
	}
	handle = string(m[1])
	cmd := exec.Command(bin, "retrieve", handle)
	cmd.Env = env
	want, err := cmd.Output()
	if err != nil || len(want) == 0 {
		t.Fatalf("omni retrieve: %v", err)
	}
	return bin, env, handle, want, proj
}

func TestMCPServerWithSDKClient(t *testing.T) {
	bin, env, handle, want, proj := mcpSeed(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(extra ...string) *mcp.ClientSession {
		cmd := exec.Command(bin, "mcp")
		cmd.Dir = proj
		cmd.Env = append(append([]string{}, env...), extra...)
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		return cs
	}
	cs := connect()
	defer cs.Close()
	if info := cs.InitializeResult().ServerInfo; info.Name != "omni" || info.Version == "" {
		t.Fatalf("server info %+v", info)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if len(tl.Description) > 80 {
			t.Errorf("%s: description of %d chars", tl.Name, len(tl.Description))
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "omni_explain_savings,omni_retrieve" {
		t.Fatalf("tools %v", names)
	}
	if b, _ := json.Marshal(lt.Tools); len(b) > 700 {
		t.Errorf("tool definitions weigh %d bytes", len(b))
	}

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	text := func(r *mcp.CallToolResult) string {
		if len(r.Content) != 1 {
			t.Fatalf("%d content items", len(r.Content))
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T", r.Content[0])
		}
		return tc.Text
	}
	r := call("omni_retrieve", map[string]any{"handle": handle})
	if r.IsError || text(r) != string(want) {
		t.Fatalf("omni_retrieve gave %q (error %v), want the %d bytes of omni retrieve", text(r), r.IsError, len(want))
	}
	r = call("omni_retrieve", map[string]any{"handle": "omni_retrieve(\"" + strings.ToUpper(handle) + "\")"})
	if r.IsError || text(r) != string(want) {
		t.Fatalf("quoted handle: %q", text(r))
	}
	for h, msg := range map[string]string{"0000000000000000": "documentation example", "0123456789abcdef": "no archived content", "xyz": "16 hex"} {
		r = call("omni_retrieve", map[string]any{"handle": h})
		if !r.IsError || !strings.Contains(text(r), msg) {
			t.Errorf("%s: error %v %q", h, r.IsError, text(r))
		}
	}
	r = call("omni_retrieve", map[string]any{"nope": 1})
	if !r.IsError {
		t.Error("unknown argument accepted")
	}
	r = call("omni_explain_savings", map[string]any{"n": 5})
	if s := text(r); r.IsError || !strings.Contains(s, "last 2 calls") || !strings.Contains(s, "omni retrieve "+handle) || !strings.Contains(s, "grep -rn fox src") {
		t.Fatalf("explain: %q", s)
	}
	cs.Close()

	all := connect("OMNI_MCP_TOOLS=all", "OMNI_SESSION=s-mcp-run")
	defer all.Close()
	lt, err = all.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 4 {
		t.Fatalf("OMNI_MCP_TOOLS=all: %v %v", lt, err)
	}
	r, err = all.CallTool(ctx, &mcp.CallToolParams{Name: "omni_stats", Arguments: map[string]any{}})
	if err != nil || r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, `"calls":2`) {
		t.Fatalf("omni_stats: %v %+v", err, r)
	}
	// omni_run through the store: the reader of OMNI_SESSION is shown the
	// output once, and its repeat folds to a marker whose handle retrieves.
	seq := "seq 1 300 | sed 's/^/row value /'"
	for i, wantFold := range []bool{false, true} {
		r, err = all.CallTool(ctx, &mcp.CallToolParams{Name: "omni_run", Arguments: map[string]any{"command": seq, "description": "extra"}})
		if err != nil || r.IsError {
			t.Fatalf("omni_run %d: %v %+v", i, err, r)
		}
		got := r.Content[0].(*mcp.TextContent).Text
		if !strings.HasPrefix(got, "Exit code 0\n") || strings.Contains(got, "[OMNI:") != wantFold ||
			(!wantFold && !strings.Contains(got, "row value 300\n")) {
			t.Fatalf("omni_run %d:\n%s", i, got)
		}
	}
}

// Raw newline-delimited JSON-RPC piped in at once: every request is answered
// before the server exits at the end of stdin.
func TestMCPServerRawLines(t *testing.T) {
	bin, env, handle, want, proj := mcpSeed(t)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"omni_retrieve","arguments":{"handle":"` + handle + `"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"omni_retrieve","arguments":{"handle":"0000000000000000"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"omni_retrieve","arguments":{"nope":1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"omni_run","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"omni_explain_savings","arguments":{}}}`,
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env, cmd.Dir = env, proj
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("omni mcp: %v\n%s", err, stderr.String())
	}
	type resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int             `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	got := map[int]resp{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r resp
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[r.ID] = r
	}
	if len(got) != 7 {
		t.Fatalf("%d answers for 7 requests:\n%s", len(got), out)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if json.Unmarshal(got[1].Result, &init) != nil || init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "omni" || init.Capabilities["tools"] == nil {
		t.Fatalf("initialize: %s", got[1].Result)
	}
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(got[2].Result, &list) != nil || len(list.Tools) != 2 {
		t.Fatalf("tools/list: %s", got[2].Result)
	}
	type callResult struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	var c callResult
	if json.Unmarshal(got[3].Result, &c) != nil || c.IsError || len(c.Content) != 1 || c.Content[0].Type != "text" || c.Content[0].Text != string(want) {
		t.Fatalf("retrieve: %s", got[3].Result)
	}
	for _, id := range []int{4, 5} {
		c = callResult{}
		if json.Unmarshal(got[id].Result, &c) != nil || !c.IsError {
			t.Fatalf("id %d: %s", id, got[id].Result)
		}
	}
	if got[6].Error == nil || got[6].Error.Code != -32602 {
		t.Fatalf("unknown tool: %+v", got[6])
	}
	c = callResult{}
	if json.Unmarshal(got[7].Result, &c) != nil || c.IsError || !strings.Contains(c.Content[0].Text, handle) {
		t.Fatalf("explain: %s", got[7].Result)
	}
}

// TestMCPScopedToProject: a server started in another project knows
// neither the handle nor the calls of the seeded one; --whole-home does.
func TestMCPScopedToProject(t *testing.T) {
	bin, env, handle, want, _ := mcpSeed(t)
	other := t.TempDir()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"omni_retrieve","arguments":{"handle":"` + handle + `"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"omni_explain_savings","arguments":{}}}`,
	}
	for _, whole := range []bool{false, true} {
		args := []string{"mcp"}
		if whole {
			args = append(args, "--whole-home")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, other
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("omni mcp: %v", err)
		}
		got := string(out)
		leaked := strings.Contains(got, strings.ReplaceAll(string(want[:40]), "\n", "\\n")) || strings.Contains(got, "grep -rn fox")
		if whole != leaked {
			t.Errorf("whole-home=%v: the other project's output or calls shown=%v:\n%s", whole, leaked, got)
		}
	}
}
