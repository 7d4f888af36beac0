package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/omnictx/omni/internal/daemon/wire/thin"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
)

// retentionText is n distinct lines tagged tag.
func retentionText(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s %03d  /srv/%s/shard-%04d.dat  size %7d\n", tag, i, tag, i*3, 1000+i*37)
	}
	return b.String()
}

// oldHome writes a store under home whose first calls are 60 days older
// than now and whose last calls are an hour old: a block archived in the
// old calls is folded again by a recent one (kept by the pass), another is
// named only by old ones. It returns the first recent sequence.
func oldHome(t *testing.T, home string, now time.Time) (events.Seq, string) {
	t.Helper()
	ctx := context.Background()
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := now.Add(-60 * 24 * time.Hour)
	eng, err := hooks.New(ctx, st, hooks.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	shared, only := retentionText("shared", 30), retentionText("old", 30)
	var folded string
	call := func(session, cmd, out string) {
		r, err := eng.HookResult(ctx, hooks.HookInput{Stdin: hookReq(session, cmd, out)[1:]})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Folds) > 0 {
			folded = r.Folds[0].Handle
		}
	}
	call("old", "./gen", shared)
	call("old", "./gen", shared)
	call("old", "./other", only)
	call("old", "./other", only)
	clock = now.Add(-time.Hour)
	first, _ := st.Last(ctx)
	call("new", "./gen", shared)
	call("new", "./gen", shared)
	call("new", "./third", retentionText("new", 30))
	return first + 1, folded
}

// TestRetentionPrunesOldBatchesOnce: a home holding batches older than the
// retention loses them in one pass through the path of omni gc (a base
// snapshot, a Pruned event, the block a recent marker names kept); a second
// pass within a day does nothing, one a day later runs again; replay
// --verify of the retained range is byte-identical before and after; the
// store shrinks its count of batches and reports the range; a sequence
// before the range names the range and the setting.
func TestRetentionPrunesOldBatchesOnce(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	firstRecent, keptHandle := oldHome(t, home, now)
	if keptHandle == "" {
		t.Fatal("the recent session folded nothing")
	}

	st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := WithRetention(Config{Home: home, Version: testVersion}, func(string) (string, bool) { return "", false })
	if cfg.Retention.Keep != 30*24*time.Hour {
		t.Fatalf("default retention %v, want the ledger window of 30 days", cfg.Retention.Keep)
	}
	svc, err := NewService(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	before, err := svc.Store(ctx, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if before.First != 1 || before.Bytes <= 0 || !before.FirstTime.Before(now.Add(-59*24*time.Hour)) {
		t.Fatalf("store before the pass: %+v", before)
	}
	verifyBefore, err := hooks.Verify(ctx, st, svc.base(), nil)
	if err != nil {
		t.Fatal(err)
	}

	rec, ran, err := svc.Retain(ctx, now)
	if err != nil || !ran {
		t.Fatalf("first pass: ran %v, %v", ran, err)
	}
	if rec.Before != firstRecent || rec.Removed != int(firstRecent-1) || rec.Kept != 1 {
		t.Fatalf("first pass removed %+v, want batches 1..%d and one kept block", rec, firstRecent-1)
	}
	after, err := svc.Store(ctx, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if after.First != firstRecent || after.LastPass == nil || after.LastPass.Removed != rec.Removed ||
		after.FirstTime.Before(now.Add(-2*time.Hour)) {
		t.Fatalf("store after the pass: %+v", after)
	}
	t.Logf("store before the pass: %d B, %s; after: %d B, %s", before.Bytes, before.RangeText(), after.Bytes, after.RangeText())
	if !strings.Contains(after.RangeText(), fmt.Sprintf("seq %d..%d", firstRecent, after.Last)) {
		t.Errorf("range text %q", after.RangeText())
	}
	// The Pruned event is in the log, after the cut.
	pruned := false
	for q := after.First; q <= after.Last; q++ {
		b, err := st.Get(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range b {
			if ev.Kind == events.KindPruned && ev.Pruned.Before == firstRecent {
				pruned = true
			}
		}
	}
	if !pruned {
		t.Error("no pruned event records the pass")
	}
	// Replay of the retained range: every invocation there as before.
	verifyAfter, err := hooks.Verify(ctx, st, svc.base(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if verifyAfter.Identical != verifyAfter.Compared || len(verifyAfter.Mismatches) > 0 || verifyAfter.Compared == 0 ||
		verifyBefore.Identical != verifyBefore.Compared {
		t.Fatalf("replay --verify: before %+v, after %+v", verifyBefore, verifyAfter)
	}
	// The kept block still retrieves.
	if _, err := svc.Retrieve(ctx, RetrieveRequest{Handle: keptHandle}); err != nil {
		t.Fatalf("kept block %s: %v", keptHandle, err)
	}
	// Before the range: the message names the range and the setting.
	_, err = svc.Replay(ctx, ReplayRequest{At: 1})
	if !errors.Is(err, ErrNotInLog) || !strings.Contains(err.Error(), fmt.Sprintf("retained range (%d..", firstRecent)) ||
		!strings.Contains(err.Error(), EnvRetention) || !strings.Contains(err.Error(), "30d") {
		t.Fatalf("replay before the range: %v", err)
	}

	// At most once a day, and the record survives a restart (a file).
	if _, ran, _ := svc.Retain(ctx, now.Add(23*time.Hour)); ran {
		t.Error("a second pass ran within a day")
	}
	svc2, err := NewService(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ran, _ := svc2.Retain(ctx, now.Add(time.Hour)); ran {
		t.Error("a restarted daemon ran a pass within a day of the last")
	}
	rec2, ran, err := svc2.Retain(ctx, now.Add(25*time.Hour))
	if err != nil || !ran || rec2.Removed != 0 {
		t.Fatalf("a pass a day later: ran %v, %+v, %v", ran, rec2, err)
	}
}

// TestRetentionSettings: OMNI_RETENTION reads days and durations; 0 keeps
// everything and a value that does not parse removes nothing, both without
// any pass; a busy store is never pruned.
func TestRetentionSettings(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) { return v, k == EnvRetention }
	}
	for _, c := range []struct {
		v    string
		keep time.Duration
		bad  bool
		text string
	}{
		{"", 30 * 24 * time.Hour, false, "30d (the default; OMNI_RETENTION sets it, 0 keeps everything)"},
		{"90d", 90 * 24 * time.Hour, false, "90d (OMNI_RETENTION=90d; 0 keeps everything)"},
		{"36h", 36 * time.Hour, false, "36h0m0s (OMNI_RETENTION=36h; 0 keeps everything)"},
		{"0", 0, false, "everything is kept (OMNI_RETENTION=0)"},
		{"soon", 0, true, "none: OMNI_RETENTION=soon:"},
		{"-3d", 0, true, "none: OMNI_RETENTION=-3d:"},
	} {
		r := RetentionOf(env(c.v))
		if r.Keep != c.keep || (r.Err != "") != c.bad || !strings.HasPrefix(r.String(), c.text) {
			t.Errorf("OMNI_RETENTION=%q: %+v %q", c.v, r, r.String())
		}
	}

	ctx := context.Background()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		r      Retention
		busy   bool
		frozen bool
	}{
		{"keep everything", RetentionOf(env("0")), false, false},
		{"unreadable setting", RetentionOf(env("soon")), false, false},
		{"store busy", RetentionOf(env("")), true, false},
		// A bench's home keeps the corpus's times: pruning it would cut the
		// replay the oracle reads back through omni retrieve.
		{"frozen bench stream", RetentionOf(env("")), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			oldHome(t, home, now)
			st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			svc, err := NewService(ctx, st, Config{Home: home, Retention: c.r})
			if err != nil {
				t.Fatal(err)
			}
			if c.frozen {
				if err := os.WriteFile(filepath.Join(home, thin.FrozenFile), []byte("bench\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.busy {
				// A live process (this test's parent) marked the store busy.
				b, _ := json.Marshal(map[string]any{"pid": os.Getppid(), "what": "omni bench"})
				if err := writeFileAtomic(BusyPath(home), b); err != nil {
					t.Fatal(err)
				}
			}
			if _, ran, err := svc.Retain(ctx, now); ran || err != nil {
				t.Fatalf("a pass ran: %v", err)
			}
			if first, _ := st.First(ctx); first != 1 {
				t.Fatalf("the log starts at %d", first)
			}
			si, _ := svc.Store(ctx, struct{}{})
			if !bytes.Contains([]byte(si.Retention.String()), []byte(strings.SplitN(c.r.String(), ":", 2)[0])) {
				t.Errorf("store info names %q", si.Retention.String())
			}
		})
	}
}

// TestDaemonRunsRetention: the daemon's handler runs the pass by itself
// (here at once, retainFirst 0) and records it in store/retention.json.
func TestDaemonRunsRetention(t *testing.T) {
	old := retainFirst
	retainFirst = 0
	t.Cleanup(func() { retainFirst = old })
	ctx := context.Background()
	home := t.TempDir()
	firstRecent, _ := oldHome(t, home, time.Now())
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, closeH, err := ServiceHandler(Config{Home: home, Version: testVersion, Retention: Retention{Keep: DefaultRetention}})(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for readRetainRecord(home) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the daemon ran no retention pass")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := closeH(); err != nil {
		t.Fatal(err)
	}
	if first, _ := st.First(ctx); first != firstRecent {
		t.Fatalf("the log starts at %d, want %d", first, firstRecent)
	}
}
