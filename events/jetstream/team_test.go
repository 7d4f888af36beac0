package jetstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// TestTeamOriginAuthenticated: with the member permission template, a
// machine publishes on its own subject only; a batch another member
// publishes in its name is rejected and reported by every reader; a member
// can neither publish on another's subject nor purge, delete or update the
// stream.
func TestTeamOriginAuthenticated(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	ctx := context.Background()
	sec := jstest.NewSecurity(t, jstest.Want{Creds: true})
	c := jstest.StartWith(t, 1, jstest.Options{Security: sec})
	const stream = "TEAMAUTH"
	admin := openT(t, Options{URL: c.URL(), Remote: Remote{Creds: sec.Creds, Stream: stream}})
	_ = admin
	member := func(machine string, onReject func(events.Seq, string, string)) (*Store, string) {
		pa, pd, sa := TeamPermissions(stream, machine)
		creds := sec.UserCreds(t, MachineToken(machine), jstest.Permissions{PubAllow: pa, PubDeny: pd, SubAllow: sa})
		return openT(t, Options{URL: c.URL(), Remote: Remote{Creds: creds, Stream: stream, Machine: machine, OnReject: onReject}}), creds
	}
	var mu sync.Mutex
	var rejected []string
	alice, _ := member("alice-laptop/aaaa1111", func(seq events.Seq, subject, machine string) {
		mu.Lock()
		defer mu.Unlock()
		rejected = append(rejected, subject+" claims "+machine)
	})
	bob, bobCreds := member("bob-desk/bbbb2222", nil)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := func(id, machine string) []events.Event {
		return []events.Event{{ID: id, Kind: events.KindRemembered, Time: at, Machine: machine, Remembered: &events.Remembered{Fact: id}}}
	}
	own, err := alice.Append(ctx, batch("01KTEAM0000000000000000001", "alice-laptop/aaaa1111"))
	if err != nil {
		t.Fatalf("alice appends her own batch: %v", err)
	}
	forged, err := bob.Append(ctx, batch("01KTEAM0000000000000000002", "alice-laptop/aaaa1111"))
	if err != nil {
		t.Fatalf("bob's append on his own subject: %v", err)
	}
	honest, err := bob.Append(ctx, batch("01KTEAM0000000000000000003", "bob-desk/bbbb2222"))
	if err != nil {
		t.Fatal(err)
	}
	var seen []events.Seq
	if err := alice.Read(ctx, 0, func(e events.Event) error { seen = append(seen, e.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != own || seen[1] != honest {
		t.Errorf("alice reads batches %v; want %d and %d, never the forged %d", seen, own, honest, forged)
	}
	if _, err := alice.Get(ctx, forged); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("Get of the forged batch: %v", err)
	}
	mu.Lock()
	if len(rejected) == 0 || !strings.Contains(rejected[0], "bbbb2222 claims alice-laptop/aaaa1111") {
		t.Errorf("rejections reported: %v", rejected)
	}
	mu.Unlock()

	// Bob's own connection: another machine's subject, the unattested
	// one, purge, delete, update.
	nc, err := nats.Connect(c.URL(), nats.UserCredentials(bobCreds))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	j, _ := js.New(nc)
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	for _, subj := range []string{TeamSubject(stream, "alice-laptop/aaaa1111"), SubjectOf(stream)} {
		data, _ := events.Encode(batch("01KTEAM0000000000000000009", "alice-laptop/aaaa1111"))
		if _, err := j.Publish(short(), subj, data); err == nil {
			t.Errorf("bob published on %s", subj)
		}
	}
	if err := bob.Purge(short(), 3); err == nil {
		t.Error("bob purged the stream")
	}
	if err := j.DeleteStream(short(), stream); err == nil {
		t.Error("bob deleted the stream")
	}
	if last, err := alice.Last(ctx); err != nil || last != honest {
		t.Errorf("the stream after bob's attempts: last %d, %v", last, err)
	}
}
