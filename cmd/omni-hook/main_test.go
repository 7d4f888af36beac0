package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/hooks"
)

// binDir holds omni and omni-hook, built once for the package's tests.
var binDir string

func TestMain(m *testing.M) {
	code := func() int {
		goBin, err := exec.LookPath("go")
		if err != nil {
			fmt.Println("skip: the go command is needed to build the binaries")
			return 0
		}
		dir, err := os.MkdirTemp("", "omni-hook-test-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		for _, b := range [][2]string{{"omni", "../omni"}, {"omni-hook", "."}} {
			if out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
				fmt.Printf("go build %s: %v\n%s", b[1], err, out)
				return 1
			}
		}
		binDir = dir
		return m.Run()
	}()
	os.Exit(code)
}

func payload(t *testing.T) []byte {
	t.Helper()
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "row %03d  /srv/data/part-%04d.bin  checksum %08x\n", i, i*7, i*2654435761)
	}
	b, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": "/tmp/proj", "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "./gen"},
		"tool_response": map[string]any{"stdout": sb.String(), "stderr": "", "interrupted": false, "isImage": false}})
	return b
}

// hook runs bin (a path) with stdin in home and returns stdout; it fails
// the test on a non-zero exit.
func hook(t *testing.T, home string, stdin []byte, bin string, args ...string) []byte {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "OMNI_HOME="+home, "PATH=/usr/bin:/bin")
	c.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, errb.String())
	}
	return out.Bytes()
}

func stopDaemon(home string) {
	c := exec.Command(filepath.Join(binDir, "omni"), "daemon", "--stop")
	c.Env = append(os.Environ(), "OMNI_HOME="+home)
	_ = c.Run()
}

// TestSameRepliesAsOmniHook: omni-hook answers exactly what `omni hook`
// answers. Its first call finds no daemon and runs `omni hook` beside it
// (which starts one); later calls go to the daemon through the wire.
func TestSameRepliesAsOmniHook(t *testing.T) {
	p := payload(t)
	thinHome, fatHome := t.TempDir(), t.TempDir()
	defer stopDaemon(thinHome)
	defer stopDaemon(fatHome)
	thin := filepath.Join(binDir, "omni-hook")
	fat := filepath.Join(binDir, "omni")
	var thinOut, fatOut [][]byte
	for i := 0; i < 3; i++ {
		thinOut = append(thinOut, hook(t, thinHome, p, thin))
		fatOut = append(fatOut, hook(t, fatHome, p, fat, "hook"))
		if i == 0 {
			if _, err := os.Stat(filepath.Join(thinHome, "daemon.addr")); err != nil {
				t.Fatalf("the first omni-hook call did not start a daemon: %v", err)
			}
		}
	}
	for i := range thinOut {
		if !bytes.Equal(thinOut[i], fatOut[i]) {
			t.Fatalf("call %d: omni-hook printed\n%s\nomni hook printed\n%s", i, thinOut[i], fatOut[i])
		}
	}
	if len(thinOut[0]) != 0 || !bytes.Contains(thinOut[1], []byte("omni retrieve ")) {
		t.Fatalf("unexpected replies: first %q, second %q", thinOut[0], thinOut[1])
	}
	var reply map[string]any
	if err := json.Unmarshal(thinOut[1], &reply); err != nil {
		t.Fatalf("the reply is not JSON: %v", err)
	}
	// Every call was recorded: replay over the thin client's home agrees.
	c := exec.Command(fat, "replay", "--verify")
	c.Env = append(os.Environ(), "OMNI_HOME="+thinHome)
	out, err := c.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("invocations 3, compared 3, identical 3")) {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
}

// TestFailsOpen: without a daemon and without an omni binary, or with bad
// input, omni-hook prints nothing and exits 0 (the host keeps its output),
// and says why in omni.log.
func TestFailsOpen(t *testing.T) {
	alone := t.TempDir()
	data, err := os.ReadFile(filepath.Join(binDir, "omni-hook"))
	if err != nil {
		t.Fatal(err)
	}
	thin := filepath.Join(alone, "omni-hook")
	if err := os.WriteFile(thin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if out := hook(t, home, payload(t), thin); len(out) != 0 {
		t.Fatalf("printed %q with no daemon and no omni", out)
	}
	log, _ := os.ReadFile(filepath.Join(home, "omni.log"))
	if !bytes.Contains(log, []byte("no omni binary was found")) {
		t.Fatalf("omni.log says %q", log)
	}
	for _, bad := range []string{"", "not json", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":`} {
		home := t.TempDir()
		if out := hook(t, home, []byte(bad), filepath.Join(binDir, "omni-hook")); len(out) != 0 {
			t.Fatalf("printed %q for input %q", out, bad)
		}
		stopDaemon(home)
	}
}

// TestHelpDoesNotRead: --help prints the usage and never waits for stdin.
func TestHelpDoesNotRead(t *testing.T) {
	c := exec.Command(filepath.Join(binDir, "omni-hook"), "--help")
	r, w, _ := os.Pipe() // stdin that never ends
	defer w.Close()
	c.Stdin = r
	out, err := c.Output()
	if err != nil || !bytes.Contains(out, []byte("Usage: omni-hook")) {
		t.Fatalf("--help: %v\n%s", err, out)
	}
}

// TestOwnPackagesDoNoInitWork: none of the module's packages omni-hook
// links runs code when the process starts (GODEBUG=inittrace=1 lists
// every package whose initialisation does work). The hook client starts
// once per tool call; package-level maps, tables computed by a function
// and init funcs write to the binary's data pages after the runtime
// started its threads, which cost each call about 0.1–0.2 ms before they
// became static data and switch statements (2026-12-02). Write a table as
// a literal of constants (or generate it, as redact's tables.go), a set as
// a switch, or build it on first use (sync.OnceValue).
func TestOwnPackagesDoNoInitWork(t *testing.T) {
	c := exec.Command(filepath.Join(binDir, "omni-hook"), "--help")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("--help: %v\n%s", err, stderr.Bytes())
	}
	traced := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		traced++
		if strings.HasPrefix(f[1], "github.com/omnictx/omni/") {
			t.Errorf("package initialisation does work at every omni-hook start: %s", line)
		}
	}
	if traced == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line (the check would pass vacuously):\n%s", stderr.Bytes())
	}
}

// TestConstantsAgree: the numbers omni-hook copies to stay small are
// omni's: the input limit and the release version.
func TestConstantsAgree(t *testing.T) {
	if maxInput != hooks.MaxInput {
		t.Fatalf("maxInput %d, hooks.MaxInput %d", maxInput, hooks.MaxInput)
	}
	a, err := exec.Command(filepath.Join(binDir, "omni"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(filepath.Join(binDir, "omni-hook"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The release version, without the build (each binary has its own).
	last := func(s []byte) string {
		f := strings.Fields(string(s))
		v, _, _ := strings.Cut(f[len(f)-1], "+")
		return v
	}
	if last(a) != last(b) {
		t.Fatalf("omni --version %q, omni-hook --version %q", a, b)
	}
}

// TestPretoolSameAsOmni: `omni-hook pretool` answers every PreToolUse
// payload exactly as `omni pretool` does, with the omni beside it in the
// rewritten command, and prints nothing where omni prints nothing.
func TestPretoolSameAsOmni(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home) // no user settings: bypass mode decides alone
	pre := func(cmd, mode string, extra map[string]any) []byte {
		in := map[string]any{"command": cmd, "description": "d"}
		p := map[string]any{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": home,
			"permission_mode": mode, "tool_input": in}
		for k, v := range extra {
			p[k] = v
		}
		b, _ := json.Marshal(p)
		return b
	}
	cases := []struct {
		stdin []byte
		args  []string
		want  bool // a rewrite is expected
	}{
		{pre("go test ./...", "bypassPermissions", nil), nil, true},
		{pre("go test ./...", "bypassPermissions", map[string]any{"agent_id": "a1"}), nil, true},
		{pre("cd sub && pytest -k 'a or b'", "bypassPermissions", nil), nil, true},
		{pre("ls -la", "bypassPermissions", nil), nil, false},
		{pre("go test ./...", "default", nil), nil, false},
		{pre("go test ./...", "bypassPermissions", map[string]any{"turn_id": "t1"}), nil, false},
		{[]byte("not json"), nil, false},
	}
	thin, fat := filepath.Join(binDir, "omni-hook"), filepath.Join(binDir, "omni")
	for i, c := range cases {
		got := hook(t, home, c.stdin, thin, append([]string{"pretool"}, c.args...)...)
		want := hook(t, home, c.stdin, fat, append([]string{"pretool"}, c.args...)...)
		// The tokens differ (each call writes its own ticket); the rest is
		// the same.
		tokenRe := regexp.MustCompile(`--call [0-9a-f]{32}`)
		if !bytes.Equal(tokenRe.ReplaceAll(got, []byte("--call T")), tokenRe.ReplaceAll(want, []byte("--call T"))) {
			t.Fatalf("case %d: omni-hook pretool printed\n%s\nomni pretool printed\n%s", i, got, want)
		}
		if rewritten := bytes.Contains(got, []byte(`"updatedInput"`)); rewritten != c.want {
			t.Fatalf("case %d: rewritten %v, want %v: %s", i, rewritten, c.want, got)
		}
		if c.want && !bytes.Contains(got, []byte(fat+" pipe --call ")) {
			t.Fatalf("case %d: the rewrite does not run the omni beside omni-hook: %s", i, got)
		}
	}
	t.Setenv("OMNI_PRETOOL_REWRITE", "0")
	if got := hook(t, home, cases[0].stdin, thin, "pretool"); len(got) != 0 {
		t.Fatalf("OMNI_PRETOOL_REWRITE=0: %s", got)
	}
}

// Cursor also runs the hooks of ~/.claude/settings.json, with its own
// payloads and CURSOR_VERSION set: omni's Claude Code entries (omni-hook,
// omni-hook pretool) answer nothing and record nothing there, while the
// entry omni init --cursor writes (omni-hook cursor) shortens an MCP
// tool's repeated text with the one reply Cursor applies.
func TestCursorRunsClaudeHooksSilently(t *testing.T) {
	t.Setenv("CURSOR_VERSION", "2026.09.18-9a7762b")
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "doc %03d  section %04d  anchor %08x\n", i, i*7, i*2654435761)
	}
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": sb.String()}}})
	p, _ := json.Marshal(map[string]any{"conversation_id": "c1", "session_id": "c1", "hook_event_name": "postToolUse",
		"cursor_version": "2026.09.18-9a7762b", "workspace_roots": []string{"/tmp/proj"}, "tool_name": "MCP:search_docs",
		"tool_input": `{"query":"x"}`, "tool_output": string(out), "tool_use_id": "call_1"})
	pre := []byte(`{"conversation_id":"c1","session_id":"c1","hook_event_name":"preToolUse","cursor_version":"2026.09.18-9a7762b","tool_name":"Shell","tool_input":{"command":"go test ./..."},"permission_mode":"bypassPermissions"}`)
	home := t.TempDir()
	defer stopDaemon(home)
	thin := filepath.Join(binDir, "omni-hook")
	for i := 0; i < 2; i++ {
		if got := hook(t, home, p, thin); len(got) != 0 {
			t.Fatalf("omni's Claude Code hook answered Cursor: %s", got)
		}
		if got := hook(t, home, pre, thin, "pretool"); len(got) != 0 {
			t.Fatalf("omni's Claude Code pretool answered Cursor's preToolUse: %s", got)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "daemon.addr")); err == nil {
		t.Fatal("a dropped call started the daemon")
	}
	if first := hook(t, home, p, thin, "cursor"); len(first) != 0 {
		t.Fatalf("first delivery answered: %s", first)
	}
	second := hook(t, home, p, thin, "cursor")
	var reply map[string]any
	if err := json.Unmarshal(second, &reply); err != nil || len(reply) != 1 || reply["updated_mcp_tool_output"] == nil ||
		!bytes.Contains(second, []byte("omni retrieve ")) {
		t.Fatalf("omni-hook cursor, second delivery: %s (%v)", second, err)
	}
}

// TestRelativeHomeLeftToHost: with a relative OMNI_HOME (another home in
// every project directory, which omni refuses) the thin client prints
// nothing and creates nothing: the host keeps its output.
func TestRelativeHomeLeftToHost(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("OMNI_HOME", "rel/home")
	var out, errb bytes.Buffer
	run(bytes.NewReader(payload(t)), &out, &errb, false)
	if out.Len() != 0 || errb.Len() != 0 {
		t.Fatalf("printed %q, %q", out.String(), errb.String())
	}
	if _, err := os.Stat("rel"); err == nil {
		t.Fatal("a home was created under the working directory")
	}
}
