package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/hostsetup"
)

// TestLastHookErrors: only hook lines, the newest n, long lines cut.
func TestLastHookErrors(t *testing.T) {
	log := filepath.Join(t.TempDir(), "omni.log")
	var b strings.Builder
	for i := 0; i < 8; i++ {
		b.WriteString("2026-11-01T12:00:0" + string(rune('0'+i)) + "Z pid=1 hook: payload has no hook_event_name\n")
		b.WriteString("2026-11-01T12:00:0" + string(rune('0'+i)) + "Z pid=1 daemon unreachable, running call in-process\n")
	}
	b.WriteString("2026-11-01T12:00:09Z pid=1 hook: " + strings.Repeat("x", 400) + "\n")
	if err := os.WriteFile(log, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := lastHookErrors(log, LogLines)
	if len(got) != LogLines {
		t.Fatalf("%d lines: %q", len(got), got)
	}
	if !strings.HasPrefix(got[0], "2026-11-01T12:00:04Z") || len(got[4]) != 300 || !strings.HasSuffix(got[4], "...") {
		t.Fatalf("lines %q", got)
	}
	for _, l := range got {
		if strings.Contains(l, "daemon unreachable") {
			t.Fatalf("not a hook line: %q", l)
		}
	}
	if lastHookErrors(filepath.Join(t.TempDir(), "none"), LogLines) != nil {
		t.Fatal("a missing log has hook errors")
	}
}

func TestSeqListAndBatches(t *testing.T) {
	for _, c := range []struct {
		seqs  []events.Seq
		total int
		want  string
	}{
		{[]events.Seq{5, 7, 8, 9}, 4, "5, 7..9"},
		{[]events.Seq{1, 2}, 10, "1..2, …"},
		{nil, 0, ""},
	} {
		if got := SeqList(c.seqs, c.total); got != c.want {
			t.Errorf("SeqList(%v, %d) = %q, want %q", c.seqs, c.total, got, c.want)
		}
	}
	if Batches(1) != "1 batch" || Batches(0) != "0 batches" || Batches(3) != "3 batches" {
		t.Fatal(Batches(1), Batches(0), Batches(3))
	}
}

func TestClusterLine(t *testing.T) {
	cs := jetstream.ClusterState{Backend: "cluster", URL: "nats://a,nats://b", Status: "CONNECTED", Server: "a", Cluster: "c1",
		Stream: "EVENTS", Replicas: 3, Peers: []jetstream.Peer{{Name: "a", Leader: true}, {Name: "b", Current: true}, {Name: "c", Lag: 4}, {Name: "d", Offline: true}}}
	want := "cluster nats://a,nats://b, connected to a (cluster c1); stream EVENTS R3: a leader, b current, c lagging 4, d offline"
	if got := clusterLine(cs, ""); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := clusterLine(cs, "timeout"); got != "cluster nats://a,nats://b, connected to a (cluster c1); stream EVENTS unreachable" {
		t.Fatal(got)
	}
}

func TestPrint(t *testing.T) {
	rep := Report{Version: "v1", Binary: "/bin/omni", Home: "/h", Store: "ok", Daemon: "off",
		Hosts:    []hostsetup.HostStatus{{Host: "Claude Code", Installed: true, Tier: "Full", Hooks: "~/.claude/settings.json"}, {Host: "OpenCode"}},
		Problems: []string{}}
	var b bytes.Buffer
	Print(&b, rep)
	for _, want := range []string{"omni     v1, /bin/omni; not on $PATH", "Claude Code  Full               ~/.claude/settings.json  -",
		"OpenCode     - (not installed)  -                        -", "no problems found"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	rep.Problems = []string{"one: fix it"}
	b.Reset()
	Print(&b, rep)
	if !strings.HasSuffix(b.String(), "\n1 problem(s):\n  - one: fix it\n") {
		t.Fatalf("%s", b.String())
	}
}

// TestRunInProcess: a fresh home in-process, no host registered, no omni
// on $PATH: the store answers, and the two problems say their fixes.
func TestRunInProcess(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, ".omni")
	t.Setenv("OMNI_NO_DAEMON", "1")
	t.Setenv("PATH", t.TempDir())
	cfg := Config{
		Setup:   hostsetup.Options{Home: dir, ConfigHome: filepath.Join(dir, ".config"), CodexHome: filepath.Join(dir, ".codex"), Omni: filepath.Join(dir, "bin", "omni")},
		Home:    home,
		Version: "test",
		Client: func() *daemon.Client {
			return daemon.NewClient(daemon.Config{Home: home, Version: "test", InProcess: true})
		},
	}
	rep := Run(cfg)
	if rep.Store != "ok" || !strings.HasPrefix(rep.Daemon, "off") || len(rep.Hosts) != len(hostsetup.AllHosts) || rep.Log == nil {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Problems) != 2 || !strings.Contains(rep.Problems[0], "not on $PATH") || !strings.Contains(rep.Problems[1], "omni init --claude") {
		t.Fatalf("problems %q", rep.Problems)
	}
}
