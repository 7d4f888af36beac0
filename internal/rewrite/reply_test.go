package rewrite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testOmni is an executable stand-in for the omni binary (TestMain).
var testOmni string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rewrite-test-")
	if err != nil {
		panic(err)
	}
	testOmni = filepath.Join(dir, "omni")
	if err := os.WriteFile(testOmni, []byte("#!/bin/sh\ncat\n"), 0o755); err != nil {
		panic(err)
	}
	omniRules = []string{PipefailRule, FilterRule(testOmni)}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// payload is a Claude Code PreToolUse payload for Bash.
func payload(cmd, mode string, extra map[string]any) []byte {
	in := map[string]any{"command": cmd, "description": "run it"}
	for k, v := range extra {
		in[k] = v
	}
	b, _ := json.Marshal(map[string]any{"session_id": "s-1", "transcript_path": "/h/.claude/projects/p/s-1.jsonl",
		"cwd": "/p", "permission_mode": mode, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": in, "tool_use_id": "toolu_1"})
	return b
}

// settings writes a user settings file with the permission lists given and
// returns a PreTool reading it (no project, no managed file).
func settings(t *testing.T, perms map[string][]string, env map[string]string) PreTool {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"permissions": perms})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return PreTool{Omni: testOmni, Home: t.TempDir(), Sources: func(string) Sources { return Sources{User: filepath.Join(dir, "settings.json")} },
		Getenv: func(k string) string { return env[k] }}
}

// omniRules are the allow rules omni init writes (set in TestMain).
var omniRules []string

// rewritten returns the rewritten command of a reply ("" for none) and
// fails on a reply carrying anything but hookEventName and updatedInput.
func rewritten(t *testing.T, reply []byte) (string, map[string]any) {
	t.Helper()
	if reply == nil {
		return "", nil
	}
	var r struct {
		HSO map[string]json.RawMessage `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply is not JSON: %s", reply)
	}
	if len(r.HSO) != 2 || string(r.HSO["hookEventName"]) != `"PreToolUse"` || r.HSO["updatedInput"] == nil {
		t.Fatalf("the reply carries more than the rewritten input (a permission decision?): %s", reply)
	}
	var in map[string]any
	_ = json.Unmarshal(r.HSO["updatedInput"], &in)
	c, _ := in["command"].(string)
	return c, in
}

// The grammar takes an optional cd and one runner of plain words, and
// nothing a held-out harness showed a parser can be fooled by: quoting
// tricks, descriptor operators, expansions, redirections, nested shells,
// lists, comments, heredocs, builtins that act on the shell.
func TestTakeGrammar(t *testing.T) {
	take := map[string]string{
		"go test ./...": "go test ./...", "pytest -x tests/test_a.py": "pytest -x tests/test_a.py",
		"python -m pytest -q": "python -m pytest -q", "cargo test --all": "cargo test --all", "npm test": "npm test",
		"npm run test:unit": "npm run test:unit", "make -j4 check": "make -j4 check", "cd web && npm test": "npm test",
		"cd /p/sub  &&  pytest -v": "pytest -v", "timeout 300 go test ./...": "timeout 300 go test ./...",
		"uv run pytest": "uv run pytest", "./gradlew build": "./gradlew build", "FOO=1 go test ./x": "FOO=1 go test ./x",
		"pytest tests/**/test_*.py": "pytest tests/**/test_*.py", "cd ~/proj && make": "make", "  make  ": "make",
		"go test -run=TestA/b,c ./pkg/...": "go test -run=TestA/b,c ./pkg/...",
		`pytest -k "a and b"`:              `pytest -k "a and b"`, "pytest -k 'a|b; c'": "pytest -k 'a|b; c'",
		"cd a && cd b && make": "make", "cd a; make": "make", "cd && make": "make",
		"go build ./... && go test ./...": "go test ./...", "cd /p/sub && pytest -v 2>&1": "pytest -v 2>&1",
		"source venv/bin/activate": "",
	}
	delete(take, "source venv/bin/activate")
	for c, runner := range take {
		tk, ok := Take(c)
		if !ok || tk.Runner != runner || tk.Line != c {
			t.Errorf("Take(%q) = %+v, %v; want runner %q", c, tk, ok, runner)
		}
	}
	leave := []string{"", "ls -la", "cat go.mod", "git push", "go run .", "npm install", "cd x",
		// the attacks a held-out harness ran against the earlier parser
		`pytest $'\''; curl evil.example #'`, "<&- rm make -r victim", "cd ${PWD%/*} && make", "cd $HOME && make",
		"pytest 2>../OUTSIDE", "pytest 1<>../OUTSIDE", "echo x | xargs rm -rf", "sh -c 'rm -rf x'", "env -S 'rm -rf x'",
		// quoting, operators, expansions, lists, comments, heredocs, background
		`pytest a\ b`, `pytest -k "$X"`, "pytest -k \"a\\\"b\"", "pytest -k 'a", `pytest -k "a!"`, "go test ./... | tail -5", "go test > log.txt",
		"go test ./... &", "make; rm -rf x", "make && rm -rf x", "make || true", "make # comment", "make\nrm -rf x",
		"make \\", "cat <<EOF\nx\nEOF", "echo $(go test)", "go test `x`", "(go test)", "{ make; }", "! make",
		"for i in 1; do make; done", "make $TARGET", "source venv/bin/activate && pytest", ". ./env; make",
		"set +o pipefail; make", "eval x && make", "X=1; make", "make ;", "; make", "make &&", "pytest 2>&1x",
		"make test || true", "pytest 2>&1 | tail", "make clean || make test", "ulimit -v 100000; make",
		"umask 077 && make", "builtin set +o pipefail; make", "command set +o pipefail; make", "export OMNI_HOME=/tmp && make",
		"builtin make", "command make", "make ~user/$x",
		// builtins, keywords and exec-like words that would act differently in a pipeline
		"exec make", "time make", "command make", "eval make", "source x", ". ./env && make", "set -e && make",
		"omni exec go test", "cd x && exec make", "make\r", "go test ./...\x00",
	}
	for _, c := range leave {
		if tk, ok := Take(c); ok {
			t.Errorf("Take(%q) took it (%+v)", c, tk)
		}
	}
}

// The rewritten command is the agent's text with only `set -o pipefail`
// put before the runner and the filter behind it; no permission decision
// ever; every tool_input key echoed; the ticket holds the reader, the line
// and the host's timeout, good once.
func TestReplyKeepsTheCommand(t *testing.T) {
	pt := settings(t, map[string][]string{"allow": append([]string{"Bash(cargo test:*)"}, omniRules...)}, map[string]string{"OMNI_KEEP_SECRETS": "1"})
	tokenRe := regexp.MustCompile(` pipe --call ([0-9a-f]{32})$`)
	for _, c := range []struct{ line, want string }{
		{"cd crates/m && cargo test --lib", "cd crates/m && set -o pipefail && cargo test --lib"},
		{"cargo test", "set -o pipefail; cargo test"},
		{"cd a;  cargo test", "cd a;  set -o pipefail; cargo test"},
	} {
		for _, mode := range []string{"default", "acceptEdits", "bypassPermissions", "dontAsk", "auto"} {
			cmd, in := rewritten(t, Reply(payload(c.line, mode, map[string]any{"timeout": 300000}), pt))
			if !strings.HasPrefix(cmd, c.want+" 2>&1 | "+testOmni+" pipe --call ") {
				t.Fatalf("%s: %q became %q", mode, c.line, cmd)
			}
			if in["description"] != "run it" || in["timeout"] != float64(300000) {
				t.Fatalf("%s: tool_input keys not echoed: %v", mode, in)
			}
			line, _, ok := Unwrap(cmd)
			if !ok || line != c.line {
				t.Fatalf("Unwrap(%q) = %q %v", cmd, line, ok)
			}
			m := tokenRe.FindStringSubmatch(cmd)
			tk, err := Redeem(pt.Home, m[1], time.Now())
			if err != nil || tk.Session != "s-1" || tk.Line != c.line || tk.TimeoutMS != 300000 || !tk.KeepSecrets || tk.Cwd != "/p" {
				t.Fatalf("ticket %+v, %v", tk, err)
			}
			if _, err := Redeem(pt.Home, m[1], time.Now()); err != ErrNoTicket {
				t.Fatalf("a ticket was good twice: %v", err)
			}
		}
	}
	cmd, _ := rewritten(t, Reply(withAgent(payload("make", "default", nil), "a'1 b"), pt))
	if m := tokenRe.FindStringSubmatch(cmd); m == nil {
		t.Fatalf("no token: %q", cmd)
	} else if tk, _ := Redeem(pt.Home, m[1], time.Now()); tk.Agent != "a'1 b" {
		t.Fatalf("agent id: %+v", tk)
	}
	if _, err := Redeem(pt.Home, "not-a-token", time.Now()); err != ErrNoTicket {
		t.Fatal("a malformed token was taken")
	}
}

func withAgent(p []byte, agent string) []byte {
	var m map[string]any
	_ = json.Unmarshal(p, &m)
	m["agent_id"] = agent
	b, _ := json.Marshal(m)
	return b
}

// Whatever the command, the reply is either nothing or the command kept
// whole after `set -o pipefail; `, with no permission decision.
func FuzzReplyNeverJudges(f *testing.F) {
	for _, s := range []string{"go test ./...", "cd a && make", `pytest $'\''; curl x #'`, "<&- rm make -r v", "make # x"} {
		f.Add(s)
	}
	dir := f.TempDir()
	b, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": append([]string{"Bash"}, omniRules...)}})
	_ = os.WriteFile(filepath.Join(dir, "s.json"), b, 0o600)
	pt := PreTool{Omni: testOmni, Home: f.TempDir(), Sources: func(string) Sources { return Sources{User: filepath.Join(dir, "s.json")} },
		Getenv: func(string) string { return "" }}
	f.Fuzz(func(t *testing.T, c string) {
		reply := Reply(payload(c, "default", nil), pt)
		if reply == nil {
			return
		}
		if strings.Contains(string(reply), "permissionDecision") {
			t.Fatalf("a permission decision for %q: %s", c, reply)
		}
		cmd, _ := rewritten(t, reply)
		if line, _, ok := Unwrap(cmd); !ok || line != c {
			t.Fatalf("%q became %q (read back as %q)", c, cmd, line)
		}
		tk, _ := Take(c)
		if cmd != c[:tk.At]+pipefailBefore(tk.Op)+c[tk.At:]+" 2>&1 | "+testOmni+" pipe --call "+cmd[len(cmd)-32:] {
			t.Fatalf("%q became %q: more than the two added parts changed", c, cmd)
		}
		if _, ok := Take(c); !ok {
			t.Fatalf("rewrote %q outside the grammar", c)
		}
	})
}

// The added parts must run where the original would: without omni's allow
// rules (outside bypass mode), or with a deny or ask rule that could match
// them, nothing is rewritten; an unreadable settings file stops it too.
func TestReplyOnlyWhereTheAddedPartsRun(t *testing.T) {
	p := payload("go test ./...", "default", nil)
	cases := []struct {
		name  string
		perms map[string][]string
		mode  string
		want  bool
	}{
		{"omni rules", map[string][]string{"allow": omniRules}, "default", true},
		{"no rules, default", nil, "default", false},
		{"no rules, bypass", nil, "bypassPermissions", true},
		{"pipefail rule missing", map[string][]string{"allow": {FilterRule(testOmni)}}, "default", false},
		{"filter rule missing", map[string][]string{"allow": {PipefailRule}}, "acceptEdits", false},
		{"filter rule of another binary", map[string][]string{"allow": {PipefailRule, FilterRule("/usr/bin/omni")}}, "default", false},
		{"deny set", map[string][]string{"allow": omniRules, "deny": {"Bash(set:*)"}}, "bypassPermissions", false},
		{"ask omni", map[string][]string{"allow": omniRules, "ask": {"Bash(" + testOmni + ":*)"}}, "default", false},
		{"deny the whole line", map[string][]string{"allow": omniRules, "deny": {"Bash(go test ./...)"}}, "bypassPermissions", false},
		{"deny go", map[string][]string{"allow": omniRules, "deny": {"Bash(go:*)"}}, "bypassPermissions", false},
		{"deny all Bash", map[string][]string{"allow": omniRules, "deny": {"Bash"}}, "bypassPermissions", false},
		{"deny curl", map[string][]string{"allow": omniRules, "deny": {"Bash(curl:*)"}}, "default", true},
		{"plan", map[string][]string{"allow": omniRules}, "plan", false},
	}
	for _, c := range cases {
		pt := settings(t, c.perms, nil)
		got, _ := rewritten(t, Reply(withMode(p, c.mode), pt))
		if (got != "") != c.want {
			t.Errorf("%s: rewritten %q, want rewrite %v", c.name, got, c.want)
		}
	}
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "settings.json"), []byte("{not json"), 0o600)
	pt := PreTool{Omni: testOmni, Home: t.TempDir(), Sources: func(string) Sources { return Sources{User: filepath.Join(dir, "settings.json")} },
		Getenv: func(string) string { return "" }}
	if r := Reply(withMode(p, "bypassPermissions"), pt); r != nil {
		t.Errorf("rewrote under an unreadable settings file: %s", r)
	}
}

func withMode(p []byte, mode string) []byte {
	var m map[string]any
	_ = json.Unmarshal(p, &m)
	m["permission_mode"] = mode
	b, _ := json.Marshal(m)
	return b
}

// Left alone: background runs, other hosts' payloads, other tools, a
// missing session, an omni path outside the grammar.
func TestReplyLeavesAlone(t *testing.T) {
	pt := settings(t, map[string][]string{"allow": omniRules}, nil)
	base := payload("go test ./...", "default", nil)
	if cmd, _ := rewritten(t, Reply(base, pt)); cmd == "" {
		t.Fatal("the base case is not rewritten")
	}
	var m map[string]any
	for name, mut := range map[string]func(map[string]any){
		"background":  func(m map[string]any) { m["tool_input"].(map[string]any)["run_in_background"] = true },
		"bad timeout": func(m map[string]any) { m["tool_input"].(map[string]any)["timeout"] = "soon" },
		"codex":       func(m map[string]any) { m["turn_id"] = "t1" },
		"cursor":      func(m map[string]any) { m["cursor_version"] = "1.7" },
		"opencode":    func(m map[string]any) { m["host"] = "opencode" },
		"read":        func(m map[string]any) { m["tool_name"] = "Read" },
		"no session":  func(m map[string]any) { delete(m, "session_id") },
		"post":        func(m map[string]any) { m["hook_event_name"] = "PostToolUse" },
	} {
		_ = json.Unmarshal(base, &m)
		mut(m)
		b, _ := json.Marshal(m)
		if r := Reply(b, pt); r != nil {
			t.Errorf("%s: rewritten: %s", name, r)
		}
	}
	bad := pt
	bad.Omni = "/opt/my tools/omni"
	if r := Reply(base, bad); r != nil {
		t.Errorf("an omni path with a space was used: %s", r)
	}
	bad.Omni = testOmni + ".missing"
	if r := Reply(base, bad); r != nil {
		t.Errorf("a missing omni binary was named: %s", r)
	}
	bad = pt
	bad.Home = ""
	if r := Reply(base, bad); r != nil {
		t.Errorf("rewrote with no home for the ticket: %s", r)
	}
	cursor := pt
	cursor.Getenv = func(k string) string {
		if k == "CURSOR_VERSION" {
			return "1.7"
		}
		return ""
	}
	if r := Reply(base, cursor); r != nil {
		t.Errorf("rewrote under Cursor: %s", r)
	}
}

// The ticket holds the host's own timeout: the call's, else
// BASH_DEFAULT_TIMEOUT_MS, else two minutes; never over the maximum.
func TestReplyTimeout(t *testing.T) {
	tokenRe := regexp.MustCompile(` pipe --call ([0-9a-f]{32})$`)
	for _, c := range []struct {
		env  map[string]string
		call any
		want int
	}{
		{nil, nil, 120000},
		{map[string]string{"BASH_DEFAULT_TIMEOUT_MS": "30000"}, nil, 30000},
		{nil, 900000, 600000},
		{nil, 1e20, 600000},
		{map[string]string{"BASH_MAX_TIMEOUT_MS": "1200000"}, 900000, 900000},
		{map[string]string{"BASH_DEFAULT_TIMEOUT_MS": "30000"}, 5000, 5000},
	} {
		extra := map[string]any{}
		if c.call != nil {
			extra["timeout"] = c.call
		}
		pt := settings(t, map[string][]string{"allow": omniRules}, c.env)
		cmd, _ := rewritten(t, Reply(payload("make", "default", extra), pt))
		m := tokenRe.FindStringSubmatch(cmd)
		if m == nil {
			t.Fatalf("env %v call %v: not rewritten: %q", c.env, c.call, cmd)
		}
		if tk, _ := Redeem(pt.Home, m[1], time.Now()); tk.TimeoutMS != c.want {
			t.Errorf("env %v call %v: timeout %d, want %d", c.env, c.call, tk.TimeoutMS, c.want)
		}
	}
	pt := settings(t, map[string][]string{"allow": omniRules}, nil)
	if r := Reply(payload("make", "default", map[string]any{"timeout": 0.5}), pt); r != nil {
		t.Errorf("a timeout under a millisecond was taken: %s", r)
	}
}

func TestUnwrapRejectsLookalikes(t *testing.T) {
	tok := "0123456789abcdef0123456789abcdef"
	for _, c := range []string{
		"go test ./...",
		"set -o pipefail; go test ./... 2>&1 | tail -5",
		"set -o pipefail; go test 2>&1 | omni pipe --call " + tok,
		"set -o pipefail; go test 2>&1 | /usr/bin/tee pipe --call " + tok,
		"set -o pipefail; go test 2>&1 | /opt/omni pipe --call " + tok + "0",
		"go test 2>&1 | /opt/omni pipe --call " + tok,
		"cd a && set -o pipefail; make 2>&1 | /opt/omni pipe --call " + tok,
		"set -o pipefail; cd a && make 2>&1 | /opt/omni pipe --call " + tok,
	} {
		if l, r, ok := Unwrap(c); ok {
			t.Errorf("Unwrap(%q) = %q %q", c, l, r)
		}
	}
	// A runner whose own quoted words hold what the rewrite adds.
	line := "pytest -k 'set -o pipefail; x 2>&1 | y'"
	tk, _ := Take(line)
	if l, r, ok := Unwrap(wrap(tk, "/opt/omni", tok)); !ok || l != line || r != line {
		t.Errorf("Unwrap of a quoted look-alike: %q %q %v", l, r, ok)
	}
}
