package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// The team tests run two daemons, as two machines would, with two homes
// and two clones of one repository (same remote URL), on a three-node
// JetStream cluster of real nats-servers started in this process.

// teamMachine is one machine: its home, its clone and its daemon's client.
type teamMachine struct {
	name, home, clone string
	cfg               Config
	client            *Client
}

// teamRepo makes a bare repository and two clones of it; it skips the test
// when git is missing.
func teamRepo(t *testing.T) (remote, cloneA, cloneB string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	remote = filepath.Join(dir, "remote.git")
	cloneA, cloneB = filepath.Join(dir, "a", "repo"), filepath.Join(dir, "b", "repo")
	for _, args := range [][]string{{"init", "-q", "--bare", remote}, {"clone", "-q", remote, cloneA}, {"clone", "-q", remote, cloneB}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return remote, cloneA, cloneB
}

// startTeamDaemon runs the real daemon (ServiceHandler) of m in a goroutine.
func startTeamDaemon(t *testing.T, m *teamMachine) *daemonRun {
	t.Helper()
	r := &daemonRun{done: make(chan struct{})}
	go func() {
		r.err = Run(context.Background(), m.cfg, time.Hour, t.Logf, ServiceHandler(m.cfg))
		close(r.done)
	}()
	t.Cleanup(func() {
		_, _ = m.client.Stop(context.Background(), 10*time.Second)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("daemon did not stop at cleanup")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m.client.Ping(context.Background()) == nil {
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("daemon %s returned early: %v", m.name, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon %s not ready", m.name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newTeam starts a three-node cluster and two machines' daemons on it.
func newTeam(t *testing.T) (*jstest.Cluster, *teamMachine, *teamMachine) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	_, cloneA, cloneB := teamRepo(t)
	c := jstest.Start(t, 3)
	mk := func(name, clone string) *teamMachine {
		home := t.TempDir()
		cfg := Config{Home: home, Version: testVersion, ClusterURL: c.URL(), Cluster: jetstream.Remote{Stream: "TEAM"}}
		return &teamMachine{name: name, home: home, clone: clone, cfg: cfg, client: NewClient(cfg)}
	}
	a, b := mk("a", cloneA), mk("b", cloneB)
	startTeamDaemon(t, a)
	startTeamDaemon(t, b)
	return c, a, b
}

// teamText is n distinct lines tagged tag.
func teamText(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s row %03d  /srv/data/%s/part-%04d.bin  checksum %08x\n", tag, i, tag, i*7, i*2654435761)
	}
	return b.String()
}

// hook sends one Bash PostToolUse of session to m's daemon, run in m's
// clone, and returns what the hook prints.
func (m *teamMachine) hook(t *testing.T, session, cmd, stdout string) string {
	t.Helper()
	p, _ := json.Marshal(map[string]any{"session_id": session, "cwd": m.clone, "hook_event_name": "PostToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := m.client.Hook(ctx, append([]byte{0}, p...))
	if err != nil {
		t.Fatalf("%s: hook: %v", m.name, err)
	}
	return string(out)
}

var handleRE = regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)

func TestTeamCrossMachineFoldAndRetrieve(t *testing.T) {
	_, a, b := newTeam(t)
	shared := teamText("shared", 20)
	a.hook(t, "sa", "cat a-own.txt", teamText("a-own", 20))
	b.hook(t, "sb", "cat b-own.txt", teamText("b-own", 20))
	a.hook(t, "sa", "cat shared.txt", teamText("a-new", 20)+shared)

	// b's reader never saw the shared lines; a's did, in the same
	// repository (another clone, another machine): a project fold.
	out := b.hook(t, "sb", "cat mixed.txt", teamText("b-new", 20)+shared)
	if !strings.Contains(out, "not shown here") || strings.Contains(out, "already shown") {
		t.Fatalf("b's reply has no project fold of a's lines:\n%s", out)
	}
	if !strings.Contains(out, "b-new row 000") {
		t.Fatalf("b's reply lost its new lines:\n%s", out)
	}
	m := handleRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no handle in %s", out)
	}
	// a's daemon folds b's batches as they come: it retrieves b's handle
	// (the bytes a archived first, or b's copy) byte for byte.
	ctx := context.Background()
	var got []byte
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		got, err = a.client.Retrieve(ctx, RetrieveRequest{Handle: m[1]})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || string(got) != shared {
		t.Fatalf("a retrieves %s: %v (%d bytes, want %d)", m[1], err, len(got), len(shared))
	}
	// b's own reader: its own lines fold in session scope; the shared
	// ones come whole, since a retrieval without a reader leaves every
	// reader shown that handle owed one whole delivery.
	if out := b.hook(t, "sb", "cat mixed.txt", teamText("b-new", 20)+shared); !strings.Contains(out, "lines already shown, omni retrieve") ||
		!strings.Contains(out, "shared row 019") || strings.Contains(out, "not shown here") {
		t.Fatalf("b's rerun:\n%s", out)
	}

	// The team view: both machines' calls, told apart, on either machine.
	rep, err := a.client.Stats(ctx, StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Agent.ByMachine) != 2 || rep.Agent.ByMachine[0].Name == rep.Agent.ByMachine[1].Name || len(rep.Agent.ByUser) != 1 {
		t.Fatalf("by machine %+v, by user %+v", rep.Agent.ByMachine, rep.Agent.ByUser)
	}

	// Both machines hold the same log and verify every decision, each
	// made on either machine.
	for _, mc := range []*teamMachine{a, b} {
		rep, err := mc.client.Replay(ctx, ReplayRequest{Verify: true})
		if err != nil {
			t.Fatalf("%s: verify: %v", mc.name, err)
		}
		s := rep.Summary
		if s.Compared < 5 || s.Identical != s.Compared || len(s.Mismatches) > 0 {
			t.Fatalf("%s: verify %+v", mc.name, s)
		}
	}
}

func TestTeamProjectIdentity(t *testing.T) {
	remote, cloneA, cloneB := teamRepo(t)
	pa, pb := TeamProjectOf(filepath.Join(cloneA)), TeamProjectOf(cloneB)
	if pa != pb || pa != strings.TrimSuffix(remote, ".git") {
		t.Fatalf("two clones of %s: projects %q and %q", remote, pa, pb)
	}
	sub := filepath.Join(cloneA, "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if p := TeamProjectOf(sub); p != pa {
		t.Fatalf("a directory inside the clone: %q, want %q", p, pa)
	}
	plain := t.TempDir()
	if p := TeamProjectOf(plain); p != plain {
		t.Fatalf("no repository: %q, want the path %q", p, plain)
	}
	for in, want := range map[string]string{
		"git@github.com:Org/Repo.git":              "github.com/Org/Repo",
		"https://user:pw@GitHub.com/Org/Repo.git/": "github.com/Org/Repo",
		"ssh://git@github.com:22/Org/Repo":         "github.com/Org/Repo",
		"file:///srv/git/repo.git":                 "/srv/git/repo",
		"/srv/git/repo.git/":                       "/srv/git/repo",
		"":                                         "",
	} {
		if got := NormalizeRemote(in); got != want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", in, got, want)
		}
	}
	home := t.TempDir()
	m1, u1 := Identity(home)
	m2, _ := Identity(home)
	m3, _ := Identity(t.TempDir())
	if m1 != m2 || m1 == m3 || !strings.Contains(m1, "/") || u1 == "" {
		t.Fatalf("Identity: %q %q %q user %q", m1, m2, m3, u1)
	}
}

// waitFold sends the same Bash output from m until a reply folds it (the
// cluster stores again), up to 60 s, and returns that reply.
func waitFold(t *testing.T, m *teamMachine, session, cmd, stdout string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := m.hook(t, session, cmd, stdout)
		if strings.Contains(out, "omni retrieve") {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no fold within 60 s; last reply %q", m.name, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTeamNodeDownAndClusterStopped: with one node of three down the
// machines keep recording (R3 keeps a quorum); with the whole cluster
// stopped hooks pass output through and record nothing; after a restart
// both machines record again, every handle printed before retrieves on
// both, and every decision verifies on both.
func TestTeamNodeDownAndClusterStopped(t *testing.T) {
	c, a, b := newTeam(t)
	ctx := context.Background()
	handles := map[string]bool{}
	note := func(out string) {
		for _, m := range handleRE.FindAllStringSubmatch(out, -1) {
			handles[m[1]] = true
		}
	}
	text := teamText("before", 20)
	a.hook(t, "sa", "cat before.txt", text)
	note(waitFold(t, a, "sa", "cat before.txt", text))

	// One node down, not the stream's leader.
	leader := c.Leader("TEAM")
	if leader < 0 {
		t.Fatal("no node leads the stream")
	}
	c.Stop((leader + 1) % 3)
	text = teamText("node-down", 20)
	b.hook(t, "sb", "cat node.txt", text)
	note(waitFold(t, b, "sb", "cat node.txt", text))

	// The whole cluster stopped: pass-through, nothing recorded.
	// Asked of b, whose append just succeeded: a's connection may have
	// been to the stopped node and still be moving to another.
	lastBefore := func() uint64 {
		rep, err := b.client.Health(ctx)
		if err != nil || rep.Unreachable != "" {
			t.Fatalf("health before the stop: %v %q", err, rep.Unreachable)
		}
		return uint64(rep.Last)
	}()
	c.StopAll()
	down := teamText("down", 20)
	for i := 0; i < 10; i++ {
		for _, m := range []*teamMachine{a, b} {
			if out := m.hook(t, "s"+m.name, "cat down.txt", down); out != "" {
				t.Fatalf("%s printed %q with the cluster stopped", m.name, out)
			}
		}
	}
	if rep, err := b.client.Health(ctx); err != nil || rep.Unreachable == "" || rep.Cluster.Backend != "cluster" {
		t.Fatalf("health with the cluster stopped: %+v %v", rep, err)
	}
	// Every handle, on both machines, whether this machine folded its
	// batch (the read fails) or not yet (unknown here is no answer while
	// the stream cannot be read): ErrClusterDown, not "unknown handle".
	for _, m := range []*teamMachine{a, b} {
		for h := range handles {
			if _, err := m.client.Retrieve(ctx, RetrieveRequest{Handle: h}); !errors.Is(err, ErrClusterDown) {
				t.Fatalf("%s: retrieve %s with the cluster stopped: %v, want ErrClusterDown", m.name, h, err)
			}
		}
	}

	c.StartAll()
	after := teamText("after", 20)
	a.hook(t, "sa2", "cat after.txt", after)
	note(waitFold(t, a, "sa2", "cat after.txt", after))
	b.hook(t, "sb2", "cat after.txt", after)
	note(waitFold(t, b, "sb2", "cat after.txt", after))

	// Nothing from the outage was recorded; nothing acknowledged was lost.
	for _, m := range []*teamMachine{a, b} {
		for h := range handles {
			var err error
			for deadline := time.Now().Add(10 * time.Second); ; {
				if _, err = m.client.Retrieve(ctx, RetrieveRequest{Handle: h}); err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("%s: handle %s printed before does not retrieve: %v", m.name, h, err)
			}
		}
		rep, err := m.client.Replay(ctx, ReplayRequest{Verify: true})
		if err != nil {
			t.Fatalf("%s: verify: %v", m.name, err)
		}
		if s := rep.Summary; s.Identical != s.Compared || s.Compared == 0 || s.MissingCount > 0 {
			t.Fatalf("%s: verify %+v", m.name, s)
		}
		if uint64(rep.Last) <= lastBefore {
			t.Fatalf("%s: log ends at %d, before the stop at %d", m.name, rep.Last, lastBefore)
		}
	}
}

// TestClusterDownAtStart: a daemon that cannot reach its cluster exits and
// marks the home, and every request then fails at once with ErrClusterDown
// (a hook passes through) until the back-off passes.
func TestClusterDownAtStart(t *testing.T) {
	home := t.TempDir()
	dead := "nats://127.0.0.1:" + fmt.Sprint(freePort(t))
	cfg := Config{Home: home, Version: testVersion, ClusterURL: dead}
	err := Run(context.Background(), cfg, time.Minute, t.Logf, ServiceHandler(cfg))
	if err == nil {
		t.Fatal("a daemon started without its cluster")
	}
	if err := ClusterDown(home); !errors.Is(err, ErrClusterDown) {
		t.Fatalf("ClusterDown after a failed start = %v", err)
	}
	c := NewClient(cfg)
	c.SpawnCommand = func(string) (*exec.Cmd, error) {
		t.Fatal("a client spawned a daemon inside the back-off")
		return nil, nil
	}
	if _, err := c.Hook(context.Background(), []byte{0, '{', '}'}); !errors.Is(err, ErrClusterDown) {
		t.Fatalf("hook inside the back-off: %v, want ErrClusterDown", err)
	}
	d1, _ := readClusterDown(home)
	markClusterDown(home, errors.New("racing"))
	if d, _ := readClusterDown(home); d.Backoff != d1.Backoff {
		t.Fatalf("a failure inside the back-off changed it: %s after %s", d.Backoff, d1.Backoff)
	}
	// The back-off passed and the next try failed too: doubled.
	d1.Until = time.Now().Add(-time.Second)
	b, _ := json.Marshal(d1)
	if err := os.WriteFile(clusterDownPath(home), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ClusterDown(home); err != nil {
		t.Fatalf("ClusterDown after the back-off = %v", err)
	}
	markClusterDown(home, errors.New("again"))
	d2, _ := readClusterDown(home)
	if d2.Backoff != 2*d1.Backoff {
		t.Fatalf("back-off %s after %s, want it doubled", d2.Backoff, d1.Backoff)
	}
	clearClusterDown(home)
	if err := ClusterDown(home); err != nil {
		t.Fatalf("ClusterDown after clear = %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
