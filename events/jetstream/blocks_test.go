package jetstream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// storeWith makes a closed store of n batches in dir and returns each
// batch's encoded bytes by sequence (1-based) and the record offsets of
// its first block.
func storeWith(t *testing.T, dir string, n int) ([][]byte, []int) {
	t.Helper()
	st, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{nil}
	for i := 0; i < n; i++ {
		e := ev(i)
		e.Compacted = &events.Compacted{Trigger: strings.Repeat(fmt.Sprint(i), 300)}
		b, _ := events.Encode([]events.Event{e})
		want = append(want, b)
		if _, err := st.Append(context.Background(), []events.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := blockFiles(dir)
	if len(files) != 1 {
		t.Fatalf("%d block files, want 1", len(files))
	}
	b, _ := os.ReadFile(files[0])
	var offs []int
	for off := 0; off+recHeader <= len(b); {
		rl := int(binary.LittleEndian.Uint32(b[off:]) &^ hasHdrBit)
		if rl == 0 {
			break
		}
		offs = append(offs, off)
		off += rl
	}
	if len(offs) != n {
		t.Fatalf("%d records in the block, want %d", len(offs), n)
	}
	return want, offs
}

// readAll returns the raw batch bytes the store gives back, by sequence.
func readAll(t *testing.T, st *Store) map[events.Seq][]byte {
	t.Helper()
	out := map[events.Seq][]byte{}
	err := st.Read(context.Background(), 0, func(e events.Event) error {
		b, _ := events.Encode([]events.Event{e})
		out[e.Seq] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSequenceFlipSweep flips each of bytes 3–6 of the sequence field of
// records across a block (a flip there made nats-server 2.15.2 and
// 2.15.3 loop and allocate without bound while recovering): the start
// never hangs but refuses the store at once (ErrDamagedStore, the marker
// names the block and the offset), a second start refuses it from the
// marker, and RepairBlocks gives back every batch byte for byte (each
// record's checksum verifies with its sequence restored), recording what
// it did.
func TestSequenceFlipSweep(t *testing.T) {
	const n = 12
	src := filepath.Join(t.TempDir(), "src")
	want, offs := storeWith(t, src, n)
	for _, rec := range []int{0, 1, n / 2, n - 1} {
		for _, bi := range []int{3, 4, 5, 6} {
			t.Run(fmt.Sprintf("record%d-byte%d", rec, bi), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "store")
				if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
					t.Fatal(err)
				}
				files, _ := blockFiles(dir)
				b, _ := os.ReadFile(files[0])
				b[offs[rec]+4+bi] ^= 0xff
				if err := os.WriteFile(files[0], b, 0o600); err != nil {
					t.Fatal(err)
				}
				o := Options{Dir: dir, StartTimeout: 10 * time.Second}
				start := time.Now()
				st, err := Open(context.Background(), o)
				if err == nil {
					st.Close()
					t.Fatal("a store with a flipped sequence field opened")
				}
				if !errors.Is(err, ErrDamagedStore) || time.Since(start) > 5*time.Second {
					t.Fatalf("Open: %v after %s", err, time.Since(start))
				}
				m, ok := ReadMarker(dir)
				if !ok || len(m.Damage) == 0 || m.Damage[0].File != files[0] || m.Damage[0].Offset != int64(offs[rec]) {
					t.Fatalf("marker %+v %v, want %s offset %d", m, ok, files[0], offs[rec])
				}
				if _, err := Open(context.Background(), o); !errors.Is(err, ErrDamagedStore) {
					t.Fatalf("second Open: %v", err)
				}
				r, err := RepairBlocks(dir)
				if err != nil {
					t.Fatal(err)
				}
				if r.Restored != 1 || r.Kept != n || len(r.Dropped) != 0 || len(r.MovedAside) != 1 || r.Report == "" {
					t.Fatalf("recovery %+v", r)
				}
				if _, err := os.Stat(r.Report); err != nil {
					t.Fatal(err)
				}
				st, err = Open(context.Background(), o)
				if err != nil {
					t.Fatalf("Open after repair: %v", err)
				}
				defer st.Close()
				got := readAll(t, st)
				for seq := 1; seq <= n; seq++ {
					if string(got[events.Seq(seq)]) != string(want[seq]) {
						t.Fatalf("batch %d after repair: %q, want %q", seq, got[events.Seq(seq)], want[seq])
					}
				}
			})
		}
	}
}

// TestRepairDropsUnreadable: a record whose content is damaged as well as
// its sequence field cannot be restored: RepairBlocks drops it (and names
// it), keeps every other batch, and the store opens.
func TestRepairDropsUnreadable(t *testing.T) {
	const n = 8
	dir := filepath.Join(t.TempDir(), "store")
	want, offs := storeWith(t, dir, n)
	files, _ := blockFiles(dir)
	b, _ := os.ReadFile(files[0])
	b[offs[3]+4+4] ^= 0xff // sequence field
	b[offs[3]+40] ^= 0xff  // content
	os.WriteFile(files[0], b, 0o600)
	if _, err := Open(context.Background(), Options{Dir: dir}); !errors.Is(err, ErrDamagedStore) {
		t.Fatalf("Open: %v", err)
	}
	r, err := RepairBlocks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kept != n-1 || len(r.Dropped) != 1 || r.Dropped[0] != 4 {
		t.Fatalf("recovery %+v", r)
	}
	st, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := readAll(t, st)
	for seq := 1; seq <= n; seq++ {
		if seq == 4 {
			if _, ok := got[4]; ok {
				t.Fatal("the unreadable batch 4 came back")
			}
			continue
		}
		if string(got[events.Seq(seq)]) != string(want[seq]) {
			t.Fatalf("batch %d after repair differs", seq)
		}
	}
}

// TestStuckStart: a start that does not finish within StartTimeout marks
// the store damaged, releases the lock and returns ErrStartStuck (which is
// ErrDamagedStore too) from Open; the next Open refuses the store at once.
func TestStuckStart(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, StartTimeout: 100 * time.Millisecond, startDelay: time.Second}
	opened := make(chan error, 1)
	go func() {
		st, err := Open(context.Background(), o)
		if err == nil {
			st.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, ErrStartStuck) || !errors.Is(err, ErrDamagedStore) {
			t.Fatalf("Open: %v, want ErrStartStuck and ErrDamagedStore", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open did not return")
	}
	if locked, _ := Locked(dir); locked {
		t.Fatal("the lock is still held after a stuck start")
	}
	if _, ok := ReadMarker(dir); !ok {
		t.Fatal("no damage marker")
	}
	time.Sleep(1200 * time.Millisecond) // let the stalled start finish
}
