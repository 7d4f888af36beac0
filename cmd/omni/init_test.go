package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/jetstream/jstest"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/hostsetup"
	"github.com/omnictx/omni/internal/hostsetup/hostsetuptest"
	"github.com/omnictx/omni/internal/testbin"
)

// initEnv gives a test its own HOME (and OMNI_HOME), with no host config
// directories, and returns HOME.
func initEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("OMNI_HOME", filepath.Join(home, ".omni"))
	t.Setenv("OMNI_NO_DAEMON", "1")
	return home
}

// initRun runs one omni command line in-process.
func initRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// jsoncValue decodes a settings file (hostsetuptest.Object).
func jsoncValue(t *testing.T, src string) map[string]any {
	t.Helper()
	return hostsetuptest.Object(t, src, hostsetup.DecodeJSONC)
}

// omniHandlersOf returns event -> the omni handlers registered for it.
func omniHandlersOf(doc map[string]any) map[string][]map[string]any {
	return hostsetuptest.HandlersOf(doc, func(cmd string) bool { return hostsetup.IsOmniCommand(cmd, "", "hook", "pretool") })
}

// Settings files in different styles, each with other hooks and keys.
var claudeSettings = map[string]string{
	"four-spaces-comment": `{
    "model": "opus",
    // keep the audit hook
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [ { "type": "command", "command": "/usr/bin/audit.sh" } ]
            }
        ],
        "PostToolUse": [
            { "matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}] }
        ]
    },
    "permissions": {"allow": ["Bash(git:*)"]}
}
`,
	"two-spaces-no-hooks": `{
  "env": {
    "FOO": "1"
  },
  "statusLine": {"type": "command", "command": "~/bin/status"}
}
`,
	"tabs-empty-hooks": "{\n\t\"hooks\": {},\n\t\"theme\": \"dark\"\n}\n",
	"one-line":         `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},"x":[1,2]}`,
	"crlf-less-trailing": `{
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "echo hi"}]}
    ]
  }
}`,
}

func TestInitClaudeTwiceThenUninstall(t *testing.T) {
	for name, orig := range claudeSettings {
		t.Run(name, func(t *testing.T) {
			home := initEnv(t)
			settings := filepath.Join(home, ".claude", "settings.json")
			hostsetuptest.WriteFile(t, settings, orig)
			before := jsoncValue(t, orig)

			code, out, errs := initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni")
			if code != 0 {
				t.Fatalf("init: %d %s %s", code, out, errs)
			}
			first := hostsetuptest.ReadFile(t, settings)
			if first == orig {
				t.Fatal("init changed nothing")
			}
			if b := hostsetuptest.ReadFile(t, settings+hostsetup.BackupSuffix); b != orig {
				t.Fatalf("backup differs from the original")
			}
			after := jsoncValue(t, first)
			// Every key but hooks and permissions is untouched; every
			// other hook survives; permissions gain omni's two allow rules
			// at the end of allow, and nothing else changes.
			for k, v := range before {
				if k == "permissions" {
					pb, _ := v.(map[string]any)
					pa, _ := after[k].(map[string]any)
					ab, _ := pb["allow"].([]any)
					aa, _ := pa["allow"].([]any)
					want := append(append([]any(nil), ab...), "Bash(/opt/omni/bin/omni pipe:*)", "Bash(set -o pipefail)")
					if !reflect.DeepEqual(aa, want) {
						t.Errorf("permissions.allow: %v, want %v", aa, want)
					}
					for pk, pv := range pb {
						if pk != "allow" && !reflect.DeepEqual(pa[pk], pv) {
							t.Errorf("permissions.%s changed: %v", pk, pa[pk])
						}
					}
					continue
				}
				if k != "hooks" && !reflect.DeepEqual(after[k], v) {
					t.Errorf("key %s changed: %v", k, after[k])
				}
			}
			if bh, ok := before["hooks"].(map[string]any); ok {
				ah := after["hooks"].(map[string]any)
				for ev, groups := range bh {
					for _, g := range groups.([]any) {
						found := false
						for _, x := range ah[ev].([]any) {
							found = found || reflect.DeepEqual(x, g)
						}
						if !found {
							t.Errorf("hook group %v of %s is gone", g, ev)
						}
					}
				}
			}
			got := omniHandlersOf(after)
			want := map[string]map[string]any{
				"PostToolUse":        {"matcher": "Bash|Read|Grep|Glob|WebFetch|WebSearch|BashOutput|Task|Agent|mcp__.*", "timeout": 30.0},
				"PostToolUseFailure": {"matcher": "Bash", "timeout": 10.0, "async": true},
				"PreCompact":         {"matcher": nil, "timeout": 10.0},
				"PostCompact":        {"matcher": nil, "timeout": 10.0},
				"SessionStart":       {"matcher": nil, "timeout": 10.0},
				"SessionEnd":         {"matcher": nil, "timeout": 10.0},
				"SubagentStart":      {"matcher": nil, "timeout": 10.0},
				"PreToolUse":         {"matcher": "Bash", "timeout": 10.0}, // the rewrite, on by default
			}
			if len(got) != len(want) {
				t.Fatalf("omni registered for %d events, want %d: %v", len(got), len(want), got)
			}
			for ev, w := range want {
				hs := got[ev]
				if len(hs) != 1 {
					t.Fatalf("%s: %d omni handlers", ev, len(hs))
				}
				h := hs[0]
				sub := "hook"
				if ev == "PreToolUse" {
					sub = "pretool"
				}
				if h["type"] != "command" || h["command"] != "/opt/omni/bin/omni "+sub {
					t.Errorf("%s: handler %v", ev, h)
				}
				for k, v := range w {
					if !reflect.DeepEqual(h[k], v) {
						t.Errorf("%s: %s = %v, want %v", ev, k, h[k], v)
					}
				}
			}

			// The second run changes nothing.
			code, out, _ = initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni")
			if code != 0 || !strings.Contains(out, "unchanged") {
				t.Fatalf("second init: %d %s", code, out)
			}
			if hostsetuptest.ReadFile(t, settings) != first {
				t.Fatal("second init changed the file")
			}

			// Uninstall gives the original bytes back and drops the backup.
			code, out, _ = initRun(t, "init", "--claude", "--uninstall")
			if code != 0 || !strings.Contains(out, "restored") {
				t.Fatalf("uninstall: %d %s", code, out)
			}
			if got := hostsetuptest.ReadFile(t, settings); got != orig {
				t.Fatalf("uninstall gave\n%s\nwant\n%s", got, orig)
			}
			if _, err := os.Stat(settings + hostsetup.BackupSuffix); !os.IsNotExist(err) {
				t.Fatal("backup left behind")
			}
		})
	}
}

// A file changed after the install keeps that change: only omni's entries go.
func TestInitUninstallAfterEdit(t *testing.T) {
	home := initEnv(t)
	settings := filepath.Join(home, ".claude", "settings.json")
	orig := claudeSettings["four-spaces-comment"]
	hostsetuptest.WriteFile(t, settings, orig)
	if code, out, errs := initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	edited := strings.Replace(hostsetuptest.ReadFile(t, settings), `"opus"`, `"sonnet"`, 1)
	hostsetuptest.WriteFile(t, settings, edited)
	code, out, _ := initRun(t, "init", "--claude", "--uninstall")
	if code != 0 || !strings.Contains(out, "removed") || !strings.Contains(out, "changed since omni's install") {
		t.Fatalf("uninstall: %d %s", code, out)
	}
	if got, want := hostsetuptest.ReadFile(t, settings), strings.Replace(orig, `"opus"`, `"sonnet"`, 1); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if hostsetuptest.ReadFile(t, settings+hostsetup.BackupSuffix) != orig {
		t.Fatal("the backup must stay when the file changed since")
	}
}

// Duplicate and stale omni entries (another binary path, a handler inside a
// user's group) collapse into one handler per event; the user's handler in
// the mixed group stays.
func TestInitDeduplicates(t *testing.T) {
	home := initEnv(t)
	settings := filepath.Join(home, ".claude", "settings.json")
	hostsetuptest.WriteFile(t, settings, `{
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/omni hook"}]},
      {"matcher": "Bash|Read", "hooks": [{"type": "command", "command": "lint.sh"}, {"type": "command", "command": "'/home/u/go/bin/omni' hook post"}]},
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "OMNI_PASSTHROUGH=0 omni hook"}]},
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "omni --post-hook"}]}
    ]
  }
}
`)
	if code, out, errs := initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	doc := jsoncValue(t, hostsetuptest.ReadFile(t, settings))
	hs := omniHandlersOf(doc)
	if len(hs["PostToolUse"]) != 1 || hs["PostToolUse"][0]["command"] != "/opt/omni/bin/omni hook" {
		t.Fatalf("PostToolUse omni handlers: %v", hs["PostToolUse"])
	}
	s := hostsetuptest.ReadFile(t, settings)
	for _, keep := range []string{`"lint.sh"`, `"omni --post-hook"`} {
		if !strings.Contains(s, keep) {
			t.Errorf("%s is gone:\n%s", keep, s)
		}
	}
	first := s
	if code, _, _ := initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni"); code != 0 || hostsetuptest.ReadFile(t, settings) != first {
		t.Fatal("second run changed the file")
	}
}

func TestInitRefusals(t *testing.T) {
	home := initEnv(t)
	code, _, errs := initRun(t, "init")
	if code != 2 || !strings.Contains(errs, "--claude") || !strings.Contains(errs, "--opencode") || !strings.Contains(errs, "no host found") {
		t.Fatalf("no host: %d %q", code, errs)
	}
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	code, _, errs = initRun(t, "init")
	if code != 2 || !strings.Contains(errs, "Claude Code, Gemini CLI") || !strings.Contains(errs, "--all") {
		t.Fatalf("two hosts: %d %q", code, errs)
	}
	if code, _, errs = initRun(t, "init", "--claude", "--hook-only", "--mcp-only"); code != 2 {
		t.Fatalf("conflicting flags: %d %q", code, errs)
	}
	if code, _, errs = initRun(t, "init", "--gemini", "--rewrite"); code != 2 || !strings.Contains(errs, "Claude Code only") {
		t.Fatalf("--rewrite without --claude: %d %q", code, errs)
	}
	// One host present: it is the one set up.
	os.RemoveAll(filepath.Join(home, ".gemini"))
	if code, out, errs := initRun(t, "init", "--hook-only", "--bin", "/opt/omni"); code != 0 || !strings.Contains(out, "Claude Code") {
		t.Fatalf("one host: %d %s %s", code, out, errs)
	}
	// A file omni cannot parse is left alone, exit 1.
	settings := filepath.Join(home, ".gemini", "settings.json")
	hostsetuptest.WriteFile(t, settings, `{"hooks": [1,}`)
	code, _, errs = initRun(t, "init", "--gemini")
	if code != 1 || !strings.Contains(errs, "not valid JSON") || hostsetuptest.ReadFile(t, settings) != `{"hooks": [1,}` {
		t.Fatalf("bad JSON: %d %q", code, errs)
	}
}

func TestInitDryRunWritesNothing(t *testing.T) {
	home := initEnv(t)
	settings := filepath.Join(home, ".claude", "settings.json")
	orig := claudeSettings["two-spaces-no-hooks"]
	hostsetuptest.WriteFile(t, settings, orig)
	code, out, _ := initRun(t, "init", "--all", "--dry-run", "--bin", "/opt/omni/bin/omni")
	if code != 0 || !strings.Contains(out, "would be updated") || !strings.Contains(out, `+   "hooks": {`) {
		t.Fatalf("dry run: %d %s", code, out)
	}
	if hostsetuptest.ReadFile(t, settings) != orig {
		t.Fatal("dry run wrote")
	}
	for _, p := range []string{".claude.json", ".codex", ".gemini", ".config", ".claude/settings.json" + hostsetup.BackupSuffix} {
		if _, err := os.Stat(filepath.Join(home, p)); !os.IsNotExist(err) {
			t.Errorf("dry run created %s", p)
		}
	}
}

func TestInitMCPAndProject(t *testing.T) {
	home := initEnv(t)
	claudeJSON := filepath.Join(home, ".claude.json")
	orig := `{"numStartups": 3, "mcpServers": {"gh": {"command": "gh-mcp"}, "old": {"command": "/usr/bin/omni", "args": ["mcp"]}}}`
	hostsetuptest.WriteFile(t, claudeJSON, orig)
	if code, out, errs := initRun(t, "init", "--claude", "--mcp-only", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	want := `{"numStartups": 3, "mcpServers": {"gh": {"command": "gh-mcp"}, "omni": {"type":"stdio","command":"/opt/omni/bin/omni","args":["mcp"]}}}`
	if got := hostsetuptest.ReadFile(t, claudeJSON); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("--mcp-only wrote hooks")
	}
	// The duplicate under another name was omni's: uninstall leaves no
	// omni server (the file held one before, so there is no backup).
	if code, _, _ := initRun(t, "init", "--claude", "--uninstall", "--mcp-only"); code != 0 ||
		hostsetuptest.ReadFile(t, claudeJSON) != `{"numStartups": 3, "mcpServers": {"gh": {"command": "gh-mcp"}}}` {
		t.Fatalf("uninstall: %s", hostsetuptest.ReadFile(t, claudeJSON))
	}
	orig = hostsetuptest.ReadFile(t, claudeJSON)
	if code, out, errs := initRun(t, "init", "--claude", "--mcp-only", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	if code, _, _ := initRun(t, "init", "--claude", "--uninstall", "--mcp-only"); code != 0 || hostsetuptest.ReadFile(t, claudeJSON) != orig {
		t.Fatalf("uninstall: %s", hostsetuptest.ReadFile(t, claudeJSON))
	}

	// --project writes the repository's files.
	proj := filepath.Join(home, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	t.Chdir(filepath.Join(proj, "sub"))
	if code, out, errs := initRun(t, "init", "--claude", "--project", "--rewrite", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	doc := jsoncValue(t, hostsetuptest.ReadFile(t, filepath.Join(proj, ".claude", "settings.json")))
	hs := omniHandlersOf(doc)
	if pre := hs["PreToolUse"]; len(pre) != 1 || pre[0]["command"] != "/opt/omni/bin/omni pretool" || pre[0]["matcher"] != "Bash" {
		t.Fatalf("PreToolUse: %v", hs["PreToolUse"])
	}
	mcp := jsoncValue(t, hostsetuptest.ReadFile(t, filepath.Join(proj, ".mcp.json")))
	if !reflect.DeepEqual(mcp["mcpServers"], map[string]any{"omni": map[string]any{"type": "stdio", "command": "/opt/omni/bin/omni", "args": []any{"mcp"}}}) {
		t.Fatalf(".mcp.json: %v", mcp)
	}
	// With --rewrite=false the PreToolUse entry goes again.
	if code, out, errs := initRun(t, "init", "--claude", "--project", "--rewrite=false", "--bin", "/opt/omni/bin/omni"); code != 0 {
		t.Fatal(out, errs)
	}
	if hs := omniHandlersOf(jsoncValue(t, hostsetuptest.ReadFile(t, filepath.Join(proj, ".claude", "settings.json")))); hs["PreToolUse"] != nil {
		t.Fatalf("PreToolUse kept: %v", hs)
	}
	if code, _, _ := initRun(t, "init", "--claude", "--project", "--uninstall"); code != 0 {
		t.Fatal("uninstall")
	}
	for _, p := range []string{".claude/settings.json", ".mcp.json"} {
		if _, err := os.Stat(filepath.Join(proj, p)); !os.IsNotExist(err) {
			t.Errorf("%s is left after uninstalling what omni created", p)
		}
	}
}

func TestInitCodexGeminiOpenCode(t *testing.T) {
	home := initEnv(t)
	toml := filepath.Join(home, ".codex", "config.toml")
	origTOML := "model = \"o3\"\n\n[mcp_servers.gh]\ncommand = \"gh\"\n"
	hostsetuptest.WriteFile(t, toml, origTOML)
	gem := filepath.Join(home, ".gemini", "settings.json")
	origGem := "{\n  // Gemini accepts comments\n  \"theme\": \"GitHub\",\n  \"mcpServers\": {}\n}\n"
	hostsetuptest.WriteFile(t, gem, origGem)
	code, out, errs := initRun(t, "init", "--codex", "--gemini", "--opencode", "--bin", "/opt/omni/bin/omni")
	if code != 0 {
		t.Fatal(out, errs)
	}
	for _, w := range []string{"Hooks need review", `"decision":"block"`, "restart OpenCode", "Full-text-only", "Plugin"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// Codex: Claude-compatible hooks.json, Bash matcher, five events
	// (PostToolUse, PreCompact, PostCompact, SessionStart, SubagentStart);
	// a complete MCP table.
	codex := jsoncValue(t, hostsetuptest.ReadFile(t, filepath.Join(home, ".codex", "hooks.json")))
	ch := omniHandlersOf(codex)
	if len(ch) != 5 || ch["PostToolUse"][0]["matcher"] != "Bash" {
		t.Fatalf("codex hooks: %v", ch)
	}
	if got, want := hostsetuptest.ReadFile(t, toml), origTOML+"\n[mcp_servers.omni]\ncommand = \"/opt/omni/bin/omni\"\nargs = [\"mcp\"]\nenv_vars = [\"OMNI_HOME\"]\n"; got != want {
		t.Fatalf("config.toml:\n%s", got)
	}
	// Gemini: its own tool names, millisecond timeouts, the comment kept.
	g := hostsetuptest.ReadFile(t, gem)
	if !strings.Contains(g, "// Gemini accepts comments") {
		t.Fatal("comment lost")
	}
	gh := omniHandlersOf(jsoncValue(t, g))
	if m := gh["AfterTool"][0]; !strings.Contains(m["matcher"].(string), "run_shell_command") || m["timeout"] != 30000.0 {
		t.Fatalf("gemini AfterTool: %v", m)
	}
	for _, ev := range []string{"SessionStart", "SessionEnd"} {
		if len(gh[ev]) != 1 || gh[ev][0]["timeout"] != 10000.0 {
			t.Fatalf("gemini %s: %v", ev, gh[ev])
		}
	}
	if gh["PreCompress"] != nil {
		t.Fatal("gemini PreCompress registered: 0.61.0 fires it before every request")
	}
	if gh["PostToolUse"] != nil || gh["BeforeTool"] != nil {
		t.Fatal("Claude event names in Gemini settings")
	}
	gd := jsoncValue(t, g)
	if !reflect.DeepEqual(gd["mcpServers"], map[string]any{"omni": map[string]any{"command": "/opt/omni/bin/omni", "args": []any{"mcp"}}}) {
		t.Fatalf("gemini mcp: %v", gd["mcpServers"])
	}
	// OpenCode: the plugin names the binary; opencode.json the MCP server.
	plugin := hostsetuptest.ReadFile(t, filepath.Join(home, ".config", "opencode", "plugins", "omni.js"))
	if !strings.HasPrefix(plugin, hostsetup.PluginMarker) || !strings.Contains(plugin, `process.env.OMNI_BIN || "/opt/omni/bin/omni"`) {
		t.Fatalf("plugin:\n%s", plugin)
	}
	oc := jsoncValue(t, hostsetuptest.ReadFile(t, filepath.Join(home, ".config", "opencode", "opencode.json")))
	if !reflect.DeepEqual(oc["mcp"], map[string]any{"omni": map[string]any{"type": "local", "command": []any{"/opt/omni/bin/omni", "mcp"}, "enabled": true}}) {
		t.Fatalf("opencode mcp: %v", oc)
	}
	// Second run: nothing changes, no trust note.
	snap := map[string]string{}
	for _, p := range []string{toml, gem, filepath.Join(home, ".codex", "hooks.json")} {
		snap[p] = hostsetuptest.ReadFile(t, p)
	}
	code, out, _ = initRun(t, "init", "--codex", "--gemini", "--opencode", "--bin", "/opt/omni/bin/omni")
	if code != 0 || strings.Contains(out, "updated") || strings.Contains(out, "created") || strings.Contains(out, "Hooks need review") {
		t.Fatalf("second run: %s", out)
	}
	for p, s := range snap {
		if hostsetuptest.ReadFile(t, p) != s {
			t.Errorf("%s changed", p)
		}
	}
	// Uninstall without flags finds the three hosts and restores everything.
	code, out, _ = initRun(t, "init", "--uninstall")
	if code != 0 {
		t.Fatal(out)
	}
	if hostsetuptest.ReadFile(t, toml) != origTOML || hostsetuptest.ReadFile(t, gem) != origGem {
		t.Fatalf("not restored:\n%s\n%s", hostsetuptest.ReadFile(t, toml), hostsetuptest.ReadFile(t, gem))
	}
	for _, p := range []string{".codex/hooks.json", ".config/opencode/plugins/omni.js", ".config/opencode/opencode.json"} {
		if _, err := os.Stat(filepath.Join(home, p)); !os.IsNotExist(err) {
			t.Errorf("%s left", p)
		}
	}
	// A plugin file omni did not write is never overwritten.
	foreign := filepath.Join(home, ".config", "opencode", "plugins", "omni.js")
	hostsetuptest.WriteFile(t, foreign, "export const Mine = 1\n")
	if code, _, errs := initRun(t, "init", "--opencode", "--hook-only", "--bin", "/opt/omni/bin/omni"); code != 1 || !strings.Contains(errs, "not written by omni") {
		t.Fatalf("foreign plugin: %d %s", code, errs)
	}
	if hostsetuptest.ReadFile(t, foreign) != "export const Mine = 1\n" {
		t.Fatal("foreign plugin overwritten")
	}
}

func TestPretoolCommand(t *testing.T) {
	initEnv(t)
	var out bytes.Buffer
	in := `{"session_id":"s1","hook_event_name":"PreToolUse","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"d"}}`
	if code := run([]string{"pretool"}, streams{In: strings.NewReader(in), Out: &out, Err: &out}); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var r struct {
		HookSpecificOutput struct {
			HookEventName      string            `json:"hookEventName"`
			PermissionDecision *string           `json:"permissionDecision"`
			UpdatedInput       map[string]string `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	h := r.HookSpecificOutput
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != nil || h.UpdatedInput["description"] != "d" ||
		!strings.HasPrefix(h.UpdatedInput["command"], "set -o pipefail; go test ./... 2>&1 | ") ||
		!regexp.MustCompile(` pipe --call [0-9a-f]{32}$`).MatchString(h.UpdatedInput["command"]) {
		t.Fatalf("reply %s", out.String())
	}
	out.Reset()
	t.Setenv("OMNI_PRETOOL_REWRITE", "0")
	if code := run([]string{"pretool"}, streams{In: strings.NewReader(in), Out: &out, Err: &out}); code != 0 || out.Len() != 0 {
		t.Fatalf("disabled: %d %q", code, out.String())
	}
}

// hostOmniBinary builds cmd/omni into a temporary directory.
func hostOmniBinary(t *testing.T) string {
	t.Helper()
	return testbin.Omni(t)
}

// TestInitCluster: omni init --nats-url checks the cluster before it
// records the settings in $OMNI_HOME/cluster.json, --embedded removes
// them, and every init says which backend hooks use.
func TestInitCluster(t *testing.T) {
	home := initEnv(t)
	t.Setenv(daemon.EnvNATSURL, "")
	os.Unsetenv(daemon.EnvNATSURL)
	omniHome := filepath.Join(home, ".omni")
	file := filepath.Join(omniHome, daemon.ClusterFile)
	for _, args := range [][]string{{"init", "--nats-creds", "x.creds"}, {"init", "--nats-url", "nats://h:4222", "--embedded"}} {
		if code, _, errs := initRun(t, args...); code != 2 || !strings.Contains(errs, "--nats-url") {
			t.Fatalf("%v: %d %q", args, code, errs)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "nats://" + l.Addr().String()
	l.Close()
	if code, _, errs := initRun(t, "init", "--nats-url", dead); code != 1 || !strings.Contains(errs, "nothing written") {
		t.Fatalf("a cluster that does not answer: %d %q", code, errs)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("%s written for a cluster that does not answer", file)
	}
	c := jstest.Start(t, 1)
	code, out, errs := initRun(t, "init", "--nats-url", c.URL(), "--nats-stream", "TEAM")
	if code != 0 || !strings.Contains(out, "wrote "+file) || !strings.Contains(out, "backend: stream TEAM on the NATS cluster "+c.URL()) {
		t.Fatalf("init --nats-url: %d %s %s", code, out, errs)
	}
	if got, err := wire.ReadCluster(omniHome, func(string) (string, bool) { return "", false }); err != nil || got.URL != c.URL() || got.Stream != "TEAM" {
		t.Fatalf("recorded %+v, %v", got, err)
	}
	// A host's init reports the recorded backend and keeps it.
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	if code, out, _ := initRun(t, "init", "--claude", "--hook-only", "--bin", "/opt/omni/bin/omni"); code != 0 || !strings.Contains(out, "backend: stream TEAM on the NATS cluster") || !strings.Contains(out, "(from "+file+")") {
		t.Fatalf("init --claude with a cluster recorded: %d %s", code, out)
	}
	if code, out, _ := initRun(t, "init", "--embedded", "--dry-run"); code != 0 || !strings.Contains(out, "would have removed "+file) {
		t.Fatalf("init --embedded --dry-run: %d %s", code, out)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("--dry-run removed %s", file)
	}
	if code, out, _ := initRun(t, "init", "--embedded"); code != 0 || !strings.Contains(out, "removed "+file) || !strings.Contains(out, "backend: the embedded store") {
		t.Fatalf("init --embedded: %d %s", code, out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("%s still there after --embedded", file)
	}
}
