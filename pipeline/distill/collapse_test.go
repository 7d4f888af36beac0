package distill

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

func TestCollapseTypedAndGeneric(t *testing.T) {
	var b strings.Builder
	b.WriteString("running 12 tests\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "test t%d ... ok\n", i)
	}
	b.WriteString("test t10 ... FAILED\ntest t11 ... ok\n\ntest result: FAILED. 11 passed; 1 failed\n")
	out, ok := collapseText(b.String())
	want := "running 12 tests\n[10 similar lines collapsed] (pattern: \"test _ ... ok\")\ntest t10 ... FAILED\ntest t11 ... ok\n\ntest result: FAILED. 11 passed; 1 failed\n"
	if !ok || out != want {
		t.Fatalf("got %q", out)
	}
}

func TestCollapseNeverGroupsFailureLines(t *testing.T) {
	in := strings.Repeat("Error: connection refused\n", 12)
	if out, ok := collapseText(in); ok || out != in {
		t.Fatalf("failure lines grouped: %q", out)
	}
}

func TestCollapseUnderTenLines(t *testing.T) {
	in := strings.Repeat("same\n", 9)
	if _, ok := collapseText(in); ok {
		t.Fatal("collapsed under 10 lines")
	}
}

func TestCollapseGenericNeedsMajority(t *testing.T) {
	// 3 identical lines among 12 distinct ones: not repetitive enough.
	var b strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "distinct %d\n", i)
	}
	b.WriteString("dup\ndup\ndup\n")
	if out, ok := collapseText(b.String()); ok {
		t.Fatalf("minority duplicates collapsed: %q", out)
	}
	// Lines that differ only in a number are distinct facts.
	b.Reset()
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	if _, ok := collapseText(b.String()); ok {
		t.Fatal("digits were normalised")
	}
}

func TestCollapseLogRunsKeepBoundaries(t *testing.T) {
	var b strings.Builder
	b.WriteString("10:00:00 INFO  [app] starting\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "10:00:%02d DEBUG [db] upsert id=%d\n", i, i)
	}
	b.WriteString("10:00:09 INFO  [app] batch committed\n10:00:10 WARNING [v] record rejected\n10:00:11 ERROR [db] write failed: disk full\n")
	out, ok := collapseText(b.String())
	want := "10:00:00 INFO  [app] starting\n[8 log lines collapsed: 8 DEBUG]\n10:00:09 INFO  [app] batch committed\n10:00:10 WARNING [v] record rejected\n10:00:11 ERROR [db] write failed: disk full\n"
	if !ok || out != want {
		t.Fatalf("got %q", out)
	}
}

func TestCollapseRepeatedWarningsAfterTheFirst(t *testing.T) {
	var b strings.Builder
	b.WriteString("10:00:00 INFO  [app] starting\n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "10:00:%02d DEBUG [db] upsert id=%d\n", 2*i+1, i)
		fmt.Fprintf(&b, "10:00:%02d WARNING [v] record a%db rejected: missing field (offset=%d)\n", 2*i+2, i, i*7)
	}
	b.WriteString("10:00:20 WARNING [db] commit took 317ms\n10:00:21 INFO  [app] drained\n10:00:22 ERROR [db] write failed: disk full\n")
	out, _, ok := Collapse(b.String(), textline.SplitLines(nil, b.String()))
	want := "10:00:00 INFO  [app] starting\n10:00:01 DEBUG [db] upsert id=0\n" +
		"10:00:02 WARNING [v] record a0b rejected: missing field (offset=0)\n" +
		"10:00:03 DEBUG [db] upsert id=1\n[8 log lines collapsed: 4 WARNING, 4 DEBUG]\n" +
		"10:00:12 WARNING [v] record a5b rejected: missing field (offset=35)\n" +
		"10:00:20 WARNING [db] commit took 317ms\n10:00:21 INFO  [app] drained\n10:00:22 ERROR [db] write failed: disk full\n"
	if !ok || out != want {
		t.Fatalf("got %q", out)
	}
	// Two warnings of a shape are not a repetition: both stay.
	two := "10:00:00 INFO  [app] starting\n10:00:01 WARNING [v] record 1 rejected\n" + strings.Repeat("10:00:02 DEBUG [db] upsert\n", 5) +
		"10:00:03 WARNING [v] record 2 rejected\n10:00:04 INFO  [app] done\n10:00:05 INFO  [app] exit\n"
	if out, _, _ := Collapse(two, textline.SplitLines(nil, two)); !strings.Contains(out, "record 1 rejected") || !strings.Contains(out, "record 2 rejected") {
		t.Fatalf("a warning seen twice was folded: %q", out)
	}
}

func TestLogShape(t *testing.T) {
	a := logShape("2026-11-29 10:41:17,890 WARNING [ingestd.validate] record 406b663e99b2 rejected: missing field 'user' (batch=4 offset=42)")
	b := logShape("2026-11-29 10:41:20,386 WARNING [ingestd.validate] record 50f6e920d612 rejected: missing field 'user' (batch=180 offset=36)")
	c := logShape("2026-11-29 10:41:17,975 WARNING [ingestd.db] commit took 317ms (slow), wal size 1119 pages")
	if a != b || a == c {
		t.Fatalf("shapes: %q %q %q", a, b, c)
	}
}

func TestCollapseKeepsLineEndings(t *testing.T) {
	in := strings.Repeat("Compiling x v1\r\n", 12) + "Finished\r\n"
	out, ok := collapseText(in)
	if !ok || out != "[12 similar lines collapsed] (pattern: \"Compiling _\")\r\nFinished\r\n" {
		t.Fatalf("got %q", out)
	}
}

func TestLogLevel(t *testing.T) {
	cases := map[string]string{
		"2026-11-29 10:41:17,884 DEBUG   [ingestd.db] upsert": "DEBUG",
		"2026-03-14T09:00:00.000Z INFO  api: GET /healthz":    "INFO",
		"[2026-01-01 10:00:00] [INFO] Building jar":           "INFO",
		"10:00:01 TRACE x": "TRACE",
		"time=2026-01-01T10:00:00Z level=debug msg=x": "DEBUG",
		"level=info msg=x":                            "",
		"2026-11-29 WARNING [x] y":                    "",
		"DEBUG: row_join self=(0, 0)":                 "",
		"INFO:root:started":                           "",
		"The INFO column":                             "",
	}
	for in, want := range cases {
		if got := logLevel(in); got != want {
			t.Errorf("logLevel(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCollapse: no panic; every output line is an input line or a
// collapse marker; every failure line survives; the output never grows;
// the folded count matches the markers.
func FuzzCollapse(f *testing.F) {
	f.Add(strings.Repeat("test a ... ok\n", 12))
	f.Add(strings.Repeat("x\n", 5) + "error: y\n" + strings.Repeat("x\n", 6))
	f.Add(strings.Repeat("2026 DEBUG a\n2026 INFO b\n", 8) + "2026 ERROR c failed: d\n")
	f.Add("a\r\nb\r\n" + strings.Repeat("Compiling q\r\n", 10))
	f.Fuzz(func(t *testing.T, s string) {
		lines := textline.SplitLines(nil, s)
		out, folded, ok := Collapse(s, lines)
		if !ok {
			if out != s || folded != 0 {
				t.Fatal("unchanged result differs")
			}
			return
		}
		if len(out) >= len(s) {
			t.Fatalf("did not shrink: %q -> %q", s, out)
		}
		in := map[uint64]bool{}
		for _, ln := range lines {
			in[ln.Key] = true
		}
		outKeys := map[uint64]bool{}
		outLines := textline.SplitLines(nil, out)
		for _, ln := range outLines {
			outKeys[ln.Key] = true
			line := out[ln.Start:ln.End]
			if !in[ln.Key] && !isMarkerLine(line) {
				t.Fatalf("invented line %q", line)
			}
		}
		for _, ln := range lines {
			if ln.Key != 0 && textline.IsFailureLine(s[ln.Start:ln.End]) && !outKeys[ln.Key] {
				t.Fatalf("failure line lost: %q", s[ln.Start:ln.End])
			}
		}
		if countMarkers(s) == 0 && len(lines)-folded+countMarkers(out) != len(outLines) {
			t.Fatalf("line accounting: %d in, %d folded, %d out", len(lines), folded, len(outLines))
		}
	})
}

func countMarkers(s string) int {
	n := 0
	for _, ln := range textline.SplitLines(nil, s) {
		if isMarkerLine(s[ln.Start:ln.End]) {
			n++
		}
	}
	return n
}

// collapseText is Collapse over a text not yet split into lines.
func collapseText(text string) (string, bool) {
	out, _, ok := Collapse(text, textline.SplitLines(nil, text))
	return out, ok
}

// isMarkerLine reports whether a line is a marker: an omni marker
// ("[OMNI: …]", which an input may already hold) or a collapse marker.
func isMarkerLine(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "[OMNI") {
		return true
	}
	if !strings.HasPrefix(t, "[") {
		return false
	}
	if _, ok := leadingCount(t[1:]); !ok {
		return false
	}
	return strings.Contains(t, " similar lines collapsed] (pattern: ") || strings.Contains(t, " log lines collapsed: ")
}

func TestCollapseImagePullProgress(t *testing.T) {
	var b strings.Builder
	b.WriteString(" neo4j Pulling \n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, " %012x Pulling fs layer \n", i+0xa0)
	}
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, " 5f3fc6a897b0 Downloading [%s>%s]  %d.5MB/130.8MB\n", strings.Repeat("=", i), strings.Repeat(" ", 49-i), i*4)
	}
	b.WriteString("00000000000a: Pull complete\n0000000000a1: Already exists\n")
	b.WriteString(" 5f3fc6a897b0 Downloading failed: unexpected EOF\n")
	b.WriteString(" neo4j Pulled \n Container neo4j  Started\n")
	out, ok := collapseText(b.String())
	want := " neo4j Pulling \n[38 similar lines collapsed] (pattern: \"<layer> pull progress\")\n" +
		" 5f3fc6a897b0 Downloading failed: unexpected EOF\n neo4j Pulled \n Container neo4j  Started\n"
	if !ok || out != want {
		t.Fatalf("got %q", out)
	}
	for _, s := range []string{
		"5f3fc6a897b0 Downloading [==> ] retrying in 5s",
		"5f3fc6a897b0 Extracting error",
		"5f3fc6a897b0 Waiting for lock",
		"5f3fc6a897b0 Pull complete; 3 more",
		"zzzzzzzzzzzz Pull complete",
		"5f3fc6a897b0 Downloading [==x ]  1MB/2MB",
	} {
		if layerProgress(s) {
			t.Errorf("layerProgress(%q) = true", s)
		}
	}
}

// TestTypedPatternUnicodeBlank: a line of Unicode blanks only (its key is
// not blank, its trimmed text is empty) is no typed pattern and does not
// stop Collapse.
func TestTypedPatternUnicodeBlank(t *testing.T) {
	if p := typedPattern(""); p != "" {
		t.Fatalf("typedPattern(\"\") = %q", p)
	}
	text := strings.Repeat("\u00a0\u3000\n", 12)
	if out, _, ok := Collapse(text, textline.SplitLines(nil, text)); out == "" && ok {
		t.Fatal("collapsed blanks to nothing")
	}
}
