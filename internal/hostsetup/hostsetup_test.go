package hostsetup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/hostsetup/hostsetuptest"
)

// jsoncValue decodes a settings file (hostsetuptest.Object).
func jsoncValue(t *testing.T, src string) map[string]any {
	t.Helper()
	return hostsetuptest.Object(t, src, DecodeJSONC)
}

// omniHandlersOf returns event -> the omni handlers registered for it.
func omniHandlersOf(doc map[string]any) map[string][]map[string]any {
	return hostsetuptest.HandlersOf(doc, func(cmd string) bool { return IsOmniCommand(cmd, "", "hook", "pretool") })
}

// Insert then remove is the identity on many layouts.
func TestJSONEditRoundTrip(t *testing.T) {
	docs := []string{
		`{}`, "{\n}\n", `{"a":1}`, `{ "a": 1, "b": [1, 2] }`, "{\n  \"a\": {\n    \"b\": []\n  }\n}\n",
		"{\n\t\"a\": [\n\t\t{\"x\": 1}\n\t]\n}", "// lead\n{\"a\": /* in */ 1}\n",
	}
	for _, d := range docs {
		for _, e := range []hookEntry{{event: "PostToolUse", matcher: "Bash", sub: "hook", timeout: 5}} {
			out, err := applyHookEntries([]byte(d), []hookEntry{e}, "/o/omni", true)
			if err != nil {
				t.Fatalf("%q: %v", d, err)
			}
			if _, err := parseJSONC(out); err != nil {
				t.Fatalf("%q gave invalid JSON %q: %v", d, out, err)
			}
			again, _ := applyHookEntries(out, []hookEntry{e}, "/o/omni", true)
			if !bytes.Equal(again, out) {
				t.Fatalf("%q: not idempotent:\n%s\n%s", d, out, again)
			}
			back, err := applyHookEntries(out, nil, "/o/omni", false)
			if err != nil {
				t.Fatal(err)
			}
			if hs := omniHandlersOf(jsoncValue(t, string(back))); len(hs) != 0 {
				t.Fatalf("%q: omni left after removal: %s", d, back)
			}
		}
		out, err := applyMCPEntry([]byte(d), "mcpServers", omap{{"command", "/o/omni"}, {"args", []string{"mcp"}}}, "/o/omni", true)
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		back, _ := applyMCPEntry(out, "mcpServers", nil, "/o/omni", false)
		if !reflect.DeepEqual(jsoncValue(t, string(back)), jsoncValue(t, d)) {
			t.Fatalf("MCP round trip of %q: %q -> %q", d, out, back)
		}
		// Into an object with members, removal is the exact inverse.
		if root, _ := parseJSONC([]byte(d)); len(root.members) > 0 && string(back) != d {
			t.Fatalf("MCP round trip of %q: %q -> %q", d, out, back)
		}
	}
	for _, bad := range []string{`[1]`, `{"hooks": 3}`, `{"a":}`, `{"a":1} x`, `{"a":1,}`} {
		if _, err := applyHookEntries([]byte(bad), claudeEntries(false), "/o/omni", true); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCodexTOMLRoundTrip(t *testing.T) {
	for _, orig := range []string{"", "model = \"o3\"\n", "model = \"o3\"", "[a]\nx = 1\n\n[b]\ny = 2\n"} {
		out, _ := applyCodexTOML([]byte(orig), "/o/omni", true)
		if !bytes.HasSuffix(out, []byte(codexBlock("/o/omni"))) {
			t.Fatalf("%q -> %q", orig, out)
		}
		if again, _ := applyCodexTOML(out, "/o/omni", true); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q", again)
		}
		backB, _ := applyCodexTOML(out, "/o/omni", false)
		back := string(backB)
		want := orig
		if want != "" && !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if back != want {
			t.Fatalf("%q -> %q -> %q", orig, out, back)
		}
	}
	// A stale table (another path, a sub-table) is replaced whole, in place.
	src := "[mcp_servers.omni]\ncommand = \"/old/omni\"\n[mcp_servers.omni.env]\nA = \"1\"\n\n[other]\nk = 1\n"
	gotB, _ := applyCodexTOML([]byte(src), "/o/omni", true)
	got := string(gotB)
	if got != codexBlock("/o/omni")+"\n[other]\nk = 1\n" {
		t.Fatalf("got %q", got)
	}
}

// pluginDriver loads the plugin under node and calls its hooks; it prints
// the output object after tool.execute.after.
const pluginDriver = `
import { OmniPlugin } from "./omni.mjs";
const hooks = await OmniPlugin({ directory: process.env.DRIVER_DIR });
const input = JSON.parse(process.env.DRIVER_INPUT);
const output = JSON.parse(process.env.DRIVER_OUTPUT);
const t0 = Date.now();
await hooks["tool.execute.after"](input, output);
if (process.env.DRIVER_EVENT) await hooks.event({ event: JSON.parse(process.env.DRIVER_EVENT) });
process.stdout.write(JSON.stringify({ output, ms: Date.now() - t0 }));
`

type pluginRun struct {
	Output map[string]any `json:"output"`
	MS     int            `json:"ms"`
}

func runPlugin(t *testing.T, dir, path string, env []string, input, output map[string]any) pluginRun {
	t.Helper()
	in, _ := json.Marshal(input)
	out, _ := json.Marshal(output)
	cmd := exec.Command("node", "driver.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+path, "DRIVER_DIR=/home/u/proj", "DRIVER_INPUT="+string(in), "DRIVER_OUTPUT="+string(out))
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v\n%s", err, stderr)
	}
	var r pluginRun
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("driver output %q: %v", b, err)
	}
	return r
}

// The OpenCode shim under node, with a stub omni on PATH: it sends the
// payload omni expects and assigns the answer; every failure leaves the
// output alone.
func TestOpenCodePluginStub(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	hostsetuptest.WriteFile(t, filepath.Join(dir, "omni.mjs"), string(pluginFor("omni")))
	hostsetuptest.WriteFile(t, filepath.Join(dir, "driver.mjs"), pluginDriver)
	stub := `#!/bin/sh
[ "$1" = hook ] || exit 3
cat > "$STUB_DIR/payload.$$.json"
cp "$STUB_DIR/payload.$$.json" "$STUB_DIR/last.json"
case "$STUB_MODE" in
reply) printf '{"output":"SHORT [OMNI: 3 lines already shown, omni retrieve 0123456789abcdef]"}\n' ;;
empty) ;;
garbage) printf 'not json\n' ;;
fail) printf '{"output":"x"}\n'; exit 1 ;;
object) printf '{"output":{"a":1}}\n' ;;
slow) exec sleep 5 ;;
esac
`
	hostsetuptest.WriteFile(t, filepath.Join(bin, "omni"), stub)
	os.Chmod(filepath.Join(bin, "omni"), 0o755)
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	input := map[string]any{"tool": "bash", "sessionID": "ses_1", "callID": "call_9", "args": map[string]any{"command": "go test ./..."}}
	output := map[string]any{"title": "go test", "output": "LONG OUTPUT\n", "metadata": map[string]any{"exit": 0, "description": "tests"}}

	r := runPlugin(t, dir, path, []string{"STUB_DIR=" + dir, "STUB_MODE=reply"}, input, output)
	if r.Output["output"] != "SHORT [OMNI: 3 lines already shown, omni retrieve 0123456789abcdef]" {
		t.Fatalf("reply not assigned: %v", r.Output)
	}
	if r.Output["title"] != "go test" || !reflect.DeepEqual(r.Output["metadata"], map[string]any{"exit": 0.0, "description": "tests"}) {
		t.Fatalf("other keys changed: %v", r.Output)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(hostsetuptest.ReadFile(t, filepath.Join(dir, "last.json"))), &p); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"host": "opencode", "hook_event_name": "PostToolUse", "session_id": "ses_1", "tool_use_id": "call_9",
		"cwd": "/home/u/proj", "tool_name": "bash", "tool_input": map[string]any{"command": "go test ./..."},
		"tool_response": map[string]any{"output": "LONG OUTPUT\n", "exit": 0.0}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("payload %v\nwant    %v", p, want)
	}
	for _, mode := range []string{"empty", "garbage", "fail", "object"} {
		r := runPlugin(t, dir, path, []string{"STUB_DIR=" + dir, "STUB_MODE=" + mode}, input, output)
		if r.Output["output"] != "LONG OUTPUT\n" {
			t.Errorf("%s: output changed to %v", mode, r.Output["output"])
		}
	}
	// omni missing from PATH: fail open.
	os.Remove(filepath.Join(dir, "last.json"))
	if r := runPlugin(t, dir, "/nonexistent", nil, input, output); r.Output["output"] != "LONG OUTPUT\n" {
		t.Fatalf("no omni: %v", r.Output)
	}
	// Tools omni does not shorten are not sent at all.
	edit := map[string]any{"tool": "edit", "sessionID": "ses_1", "callID": "c", "args": map[string]any{}}
	if r := runPlugin(t, dir, path, []string{"STUB_DIR=" + dir, "STUB_MODE=reply"}, edit, output); r.Output["output"] != "LONG OUTPUT\n" {
		t.Fatalf("edit changed: %v", r.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "last.json")); !os.IsNotExist(err) {
		t.Fatal("edit was sent to omni")
	}
	// A slow omni is abandoned after the timeout.
	r = runPlugin(t, dir, path, []string{"STUB_DIR=" + dir, "STUB_MODE=slow", "OMNI_HOOK_TIMEOUT_MS=300"}, input, output)
	if r.Output["output"] != "LONG OUTPUT\n" || r.MS > 3500 {
		t.Fatalf("slow: %v after %d ms", r.Output["output"], r.MS)
	}
	// A compaction event reaches omni as PostCompact for that session.
	os.Remove(filepath.Join(dir, "last.json"))
	runPlugin(t, dir, path, []string{"STUB_DIR=" + dir, "STUB_MODE=empty", `DRIVER_EVENT={"type":"session.compacted","properties":{"sessionID":"ses_1"}}`}, edit, output)
	if err := json.Unmarshal([]byte(hostsetuptest.ReadFile(t, filepath.Join(dir, "last.json"))), &p); err != nil {
		t.Fatal(err)
	}
	if p["hook_event_name"] != "PostCompact" || p["session_id"] != "ses_1" || p["host"] != "opencode" {
		t.Fatalf("compaction payload %v", p)
	}
}

// TestInitRegistersThinHookClient: with omni-hook beside the omni binary,
// the hook entries run it (the pretool entry runs `omni-hook pretool`), installing
// again changes nothing, the registration reads back as omni's (for
// doctor and uninstall), and uninstall removes every entry.
func TestInitRegistersThinHookClient(t *testing.T) {
	dir := t.TempDir()
	omni := filepath.Join(dir, "omni")
	for _, name := range []string{"omni", "omni-hook"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries := claudeEntries(true)
	out, err := applyHookEntries(nil, entries, omni, true)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.Contains(text, `"command": "`+filepath.Join(dir, "omni-hook")+`"`) {
		t.Fatalf("hook entries do not run omni-hook:\n%s", text)
	}
	if !strings.Contains(text, `"command": "`+filepath.Join(dir, "omni-hook")+` pretool"`) {
		t.Fatalf("the pretool entry does not run omni-hook pretool:\n%s", text)
	}
	// A registration an older omni wrote (`omni pretool`) is replaced in
	// place, not doubled.
	old := strings.Replace(text, filepath.Join(dir, "omni-hook")+` pretool"`, omni+` pretool"`, 1)
	if up, err := applyHookEntries([]byte(old), entries, omni, true); err != nil || !bytes.Equal(up, out) {
		t.Fatalf("upgrade from omni pretool (%v):\n%s", err, up)
	}
	again, err := applyHookEntries(out, entries, omni, true)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("a second install changed the file (%v)", err)
	}
	if got := binariesIn(out); len(got) != 1 || got[0] != omni {
		t.Fatalf("binariesIn = %v, want [%s]", got, omni)
	}
	back, err := applyHookEntries(out, nil, omni, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(back), "omni") {
		t.Fatalf("uninstall left omni entries:\n%s", back)
	}
	// Without omni-hook beside it, the entries run omni hook, as before.
	os.Remove(filepath.Join(dir, "omni-hook"))
	plain, _ := applyHookEntries(nil, entries, omni, true)
	if strings.Contains(string(plain), "omni-hook") || !strings.Contains(string(plain), omni+` hook"`) {
		t.Fatalf("without omni-hook:\n%s", plain)
	}
}

// hostOmniBinary builds cmd/omni into a temporary directory.
func hostOmniBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is needed to build omni: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "omni")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/omnictx/omni/cmd/omni").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The shim end to end with the real omni: the second identical output
// reaches the model as one marker whose handle gives the bytes back.
func TestOpenCodePluginWithOmni(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	omni := hostOmniBinary(t)
	home := t.TempDir()
	dir := t.TempDir()
	hostsetuptest.WriteFile(t, filepath.Join(dir, "omni.mjs"), string(pluginFor(omni)))
	hostsetuptest.WriteFile(t, filepath.Join(dir, "driver.mjs"), pluginDriver)
	var long strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&long, "/home/u/proj/pkg/file_%03d.txt: the quick brown fox jumps over the lazy dog\n", i)
	}
	input := map[string]any{"tool": "bash", "sessionID": "ses_e2e", "callID": "c1", "args": map[string]any{"command": "go test ./..."}}
	output := map[string]any{"title": "t", "output": long.String(), "metadata": map[string]any{"exit": 0}}
	env := []string{"OMNI_HOME=" + filepath.Join(home, ".omni"), "OMNI_NO_DAEMON=1"}
	r := runPlugin(t, dir, os.Getenv("PATH"), env, input, output)
	if r.Output["output"] != long.String() {
		t.Fatalf("first call changed: %v", r.Output["output"])
	}
	r = runPlugin(t, dir, os.Getenv("PATH"), env, input, output)
	got, _ := r.Output["output"].(string)
	m := regexp.MustCompile(`\[OMNI: [^\]]*omni retrieve ([0-9a-f]{16})`).FindStringSubmatch(got)
	if m == nil || len(got) >= long.Len() {
		t.Fatalf("second call: %q", got)
	}
	cmd := exec.Command(omni, "retrieve", m[1])
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.Output()
	if err != nil || len(b) == 0 || !strings.Contains(long.String(), string(b)) {
		t.Fatalf("retrieve %s: %v %q", m[1], err, b)
	}
	// A failing command (exit 1) is never shortened.
	output["metadata"] = map[string]any{"exit": 1}
	if r := runPlugin(t, dir, os.Getenv("PATH"), env, input, output); r.Output["output"] != long.String() {
		t.Fatal("failure shortened")
	}
}
