package jetstream

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// TestStaleReplicaReads: direct gets go to any replica that serves them,
// and a follower serves them once it is 90% caught up (nats-server,
// jetstream_cluster.go: "enabling direct gets at ... synchronized"), so
// one may answer "no message" for a batch the leader stored (seen after a
// whole cluster restarted: replay --verify counted batches as missing).
// Here every other direct get is answered by such a replica, one that
// holds nothing yet: Get, Read and Check still see every batch, because a
// store on a cluster asks the leader before it takes "no message" for an
// answer.
func TestStaleReplicaReads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	ctx := context.Background()
	c := jstest.Start(t, 1)
	st := openT(t, Options{URL: c.URL(), Dir: t.TempDir(), Remote: Remote{Stream: "STALE"}})
	const n = 12
	for i := 1; i <= n; i++ {
		if _, err := st.Append(ctx, []events.Event{ev(i)}); err != nil {
			t.Fatal(err)
		}
	}
	real := st.directGet
	st.directGet = "omni.test.direct.STALE"
	var calls, stale atomic.Int64
	sub, err := st.nc.Subscribe(st.directGet, func(m *nats.Msg) {
		if calls.Add(1)%2 == 0 {
			_ = st.nc.PublishRequest(real, m.Reply, m.Data) // an up-to-date replica
			return
		}
		stale.Add(1)
		r := nats.NewMsg(m.Reply)
		r.Header.Set(statusHeader, "404")
		r.Header.Set(descrHeader, "Message Not Found")
		_ = m.RespondMsg(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for round := 0; round < 4; round++ {
		for q := events.Seq(1); q <= n; q++ {
			evs, err := st.Get(ctx, q)
			if err != nil || len(evs) != 1 || evs[0].ID != ev(int(q)).ID {
				t.Fatalf("round %d: Get(%d) = %v, %v", round, q, evs, err)
			}
		}
		var got int
		if err := st.Read(ctx, 0, func(events.Event) error { got++; return nil }); err != nil || got != n {
			t.Fatalf("round %d: Read visited %d of %d batches: %v", round, got, n, err)
		}
		if r, err := st.Check(ctx); err != nil || r.MissingCount != 0 || r.Readable != n {
			t.Fatalf("round %d: Check = %+v, %v", round, r, err)
		}
	}
	if stale.Load() == 0 {
		t.Fatal("no direct get went to the stale replica")
	}
	// A batch that does not exist is still not found.
	if _, err := st.Get(ctx, n+5); err != events.ErrNotFound {
		t.Fatalf("Get past the end: %v, want ErrNotFound", err)
	}
}
