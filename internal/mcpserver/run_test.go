package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnictx/omni/events"
)

func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, tl := range lt.Tools {
		ns = append(ns, tl.Name)
	}
	return strings.Join(ns, ",")
}

func TestParseTools(t *testing.T) {
	for in, want := range map[string]string{"": "", "all": "omni_run,omni_stats", "omni_run": "omni_run",
		" omni_stats, nope ,omni_run": "omni_run,omni_stats", "ALL": ""} {
		var got []string
		for _, n := range []string{ToolRun, ToolStats} {
			if ParseTools(in)[n] {
				got = append(got, n)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("ParseTools(%q) = %v, want %s", in, got, want)
		}
	}
	env := map[string]string{"CLAUDE_CODE_SESSION_ID": "cc-1", "OMNI_MCP_TOOLS": "omni_run"}
	o := OptionsFromEnv(func(k string) string { return env[k] })
	if o.Run.Session != "cc-1" || !o.Extra[ToolRun] || o.Extra[ToolStats] || o.Run.KeepSecrets {
		t.Errorf("options %+v", o)
	}
	env["OMNI_SESSION"], env["OMNI_KEEP_SECRETS"] = "mine", "1"
	if o = OptionsFromEnv(func(k string) string { return env[k] }); o.Run.Session != "mine" || !o.Run.KeepSecrets {
		t.Errorf("OMNI_SESSION must win: %+v", o)
	}
}

// connectOpt serves store in memory with opt.
func connectOpt(t *testing.T, store Store, opt Options) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(store, "v-test", opt).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestRunAdvertisedOnRequest(t *testing.T) {
	if got := toolNames(t, connectOpt(t, &fakeStore{}, Options{})); strings.Contains(got, ToolRun) {
		t.Errorf("omni_run advertised by default: %s", got)
	}
	if got := toolNames(t, connectOpt(t, &fakeStore{}, Options{Extra: ParseTools(ToolRun)})); !strings.Contains(got, ToolRun) || strings.Contains(got, ToolStats) {
		t.Errorf("OMNI_MCP_TOOLS=omni_run gave %s", got)
	}
}

func TestRun(t *testing.T) {
	store := &fakeStore{}
	cs := connectOpt(t, store, Options{Extra: ParseTools(ToolRun), Run: RunConfig{Session: "s1"}})
	dir := t.TempDir()

	// Output (stdout and stderr merged) goes through the store with the
	// reader, the command, the exit code and the directory; extra
	// arguments are ignored; the exit code leads the text, and a failing
	// command is a result, not a tool error.
	got, isErr := callText(t, cs, "omni_run", map[string]any{"command": "echo out; echo err >&2; exit 3", "cwd": dir, "description": "x", "timeout_ms": 5})
	if got != "Exit code 3\npiped:out\nerr\n" || isErr {
		t.Errorf("failing run = %q (error %v)", got, isErr)
	}
	if len(store.calls) != 1 {
		t.Fatalf("store calls %d", len(store.calls))
	}
	in := store.calls[0]
	if in.Session != "s1" || in.ExitCode != 3 || in.Cwd != dir || in.Door != events.DoorExec || in.Command != "echo out; echo err >&2; exit 3" {
		t.Errorf("call input %+v", in)
	}
	if got, isErr = callText(t, cs, "omni_run", map[string]any{"command": "pwd", "cwd": dir}); got != "Exit code 0\npiped:"+dir+"\n" || isErr {
		t.Errorf("pwd = %q (error %v)", got, isErr)
	}
	// bash syntax works (models write bash).
	if got, _ = callText(t, cs, "omni_run", map[string]any{"command": "echo {a,b}"}); got != "Exit code 0\npiped:a b\n" {
		t.Errorf("brace expansion = %q", got)
	}
	// No output: nothing to ask the store.
	n := len(store.calls)
	if got, _ = callText(t, cs, "omni_run", map[string]any{"command": "true"}); got != "Exit code 0\n" || len(store.calls) != n {
		t.Errorf("empty = %q, store asked %d times", got, len(store.calls)-n)
	}
	// A store that fails: the output passes, redacted (fail open, no leak).
	store.failCall = true
	secret := "AKIA" + "ZQ3VXM7RKP2WJ4HN"
	got, _ = callText(t, cs, "omni_run", map[string]any{"command": "echo key=" + secret})
	if !strings.HasPrefix(got, "Exit code 0\nkey=") || strings.Contains(got, secret) {
		t.Errorf("fail-open output = %q", got)
	}
	// A command over its timeout is stopped with its process group and
	// its partial output passes without the store.
	n = len(store.calls)
	t0 := time.Now()
	got, isErr = callText(t, cs, "omni_run", map[string]any{"command": "echo started; sleep 30 & sleep 30", "timeout": 1})
	if got != "Exit code 124 (stopped after 1 s)\nstarted\n" || isErr || len(store.calls) != n {
		t.Errorf("timeout = %q (error %v)", got, isErr)
	}
	if time.Since(t0) > 20*time.Second {
		t.Errorf("a stopped command held the call %v", time.Since(t0))
	}
	// Missing command: a tool error, nothing run.
	if got, isErr = callText(t, cs, "omni_run", map[string]any{"command": ""}); !isErr || !strings.Contains(got, "command is empty") {
		t.Errorf("empty command = %q (error %v)", got, isErr)
	}
}

func TestRunReaderFromMeta(t *testing.T) {
	store := &fakeStore{}
	cs := connectOpt(t, store, Options{Extra: ParseTools(ToolRun), Run: RunConfig{Session: "s1"}})
	p := &mcp.CallToolParams{Name: ToolRun, Arguments: map[string]any{"command": "echo hi"}}
	p.Meta = mcp.Meta{metaAgent: "agent-7"}
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// Without a session, an agent id names no reader.
	cs = connectOpt(t, store, Options{Extra: ParseTools(ToolRun)})
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(store.calls) != 2 || store.calls[0].Agent != "agent-7" || store.calls[1].Agent != "" || store.calls[1].Session != "" {
		t.Errorf("readers %+v", store.calls)
	}
}
