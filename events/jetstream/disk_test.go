package jetstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// TestAppendRefusedOnFullDisk: with less than the batch plus MinFreeBytes
// free, Append fails at once with ErrDiskFull and writes nothing (a real
// ENOSPC leaves the embedded server timing out until restarted); with
// space back, appends resume on the same store.
func TestAppendRefusedOnFullDisk(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	if _, err := st.Append(ctx, []events.Event{ev(0)}); err != nil {
		t.Fatal(err)
	}
	free := uint64(MinFreeBytes - 1)
	freeBytes = func(string) (uint64, error) { return free, nil }
	defer func() { freeBytes = FreeBytes }()
	if _, err := st.Append(ctx, []events.Event{ev(1)}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Append on a full disk: %v, want ErrDiskFull", err)
	}
	if last, _ := st.Last(ctx); last != 1 {
		t.Fatalf("a refused append was stored: last %d", last)
	}
	free = 1 << 30
	if seq, err := st.Append(ctx, []events.Event{ev(2)}); err != nil || seq != 2 {
		t.Fatalf("Append after space came back: %d, %v", seq, err)
	}
}

// TestBrokenAfterTimeouts: after brokenAfter appends in a row time out,
// the store says it is broken and Append fails at once (the daemon exits
// on it); one acknowledged append resets the count.
func TestBrokenAfterTimeouts(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	if st.Broken() != nil {
		t.Fatal("a fresh store is broken")
	}
	st.timeouts.Store(brokenAfter - 1)
	if _, err := st.Append(ctx, []events.Event{ev(0)}); err != nil || st.Broken() != nil {
		t.Fatalf("an acknowledged append did not reset the count: %v %v", err, st.Broken())
	}
	st.timeouts.Store(brokenAfter)
	if _, err := st.Append(ctx, []events.Event{ev(1)}); !errors.Is(err, ErrBroken) || !errors.Is(st.Broken(), ErrBroken) {
		t.Fatalf("Append on a broken store: %v", err)
	}
}

// damage flips n bytes at offset off of the store's first message block.
func damage(t *testing.T, dir string, off, n int) {
	t.Helper()
	blks, _ := filepath.Glob(filepath.Join(dir, "js", "jetstream", "*", "streams", StreamName, "msgs", "*.blk"))
	if len(blks) == 0 {
		t.Fatal("no message block in the store")
	}
	b, err := os.ReadFile(blks[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+n && i < len(b); i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(blks[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFindsDamage: after bytes in a message block are damaged while
// the store is closed, Check lists the batches the store can no longer
// give back, and only those; Read skips them (the caller sees the gap),
// and the store still appends. DeleteBatches then takes them off the count.
func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 4000)
	for i := 0; i < 20; i++ {
		e := ev(i)
		e.Compacted = &events.Compacted{Trigger: big}
		if _, err := st.Append(ctx, []events.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := st.Check(ctx); err != nil || r.MissingCount != 0 || r.Readable != 20 {
		t.Fatalf("Check of a whole store: %+v %v", r, err)
	}
	st.Close()
	// 200 bytes inside the third message's body (4 KB each): the server
	// keeps it counted but fails its checksum. (Damage that reaches a
	// message header makes the server drop everything from there on while
	// recovering; only a record of the old end, omni's checkpoint, shows
	// that: see cmd/omni.)
	damage(t, dir, 10000, 200)
	st = openT(t, Options{Dir: dir})
	r, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.First != 1 || r.Last != 20 || r.MissingCount != 1 || r.Readable != 19 || len(r.Missing) != 1 {
		t.Fatalf("Check after damage: %+v", r)
	}
	var read []events.Seq
	if err := st.Read(ctx, 0, func(e events.Event) error { read = append(read, e.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(read) != r.Readable {
		t.Fatalf("Read gave %d batches, Check says %d readable", len(read), r.Readable)
	}
	if _, err := st.Append(ctx, []events.Event{ev(99)}); err != nil {
		t.Fatalf("append after damage: %v", err)
	}
	if _, err := st.DeleteBatches(ctx, r.Missing); err != nil {
		t.Fatal(err)
	}
}

// TestShortDeadlinesNotBroken: appends whose caller's deadline is (nearly)
// spent fail, but however many there are they never count towards
// ErrBroken: only an append the server kept waiting for brokenWait does.
func TestShortDeadlinesNotBroken(t *testing.T) {
	st := openT(t, Options{Dir: t.TempDir()})
	for i := 0; i < 3*brokenAfter; i++ {
		// Even: a deadline already past (the append must fail). Odd: one
		// that runs out during the append (1 µs); its timer may fire late,
		// so that append may also succeed.
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
		if i%2 == 1 {
			cancel()
			ctx, cancel = context.WithTimeout(context.Background(), time.Microsecond)
		}
		if _, err := st.Append(ctx, []events.Event{ev(i)}); err == nil && i%2 == 0 {
			t.Fatalf("append %d with a spent deadline succeeded", i)
		}
		cancel()
	}
	if err := st.Broken(); err != nil {
		t.Fatalf("spent deadlines broke the store: %v", err)
	}
	if _, err := st.Append(context.Background(), []events.Event{ev(99)}); err != nil {
		t.Fatal(err)
	}
}
