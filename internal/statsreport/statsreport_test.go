package statsreport

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/testfixture"
)

// update rewrites the golden files under testdata/ (go test ./internal/statsreport -update).
var update = flag.Bool("update", false, "rewrite golden files")

func TestStatsGolden(t *testing.T) {
	svc := testfixture.Service(t)
	rep, _ := testfixture.ServiceStats(t, svc, time.Time{})
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	testfixture.CheckGolden(t, "stats/report.json", js.Bytes(), *update)
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"summary", Options{View: "summary", Top: 15}},
		{"detail", Options{View: "detail", Top: 3}},
		{"folds", Options{View: "folds"}},
		{"projects", Options{View: "projects"}},
		{"terminal", Options{View: "summary", Terminal: true}},
	} {
		var b bytes.Buffer
		Render(&b, rep, c.o)
		testfixture.CheckGolden(t, "stats/"+c.name+".txt", b.Bytes(), *update)
	}

	// The figures the golden files hold, checked by hand.
	a := rep.Agent
	if a.Calls != 16 || rep.Terminal.Calls != 2 || a.BytesSaved != a.RawBytes-a.DeliveredBytes {
		t.Errorf("calls %d (terminal %d), saved %d", a.Calls, rep.Terminal.Calls, a.BytesSaved)
	}
	m := a.Mechanisms
	if sum := m.Folded.BytesSaved + m.Distilled.BytesSaved + m.Collapsed.BytesSaved + m.Redacted.BytesSaved + m.Cut.BytesSaved; sum != a.BytesSaved {
		t.Errorf("mechanism bytes add to %d, headline %d", sum, a.BytesSaved)
	}
	if m.Distilled.Calls != 2 || m.Distilled.BytesSaved != 3800+3000 || m.Distilled.BaseBytes != 9000 {
		t.Errorf("distilled %+v", m.Distilled)
	}
	if m.Collapsed.Calls != 1 || m.Collapsed.BytesSaved != 2100 || m.Redacted.RedactedValues != 2 || m.Redacted.BytesSaved != 10 {
		t.Errorf("collapsed %+v redacted %+v", m.Collapsed, m.Redacted)
	}
	if m.Folded.Calls != 5 || m.Folded.Folds != 5 || m.LeftAlone.Calls != 8 {
		t.Errorf("folded %+v, left alone %+v", m.Folded, m.LeftAlone)
	}
	if l := a.Lifetimes; l.Compactions != 1 || l.CallsBeforeCompaction.Max != 8 {
		t.Errorf("lifetimes %+v", l)
	}

	// --since keeps the later events only, folded afresh.
	since := time.Date(2026, 3, 2, 9, 40, 0, 0, time.UTC)
	rs, _ := testfixture.ServiceStats(t, svc, since)
	if rs.Since != "2026-03-02T09:40:00Z" || rs.Agent.Calls != 5 || rs.Terminal.Calls != 2 {
		t.Errorf("since: %s, %d agent calls, %d terminal", rs.Since, rs.Agent.Calls, rs.Terminal.Calls)
	}
	var b bytes.Buffer
	Render(&b, rs, Options{View: "summary"})
	testfixture.CheckGolden(t, "stats/since.txt", b.Bytes(), *update)
}

func TestParseSince(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 3, 2, 15, 30, 0, 0, loc)
	for _, c := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "1h", want: now.Add(-time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "3d", want: now.Add(-72 * time.Hour)},
		{in: "2w", want: now.Add(-14 * 24 * time.Hour)},
		{in: "today", want: time.Date(2026, 3, 2, 0, 0, 0, 0, loc)},
		{in: "Week", want: now.Add(-7 * 24 * time.Hour)},
		{in: "month", want: now.Add(-30 * 24 * time.Hour)},
		{in: "2026-01-31", want: time.Date(2026, 1, 31, 0, 0, 0, 0, loc)},
		{in: "2026-01-31T10:00:00Z", want: time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)},
		{in: "yesterday", bad: true},
		{in: "-1h", bad: true},
		{in: "0d", bad: true},
	} {
		got, err := ParseSince(c.in, now)
		if c.bad {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestNumAndSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 24160293: "24,160,293"} {
		if got := Num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1500: "1.5 kB", 2383998: "2.4 MB", -2500: "-2.5 kB"} {
		if got := Size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
