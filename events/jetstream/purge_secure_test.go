package jetstream

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
)

// TestPurgeOverwrites: the bytes of the batches Purge removes are
// overwritten on disk, not only dropped from the stream: after a purge and
// a close, no file under the store holds a value only they carried.
func TestPurgeOverwrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const value = "gc-erased-Zq8xmK2pL9wR4tYa"
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 12; i++ {
		text := "ordinary output " + strings.Repeat("x", i)
		if i == 2 || i == 5 {
			text = "secret output " + value
		}
		ev := events.Event{ID: "01KTEST" + strings.Repeat("0", 19-len(string(rune('A'+i)))) + string(rune('A'+i)), Kind: events.KindRemembered, Time: at,
			Remembered: &events.Remembered{Fact: text}}
		if _, err := st.Append(ctx, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Purge(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(value)) {
			t.Errorf("%s still holds a purged batch's bytes", p)
		}
		return nil
	})
}
