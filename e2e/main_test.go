package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/testbin"
)

// runTimeout bounds one host CLI run. A run takes 10–60 s on an idle
// 2-core machine; 8 minutes leaves room for a machine shared by several
// builds (OpenCode took 245 s at a load average of 25) and keeps the
// package under the README's 15-minute test timeout.
const runTimeout = 8 * time.Minute

// binDir holds the omni and omni-hook binaries built once by TestMain.
var binDir string

// hostTests is how many tests of the package run a host CLI (each a
// t.Parallel test): TestClaudeCode, TestClaudeCodeMCP,
// TestClaudeCodeRewrite, TestCodex, TestGeminiCLI, TestOpenCode,
// TestCopilot, TestCline, TestKilo, TestDroid.
const hostTests = 10

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "omni-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, b := range []string{"omni", "omni-hook"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b), "../cmd/"+b)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go build %s: %v\n", b, err)
			return 1
		}
	}
	binDir = dir
	// The host tests share nothing (each run has its own sandbox, home,
	// OMNI_HOME, daemon and mock on a port of its own) and mostly wait:
	// with four at a time the package took 198 s wall for 113 s of CPU on
	// the 2-core machine (57%, 2026-12-02), its tests queueing behind the
	// slowest four. All of them start at once.
	testbin.Parallel(hostTests)
	return m.Run()
}

// clisDir is where e2e/install.sh put the CLIs.
func clisDir() string {
	if d := os.Getenv("OMNI_E2E_CLIS"); d != "" {
		return d
	}
	wd, _ := os.Getwd()
	return filepath.Join(wd, ".clis")
}

// cliPath returns the runnable program of a CLI installed by install.sh,
// or skips the test naming the CLI and the version it needs.
func cliPath(t *testing.T, name, spec, rel string) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("%s: the suite installs the linux-x64 build only", spec)
	}
	p := filepath.Join(clisDir(), name, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed (%s missing): run e2e/install.sh", spec, p)
	}
	return p
}

// request is one request a mock received.
type request struct {
	Path string
	Body []byte
}

// mock is a loopback HTTP server that records every request and answers
// with respond. Problems it meets (a malformed request) fail the test.
type mock struct {
	t       *testing.T
	srv     *http.Server
	URL     string
	mu      sync.Mutex
	reqs    []request
	respond func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newMock(t *testing.T, respond func(w http.ResponseWriter, r *http.Request, body []byte)) *mock {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mock{t: t, URL: "http://" + ln.Addr().String(), respond: respond}
	m.srv = &http.Server{Handler: m}
	go m.srv.Serve(ln)
	t.Cleanup(func() { m.srv.Close() })
	return m
}

func (m *mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		m.t.Errorf("mock: reading %s: %v", r.URL.Path, err)
		http.Error(w, err.Error(), 500)
		return
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, request{Path: r.URL.Path, Body: body})
	m.mu.Unlock()
	if os.Getenv("E2E_DEBUG") != "" {
		m.t.Logf("%s mock: %s %s %d bytes", time.Now().Format("15:04:05.000"), r.Method, r.URL.Path, len(body))
	}
	m.respond(w, r, body)
}

// requests returns a copy of what the mock received so far.
func (m *mock) requests() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.reqs...)
}

// sse writes server-sent events: each ev is {event name ("" for none), data}.
func sse(w http.ResponseWriter, evs ...[2]string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	for _, e := range evs {
		if e[0] != "" {
			fmt.Fprintf(w, "event: %s\n", e[0])
		}
		fmt.Fprintf(w, "data: %s\n\n", e[1])
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// js marshals v or panics (the values are the tests' own).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sandbox is one host run's temporary world: HOME, config dirs, OMNI_HOME,
// and a project directory holding the script's files.
type sandbox struct {
	t       *testing.T
	root    string
	home    string
	omni    string // OMNI_HOME
	project string
	env     []string
}

// newSandbox makes the directories and the environment every command of
// the run gets: nothing of the machine's own HOME or config is passed.
func newSandbox(t *testing.T, extraPath ...string) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{t: t, root: root, home: filepath.Join(root, "home"), omni: filepath.Join(root, "omnihome"), project: filepath.Join(root, "proj")}
	for _, d := range []string{s.home, s.omni, s.project, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := append([]string{binDir}, extraPath...)
	path = append(path, "/usr/local/bin", "/usr/bin", "/bin")
	s.env = []string{
		"HOME=" + s.home,
		"PATH=" + strings.Join(path, ":"),
		"OMNI_HOME=" + s.omni,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
	}
	writeScriptFiles(t, s.project)
	// Hosts that run commands in a login shell (Codex: bash -lc) take PATH
	// from the profile: omni is on it there too, as after an install.
	profile := "export PATH=\"" + binDir + ":$PATH\"\n"
	if err := os.WriteFile(filepath.Join(s.home, ".profile"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The daemon exits when its home disappears; stop it now so
		// nothing outlives the test.
		cmd := exec.Command(filepath.Join(binDir, "omni"), "daemon", "--stop")
		cmd.Env = s.env
		_ = cmd.Run()
	})
	return s
}

// run runs a program in the project directory with the sandbox's
// environment plus extra, and returns its stdout; a non-zero exit or a
// timeout fails the test with both streams.
func (s *sandbox) run(timeout time.Duration, extra []string, prog string, args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = s.project
	cmd.Env = append(append([]string(nil), s.env...), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	s.t.Logf("%s %s: %.1fs (cpu %.1fs)", filepath.Base(prog), strings.Join(args, " "), time.Since(t0).Seconds(), cpu.Seconds())
	if err != nil {
		s.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(prog), strings.Join(args, " "), err, tail(out.String(), 3000), tail(errb.String(), 3000))
	}
	return out.String()
}

// omniInit registers omni with a host the way a user does.
func (s *sandbox) omniInit(flag string, extra ...string) {
	s.t.Helper()
	s.run(time.Minute, extra, filepath.Join(binDir, "omni"), "init", flag)
}

// omniLog returns the sandbox's omni.log (fail-open reasons).
func (s *sandbox) omniLog() string {
	b, _ := os.ReadFile(filepath.Join(s.omni, "omni.log"))
	return string(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// handleRe finds a marker's handle in what the model read.
var handleRe = regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)
