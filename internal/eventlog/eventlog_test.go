package eventlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func zst(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// fill appends n batches: batch i (from 1) holds an invoked event of
// session "s<i%2>" at t0+i minutes with input "input <i>", and an
// archived block "block <i>\n".
func fill(t *testing.T, l events.Log, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		sess := fmt.Sprintf("s%d", i%2)
		at := t0.Add(time.Duration(i) * time.Minute)
		in := fmt.Sprintf("input %d", i)
		blk := fmt.Sprintf("block %d\n", i)
		batch := []events.Event{
			{ID: fmt.Sprintf("inv%d", i), Kind: events.KindInvoked, Time: at, Session: sess,
				Invoked: &events.Invoked{Door: events.DoorExec, Codec: events.CodecZstd, Input: zst(t, []byte(in)), InputBytes: len(in),
					Params: map[string]string{"command": "cat f"}}},
			{ID: fmt.Sprintf("arc%d", i), Kind: events.KindArchived, Time: at, Session: sess,
				Archived: &events.Archived{Handle: fmt.Sprintf("%016x", i), Lines: 1, Bytes: len(blk), Codec: events.CodecZstd, Data: zst(t, []byte(blk))}},
		}
		if _, err := l.Append(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
}

func localSource(l events.Log, maxBytes int) Source {
	return func(ctx context.Context, q Query, from events.Seq) (Page, error) {
		return ReadPage(ctx, l, q, from, maxBytes)
	}
}

func printAll(t *testing.T, l events.Log, o Options, maxBytes int) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	o.JSON = true
	if err := Print(context.Background(), &buf, localSource(l, maxBytes), o); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func seqs(ms []map[string]any) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%v.%v", m["seq"], m["index"]))
	}
	return strings.Join(s, " ")
}

func TestPrintDecodesAndFilters(t *testing.T) {
	l := memlog.New()
	fill(t, l, 6)
	cases := []struct {
		name string
		q    Query
		want string
	}{
		{"all", Query{}, "1.0 1.1 2.0 2.1 3.0 3.1 4.0 4.1 5.0 5.1 6.0 6.1"},
		{"session", Query{Session: "s0"}, "2.0 2.1 4.0 4.1 6.0 6.1"},
		{"kind", Query{Kinds: []events.Kind{events.KindArchived}}, "1.1 2.1 3.1 4.1 5.1 6.1"},
		{"since", Query{Since: t0.Add(5 * time.Minute)}, "5.0 5.1 6.0 6.1"},
		{"seq", Query{From: 2, To: 3}, "2.0 2.1 3.0 3.1"},
		{"seq open end", Query{From: 5}, "5.0 5.1 6.0 6.1"},
		{"seq open start", Query{To: 1}, "1.0 1.1"},
		{"seq past end", Query{From: 9}, ""},
		{"all filters", Query{Session: "s1", Kinds: []events.Kind{events.KindInvoked}, Since: t0.Add(2 * time.Minute), To: 5}, "3.0 5.0"},
	}
	for _, c := range cases {
		for _, budget := range []int{1, 0} { // one batch per page, and one page
			got := printAll(t, l, Options{Query: c.q}, budget)
			if s := seqs(got); s != c.want {
				t.Errorf("%s (page budget %d): got %q, want %q", c.name, budget, s, c.want)
			}
		}
	}
	all := printAll(t, l, Options{}, 0)
	inv, arc := all[4]["invoked"].(map[string]any), all[5]["archived"].(map[string]any)
	if inv["input_text"] != "input 3" || inv["input"] != nil || inv["codec"] != nil {
		t.Errorf("invoked not decoded: %v", inv)
	}
	if arc["text"] != "block 3\n" || arc["data"] != nil || arc["codec"] != nil || arc["handle"] != "0000000000000003" {
		t.Errorf("archived not decoded: %v", arc)
	}
	if all[4]["session"] != "s1" || all[4]["kind"] != "invoked" {
		t.Errorf("event fields lost: %v", all[4])
	}
}

func TestDecoderKeepsWhatItCannotDecode(t *testing.T) {
	d := NewDecoder()
	defer d.Close()
	bin := []byte{0xff, 0xfe, 0, 1}
	e := Entry{Seq: 1, Event: events.Event{Kind: events.KindArchived,
		Archived: &events.Archived{Handle: "h", Codec: events.CodecZstd, Data: zst(t, bin)}}}
	b, err := d.JSON(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"data":"//4AAQ=="`) || strings.Contains(string(b), `"text"`) || strings.Contains(string(b), `"codec"`) {
		t.Errorf("binary block: %s", b)
	}
	e.Archived.Data = []byte("not zstd")
	b, _ = d.JSON(e)
	if !strings.Contains(string(b), `"decode_error"`) || !strings.Contains(string(b), `"codec":"zstd"`) {
		t.Errorf("undecodable block: %s", b)
	}
	e = Entry{Seq: 1, Event: events.Event{Kind: events.KindInvoked, Invoked: &events.Invoked{Input: []byte("plain")}}}
	b, _ = d.JSON(e)
	if !strings.Contains(string(b), `"input_text":"plain"`) {
		t.Errorf("uncompressed input: %s", b)
	}
}

func TestParseSeqRange(t *testing.T) {
	for in, want := range map[string][2]events.Seq{"3..7": {3, 7}, "3..": {3, 0}, "..7": {0, 7}, "4": {4, 4}, "..": {0, 0}} {
		f, to, err := ParseSeqRange(in)
		if err != nil || f != want[0] || to != want[1] {
			t.Errorf("%q: %d %d %v, want %v", in, f, to, err, want)
		}
	}
	for _, bad := range []string{"", "x", "0", "7..3", "1..x", "-1..", "1...3"} {
		if _, _, err := ParseSeqRange(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseKinds(t *testing.T) {
	k, err := ParseKinds([]string{"invoked,archived", "lost"})
	if err != nil || len(k) != 3 || k[2] != events.KindLost {
		t.Errorf("got %v %v", k, err)
	}
	if _, err := ParseKinds([]string{"invoked,nope"}); err == nil || !strings.Contains(err.Error(), "reader_started") {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestSummary(t *testing.T) {
	l := memlog.New()
	fill(t, l, 1)
	var buf bytes.Buffer
	if err := Print(context.Background(), &buf, localSource(l, 0), Options{}); err != nil {
		t.Fatal(err)
	}
	want := "1.0 2026-11-30T12:01:00Z invoked        s1 door=exec input=7B command=\"cat f\"\n" +
		"1.1 2026-11-30T12:01:00Z archived       s1 handle=0000000000000001 lines=1 bytes=8\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFollow(t *testing.T) {
	l := memlog.New()
	fill(t, l, 2)
	// Bounded by --seq: the follow ends once batch 4 was printed.
	done := make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- Print(context.Background(), &out, localSource(l, 0),
			Options{JSON: true, Follow: true, Poll: time.Millisecond, Query: Query{Kinds: []events.Kind{events.KindInvoked}, To: 4}})
	}()
	for !strings.Contains(out.String(), `"seq":2`) {
		time.Sleep(time.Millisecond)
	}
	more := memlog.New() // batches 3..5 appended to l while it follows
	fill(t, more, 5)
	for seq := events.Seq(3); seq <= 5; seq++ {
		batch, _ := more.Get(context.Background(), seq)
		if _, err := l.Append(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 4 || strings.Contains(out.String(), `"seq":5`) {
		t.Errorf("followed to seq 4: %d lines\n%s", n, out.String())
	}

	// Unbounded: it ends when its context does, without an error.
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	var out2 syncBuffer
	go func() { done <- Print(ctx, &out2, localSource(l, 0), Options{Follow: true, Poll: time.Millisecond}) }()
	for strings.Count(out2.String(), "\n") < 10 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
