package jetstream

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
)

// TestReplace: a batch replaced in place reads back at its own sequence
// through Read and Get, before and after a reopen, no other sequence
// changes, Check counts nothing missing, and the old bytes are in no
// file of the store.
func TestReplace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openT(t, Options{Dir: dir})
	const secret = "s3cr3t-value-0123456789"
	for i := 1; i <= 5; i++ {
		e := ev(i)
		if i == 1 || i == 3 {
			e.Compacted.Trigger = "PreCompact " + secret
		}
		if _, err := st.Append(ctx, []events.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []events.Seq{1, 3, 3} { // 3 twice: the earlier copy goes too
		e := ev(int(q))
		e.Compacted.Trigger = "PreCompact [REDACTED]"
		if err := st.Replace(ctx, q, []events.Event{e}); err != nil {
			t.Fatalf("replace %d: %v", q, err)
		}
	}
	if err := st.Replace(ctx, 9, []events.Event{ev(9)}); err != events.ErrNotFound {
		t.Errorf("replace of a missing batch: %v", err)
	}
	check := func(st *Store) {
		t.Helper()
		var got []string
		err := st.Read(ctx, 0, func(e events.Event) error {
			got = append(got, e.ID[len(e.ID)-1:]+":"+e.Compacted.Trigger)
			if e.ID != ev(int(e.Seq)).ID {
				t.Errorf("seq %d holds %s", e.Seq, e.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "1:PreCompact [REDACTED] 2:PreCompact 3:PreCompact [REDACTED] 4:PreCompact 5:PreCompact"
		if s := strings.Join(got, " "); s != want {
			t.Errorf("Read: %s\nwant %s", s, want)
		}
		b, err := st.Get(ctx, 3)
		if err != nil || len(b) != 1 || b[0].Seq != 3 || b[0].Compacted.Trigger != "PreCompact [REDACTED]" {
			t.Errorf("Get(3): %+v %v", b, err)
		}
		if first, _ := st.First(ctx); first != 1 {
			t.Errorf("First: %d", first)
		}
		if last, _ := st.Last(ctx); last != 5 {
			t.Errorf("Last: %d", last)
		}
		r, err := st.Check(ctx)
		if err != nil || r.MissingCount != 0 || r.Readable != 5 {
			t.Errorf("Check: %+v %v", r, err)
		}
	}
	check(st)
	st.Close()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s still holds the replaced value", p)
		}
		return nil
	})
	check(openT(t, Options{Dir: dir}))
}
