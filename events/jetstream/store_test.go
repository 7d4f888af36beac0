package jetstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/eventstest"
	"github.com/omnictx/omni/events/jetstream/jstest"
)

// openT opens a store on dir and closes it at the end of the test.
func openT(t *testing.T, o Options) *Store {
	t.Helper()
	st, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st
}

func TestConformance(t *testing.T) {
	srvTLS := jstest.ServerTLS(t)
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{name: "InProcess", o: Options{}},
		{name: "Listening", o: Options{Listen: true, Token: "secret", TLS: srvTLS}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eventstest.Run(t, func(t *testing.T) events.Log {
				o := tc.o
				o.Dir = t.TempDir()
				return openT(t, o)
			})
		})
	}
	t.Run("Remote", func(t *testing.T) {
		eventstest.Run(t, func(t *testing.T) events.Log {
			return openT(t, Options{URL: "nats://" + remoteServer(t)})
		})
	})
}

// remoteServer starts a plain JetStream server (not through Open) for the
// Options.URL mode and returns its address.
func remoteServer(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{ServerName: "remote", JetStream: true, StoreDir: t.TempDir(),
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("remote server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.Addr().String()
}

// ev returns a small event numbered i.
func ev(i int) events.Event {
	return events.Event{
		ID:        fmt.Sprintf("01J%023d", i),
		Kind:      events.KindCompacted,
		Time:      time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
		Session:   "s",
		Compacted: &events.Compacted{Trigger: "PreCompact"},
	}
}

func TestLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if locked, err := Locked(dir); err != nil || !locked {
		t.Fatalf("Locked while open = %v, %v; want true", locked, err)
	}
	if _, err := Open(ctx, Options{Dir: dir}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
	start := time.Now()
	if _, err := Open(ctx, Options{Dir: dir, LockWait: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open with LockWait: err = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("Open with LockWait 50ms gave up after %s", d)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if locked, err := Locked(dir); err != nil || locked {
		t.Fatalf("Locked after Close = %v, %v; want false", locked, err)
	}
	b := openT(t, Options{Dir: dir})
	if _, err := b.Append(ctx, []events.Event{ev(1)}); err != nil {
		t.Fatal(err)
	}

	// A waiting Open gets the lock once the holder closes.
	dir2 := t.TempDir()
	c, err := Open(ctx, Options{Dir: dir2})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		_ = c.Close()
	}()
	openT(t, Options{Dir: dir2, LockWait: 5 * time.Second})

	if locked, err := Locked(filepath.Join(dir, "missing")); err != nil || locked {
		t.Fatalf("Locked(missing) = %v, %v", locked, err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, Options{}); err == nil {
		t.Fatal("Open with no Dir succeeded")
	}
	if _, err := Open(ctx, Options{Dir: t.TempDir(), Listen: true}); err == nil {
		t.Fatal("Open listening without a token succeeded")
	}
	if _, err := Open(ctx, Options{Dir: t.TempDir(), Listen: true, Token: "t"}); err == nil {
		t.Fatal("Open listening without TLS succeeded")
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	st := openT(t, Options{Dir: dir})
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store dir mode = %v, %v; want 0700", fi.Mode(), err)
	}
	if st.Addr() != "" {
		t.Fatalf("Addr without Listen = %q", st.Addr())
	}
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := 0; i < n; i++ {
		if _, err := st.Append(ctx, []events.Event{ev(2 * i), ev(2*i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, []events.Event{ev(0)}); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := st.Read(ctx, 0, func(events.Event) error { return nil }); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Read after Close: %v, want ErrClosed", err)
	}
	if _, err := st.Get(ctx, 1); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	st = openT(t, Options{Dir: dir})
	var ids []string
	if err := st.Read(ctx, 0, func(e events.Event) error {
		if want := events.Seq(len(ids)/2 + 1); e.Seq != want || e.Index != len(ids)%2 {
			return fmt.Errorf("event %d at %d.%d, want %d.%d", len(ids), e.Seq, e.Index, want, len(ids)%2)
		}
		ids = append(ids, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2*n || ids[2*n-1] != ev(2*n-1).ID {
		t.Fatalf("read %d events after reopen, want %d", len(ids), 2*n)
	}
	if seq, err := st.Append(ctx, []events.Event{ev(999)}); err != nil || seq != n+1 {
		t.Fatalf("Append after reopen = %d, %v; want %d", seq, err, n+1)
	}
	if last, _ := st.Last(ctx); last != n+1 {
		t.Fatalf("Last = %d, want %d", last, n+1)
	}
}

// TestReadManyBatches reads across several direct-get round trips and
// checks that Read stops at the last sequence that existed when it started.
func TestReadManyBatches(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	const n = 2*readBatch + 100
	fill(t, st, n)
	if last, err := st.Last(ctx); err != nil || last != n {
		t.Fatalf("Last = %d, %v; want %d", last, err, n)
	}
	var seen int
	var appended bool
	err := st.Read(ctx, 7, func(e events.Event) error {
		if want := events.Seq(7 + seen); e.Seq != want {
			return fmt.Errorf("got seq %d, want %d", e.Seq, want)
		}
		seen++
		if !appended { // appends during Read are not visited
			appended = true
			for i := 0; i < 3; i++ {
				if _, err := st.Append(ctx, []events.Event{ev(i)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != n-6 {
		t.Fatalf("Read(7) visited %d batches, want %d", seen, n-6)
	}
	seen = 0
	if err := st.Read(ctx, n+3, func(events.Event) error { seen++; return nil }); err != nil || seen != 1 {
		t.Fatalf("Read(last) = %d events, %v; want 1", seen, err)
	}
	if err := st.Read(ctx, n+4, func(events.Event) error { seen++; return nil }); err != nil || seen != 1 {
		t.Fatalf("Read(past last) visited events: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := st.Read(cctx, 1, func(events.Event) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with cancelled ctx: %v", err)
	}
}

// fill appends n one-event batches quickly (async publishes).
func fill(t testing.TB, st *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		b, err := events.Encode([]events.Event{ev(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.js.PublishAsync(Subject, b); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-st.js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("async fill did not complete")
	}
}

func TestLargeBatch(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB, 21.3 MiB as base64
	e := ev(1)
	e.Kind, e.Compacted = events.KindArchived, nil
	e.Archived = &events.Archived{Handle: "0123456789abcdef", Bytes: len(data), Data: data}
	seq, err := st.Append(ctx, []events.Event{ev(0), e})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, seq)
	if err != nil || len(got) != 2 || !bytes.Equal(got[1].Archived.Data, data) {
		t.Fatalf("Get(large) = %d events, %v", len(got), err)
	}
	n := 0
	if err := st.Read(ctx, 1, func(e events.Event) error { n++; return nil }); err != nil || n != 2 {
		t.Fatalf("Read(large) = %d events, %v", n, err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seqs []events.Seq
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 25; i++ {
				seq, err := st.Append(ctx, []events.Event{ev(g*100 + i)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seqs = append(seqs, seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for i, s := range seqs {
		if s != events.Seq(i+1) {
			t.Fatalf("seqs not 1..200: %v", seqs)
		}
	}
}

// TestAppendLatency reports the in-process Append latency (p50, p99).
func TestAppendLatency(t *testing.T) {
	ctx := context.Background()
	st := openT(t, Options{Dir: t.TempDir()})
	const n = 500
	batch := []events.Event{ev(1), ev(2), ev(3)}
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		if _, err := st.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	t.Logf("Append (3 events, in-process): p50 %s, p99 %s over %d", d[n/2], d[n*99/100], n)
}

func BenchmarkAppend(b *testing.B) {
	st, err := Open(context.Background(), Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	batch := []events.Event{ev(1), ev(2), ev(3)}
	for b.Loop() {
		if _, err := st.Append(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead100k reads a 100,000-batch log from the start (one op is
// one whole Read).
func BenchmarkRead100k(b *testing.B) {
	st, err := Open(context.Background(), Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	fill(b, st, 100_000)
	for b.Loop() {
		n := 0
		if err := st.Read(context.Background(), 1, func(events.Event) error { n++; return nil }); err != nil || n != 100_000 {
			b.Fatalf("read %d, %v", n, err)
		}
	}
}
