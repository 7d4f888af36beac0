package jetstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// TestTeamCluster opens two stores (two machines' daemons, each with its
// own lock directory and RPC front) on a three-node cluster: they share one
// R3 stream, each reads the other's appends, and the log keeps going with
// a node down.
func TestTeamCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx := context.Background()
	c := jstest.Start(t, 3)
	o := Options{URL: c.URL(), Listen: true, Token: "tok", TLS: jstest.ServerTLS(t), Remote: Remote{Stream: "TEAM"}}
	oa, ob := o, o
	oa.Dir, ob.Dir = t.TempDir(), t.TempDir()
	a := openT(t, oa)
	b := openT(t, ob)
	if a.Addr() == "" || a.Conn() == nil || a.Conn() == a.nc {
		t.Fatalf("a remote store opened with Listen has no local front: addr %q", a.Addr())
	}
	if _, err := Open(ctx, Options{URL: c.URL(), Dir: oa.Dir, Remote: Remote{Stream: "TEAM"}}); err == nil {
		t.Fatal("a second Open on a locked directory succeeded")
	}
	cs := a.Cluster(ctx)
	if cs.Backend != "cluster" || cs.Replicas != 3 || len(cs.Peers) != 3 || cs.Stream != "TEAM" || cs.Error != "" {
		t.Fatalf("Cluster() = %+v, want 3 replicas of TEAM", cs)
	}
	if a.subject != "omni.events.TEAM" {
		t.Fatalf("subject %q", a.subject)
	}
	s1, err := a.Append(ctx, []events.Event{ev(1)})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Append(ctx, []events.Event{ev(2)})
	if err != nil || s2 != s1+1 {
		t.Fatalf("b.Append = %d, %v; want %d", s2, err, s1+1)
	}
	for _, st := range []*Store{a, b} {
		var ids []string
		if err := st.Read(ctx, 0, func(e events.Event) error { ids = append(ids, e.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 2 || ids[0] != ev(1).ID || ids[1] != ev(2).ID {
			t.Fatalf("Read = %v", ids)
		}
	}

	// One node that does not lead the stream goes down: R3 keeps a quorum.
	leader := c.Leader("TEAM")
	if leader < 0 {
		t.Fatal("no node leads the stream")
	}
	down := (leader + 1) % 3
	t.Logf("stream leader %s, stopping %s", c.Name(leader), c.Name(down))
	c.Stop(down)
	// A publish written to the stopped node's socket before the client
	// noticed is lost (never stored): at most that one fails.
	// After that failure the store backs off (ErrUnreachable, nothing
	// sent): such refusals are waited out, not counted as sent appends.
	stored, failed := 0, 0
	giveUp := time.Now().Add(30 * time.Second)
	for i := 3; i < 8 && time.Now().Before(giveUp); {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := a.Append(actx, []events.Event{ev(i)})
		cancel()
		switch {
		case errors.Is(err, ErrUnreachable):
			time.Sleep(200 * time.Millisecond)
			continue
		case err != nil:
			failed++
			t.Logf("append with node %s down: %v", c.Name(down), err)
		default:
			stored++
		}
		i++
	}
	if failed > 1 || stored < 4 {
		t.Fatalf("with node %s down: %d appends stored, %d failed", c.Name(down), stored, failed)
	}
	if last, err := b.Last(ctx); err != nil || last != s2+events.Seq(stored) {
		t.Fatalf("b.Last = %d, %v; want %d", last, err, s2+events.Seq(stored))
	}
	// The conditional append works on the replicated stream too (the
	// server reports a conflict with its R>1 code).
	if _, err := b.AppendAfter(ctx, []events.Event{ev(9)}, s1); !errors.Is(err, events.ErrConflict) {
		t.Fatalf("AppendAfter a stale batch on R3: %v, want ErrConflict", err)
	}
	cs = b.Cluster(ctx)
	offline := 0
	for _, p := range cs.Peers {
		if p.Offline || !p.Current {
			offline++
		}
	}
	if offline == 0 {
		t.Logf("no replica reported offline yet: %+v", cs.Peers)
	}
	if !a.Reachable() {
		t.Fatal("a store connected to a live node is not reachable")
	}
}

// TestRemoteOptions checks what Open refuses before connecting.
func TestRemoteOptions(t *testing.T) {
	ctx := context.Background()
	for _, o := range []Options{
		{URL: "nats://127.0.0.1:1", Remote: Remote{Stream: "bad.name"}},
		{URL: "nats://127.0.0.1:1", Remote: Remote{Replicas: 7}},
		{URL: "nats://127.0.0.1:1", Remote: Remote{Cert: "c.pem"}},
		{URL: "nats://127.0.0.1:1", Listen: true},
		{URL: "nats://127.0.0.1:1", Remote: Remote{Creds: "/does/not/exist.creds"}},
		{Dir: t.TempDir(), Remote: Remote{Stream: "X"}},
	} {
		if st, err := Open(ctx, o); err == nil {
			st.Close()
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
	if got := RedactURL("nats://u:p@h1:4222, tls://tok@h2:4222"); got != "nats://h1:4222,tls://h2:4222" {
		t.Errorf("RedactURL = %q", got)
	}
}

// TestClusterBackoff: with the cluster gone, operations after the first
// failure fail at once with ErrUnreachable (nothing sent) instead of each
// waiting out its deadline; once the cluster is back they are tried and
// succeed.
func TestClusterBackoff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := context.Background()
	c := jstest.Start(t, 1)
	st := openT(t, Options{URL: c.URL(), Dir: t.TempDir()})
	if _, err := st.Append(ctx, []events.Event{ev(1)}); err != nil {
		t.Fatal(err)
	}
	c.StopAll()
	unreachable := 0
	for i := 2; i < 12; i++ {
		if _, err := st.Append(ctx, []events.Event{ev(i)}); errors.Is(err, ErrUnreachable) {
			unreachable++
		} else if err == nil {
			t.Fatal("an append succeeded with the cluster stopped")
		}
	}
	if unreachable < 9 || st.Skipped() < 9 {
		t.Fatalf("%d of 10 appends refused at once (skipped %d), want at least 9", unreachable, st.Skipped())
	}
	if err := st.Unavailable(); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Unavailable() = %v", err)
	}
	c.StartAll()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := st.Append(ctx, []events.Event{ev(20)})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no append succeeded after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if last, err := st.Last(ctx); err != nil || last != 2 {
		t.Fatalf("Last = %d, %v; want 2 (the refused appends stored nothing)", last, err)
	}
}
