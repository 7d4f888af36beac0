package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// shCheck fails t when res breaks an invariant of every Shorten result
// (CheckShortened).
func shCheck(t testing.TB, req ShortenRequest, res ShortenResult) {
	t.Helper()
	if err := CheckShortened(req, res); err != nil {
		t.Fatal(err)
	}
}

func TestSizePredicates(t *testing.T) {
	cases := []struct {
		out, in      int
		earns, route bool
	}{
		{94, 100, true, true},
		{95, 100, false, true},
		{89, 100, true, false},
		{90, 100, true, true},
		{0, 100, true, false},
		{100, 100, false, true},
	}
	for _, c := range cases {
		if got := distillerEarnsKeep(c.out, c.in); got != c.earns {
			t.Errorf("distillerEarnsKeep(%d, %d) = %v", c.out, c.in, got)
		}
		if got := routeKeepsRaw(c.out, c.in); got != c.route {
			t.Errorf("routeKeepsRaw(%d, %d) = %v", c.out, c.in, got)
		}
	}
	if !markerPaysForItself(50, 49, 100) || markerPaysForItself(50, 50, 100) {
		t.Error("markerPaysForItself must be strict")
	}
}

func TestShortenEmptyAndTiny(t *testing.T) {
	for _, s := range []string{"", "\n\n", "ok\n", "ok  \tpkg\t0.1s\n"} {
		r := Shorten(ShortenRequest{Command: "go test ./...", Text: s})
		if r.Changed || r.Text != s {
			t.Errorf("%q changed to %q", s, r.Text)
		}
	}
}

// shGoTestV builds a passing go test -v run of n tests.
func shGoTestV(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCase%03d\n--- PASS: TestCase%03d (0.00s)\n", i, i)
	}
	b.WriteString("PASS\nok  \texample.com/pkg\t0.123s\n")
	return b.String()
}

func TestShortenGoTestGreen(t *testing.T) {
	raw := shGoTestV(100)
	req := ShortenRequest{Command: "go test ./...", Text: raw}
	r := Shorten(req)
	shCheck(t, req, r)
	h := HandleOf(raw)
	want := "PASS\nok  \texample.com/pkg\t0.123s\n[OMNI: 200 lines omitted, omni retrieve " + h + " for full output]\n"
	if r.Text != want {
		t.Fatalf("got %q\nwant %q", r.Text, want)
	}
	if r.Distiller != "go-test" || len(r.Blocks) != 1 || r.Blocks[0].Bytes != raw || r.Reason != "" {
		t.Fatalf("result %+v", r)
	}
}

func TestShortenFailingRunNeedsVerdict(t *testing.T) {
	raw := shGoTestV(50)
	raw = strings.Replace(raw, "PASS\nok  \texample.com/pkg\t0.123s\n", "panic: boom\n", 1)
	req := ShortenRequest{Command: "go test ./...", Text: raw, ExitCode: 2}
	r := Shorten(req)
	shCheck(t, req, r)
	if r.Reason != "failed:unverified" && !r.Collapsed {
		t.Fatalf("a failing run without FAIL verdict was distilled: %+v", r)
	}
	if strings.Contains(r.Text, "PASS\n") {
		t.Fatal("invented a verdict")
	}
	// With the runner's own failing verdict, the failing run is distilled and
	// every failure line stays.
	raw = shGoTestV(50)
	raw = strings.Replace(raw, "PASS\nok  \texample.com/pkg\t0.123s\n",
		"--- FAIL: TestX (0.00s)\n    x_test.go:12: got 1, want 2\nFAIL\nFAIL\texample.com/pkg\t0.1s\n", 1)
	req = ShortenRequest{Command: "go test ./...", Text: raw, ExitCode: 1}
	r = Shorten(req)
	shCheck(t, req, r)
	for _, want := range []string{"--- FAIL: TestX (0.00s)\n", "    x_test.go:12: got 1, want 2\n", "FAIL\texample.com/pkg\t0.1s\n"} {
		if !strings.Contains(r.Text, want) {
			t.Fatalf("missing %q in %q", want, r.Text)
		}
	}
	if r.Distiller != "go-test" || r.Reason != "" {
		t.Fatalf("result %+v", r)
	}
}

func TestShortenStructuredPassesByteForByte(t *testing.T) {
	raw := `{"items": [1, 2, 3], "name": "x"}` + "\n"
	r := Shorten(ShortenRequest{Command: "curl -s http://x/api", Text: raw})
	if r.Changed || r.Text != raw || r.Reason != "structured:json" {
		t.Fatalf("%+v", r)
	}
	// A JSON line among prose: the any-JSON-line rule.
	raw = "fetched:\n" + `{"a": 1}` + "\n" + strings.Repeat("noise line\n", 30)
	r = Shorten(ShortenRequest{Command: "python3 x.py", Text: raw})
	if r.Changed || r.Reason != "structured:json-line" {
		t.Fatalf("%+v", r)
	}
}

// A structured payload the door redacted passes as it is (no marker line
// would parse), with the door's count.
func TestShortenRedactedJSONStaysParseable(t *testing.T) {
	raw := `{"user": "dev", "token": "[REDACTED]", "nested": {"password": "[REDACTED]", "count": 3}}` + "\n"
	r := Shorten(ShortenRequest{Command: "cat config.json", Text: raw, RedactedValues: 2})
	if r.Changed || r.Text != raw || r.Redacted != 2 || r.Reason != "structured:json" {
		t.Fatalf("%+v", r)
	}
}

// The redaction marker, with the door's count, is the first line; without
// a count (nothing replaced, or --keep-secrets) the text passes.
func TestShortenRedactionMarkerFirst(t *testing.T) {
	raw := "HOME=/home/dev\nGITHUB_TOKEN=[REDACTED]\nPATH=/usr/bin\n"
	r := Shorten(ShortenRequest{Command: "env", Text: raw, RedactedValues: 1})
	want := "[OMNI: 1 sensitive value(s) redacted]\nHOME=/home/dev\nGITHUB_TOKEN=[REDACTED]\nPATH=/usr/bin\n"
	if r.Text != want || r.Redacted != 1 || !r.Changed {
		t.Fatalf("got %q", r.Text)
	}
	r = Shorten(ShortenRequest{Command: "env", Text: raw})
	if r.Changed || r.Text != raw {
		t.Fatal("no count, no marker")
	}
}

func TestShortenChainsFiltersEnumerations(t *testing.T) {
	log := shGoTestV(40)
	cases := []struct{ cmd, reason string }{
		{"go test ./... && ls", "chain"},
		{"go test ./...; echo \"exit=$?\"", "chain"},
		{"go test ./... | grep FAIL", "filtered"},
		{"go test ./... 2>&1 | sort", "filtered"},
		{"ls -la", "enumeration"},
		{"find . -name '*.go'", "enumeration"},
		{"git log --oneline", "enumeration"},
		{"kubectl get pods", "enumeration"},
		{"docker ps -a", "enumeration"},
		{"git diff --stat", "enumeration"},
		{"terraform plan", "verbatim"},
		{"omni retrieve 0123456789abcdef", "own-recovery"},
	}
	for _, c := range cases {
		r := Shorten(ShortenRequest{Command: c.cmd, Text: log})
		if r.Changed || r.Reason != c.reason {
			t.Errorf("%s: changed=%v reason=%q, want %q", c.cmd, r.Changed, r.Reason, c.reason)
		}
	}
	// One producer after silent commands, and a transparent tee, are claimed.
	for _, cmd := range []string{"cd /src && go test ./...", "export X=1; go test ./...", "go test ./... 2>&1 | tee out.log",
		"GOFLAGS=-count=1 go test ./...", "sudo -E env X=1 time go test ./...", "bash -c 'cd x && go test ./...'"} {
		r := Shorten(ShortenRequest{Command: cmd, Text: log})
		if r.Distiller != "go-test" || !r.Changed {
			t.Errorf("%s: %+v", cmd, r.Reason)
		}
	}
	// A truncating filter: no distiller, but the collapse fallback may apply.
	r := Shorten(ShortenRequest{Command: "go test ./... | tail -100", Text: log})
	if r.Distiller != "" || !r.Collapsed {
		t.Errorf("| tail: %+v", r)
	}
}

func TestShortenReadAndEditsUntouched(t *testing.T) {
	raw := strings.Repeat("same line\n", 200)
	for _, tool := range []string{"Read", "Edit", "Write"} {
		r := Shorten(ShortenRequest{Tool: tool, Text: raw})
		if r.Changed {
			t.Errorf("%s changed", tool)
		}
	}
	// The same bytes from an unknown command collapse.
	r := Shorten(ShortenRequest{Command: "./gen.sh", Text: raw})
	if !r.Collapsed || !strings.Contains(r.Text, "[200 similar lines collapsed] (pattern: \"same line\")") {
		t.Fatalf("%q", r.Text)
	}
}

func TestShortenRewindCap(t *testing.T) {
	var b strings.Builder
	for b.Len() <= maxBlockBytes+1000 {
		b.WriteString("2026-01-01 10:00:00 DEBUG [db] upsert id=1234567890 kind=click user=42 and some padding\n")
	}
	b.WriteString("2026-01-01 10:00:01 ERROR [db] write failed: disk full\n")
	raw := b.String()
	req := ShortenRequest{Command: "./server", Text: raw, ExitCode: 1}
	r := Shorten(req)
	shCheck(t, req, r)
	// Over the 64 KiB ledger block size the raw is still archived: rule 2,
	// a handle wherever the bytes can be archived (maxArchiveBytes).
	if len(r.Blocks) != 1 || r.Blocks[0].Bytes != raw || !strings.Contains(r.Text, "omni retrieve "+r.Blocks[0].Handle+" for full output]") {
		t.Fatalf("%d blocks, %q", len(r.Blocks), r.Text[max(0, len(r.Text)-300):])
	}
	if !strings.Contains(r.Text, "ERROR [db] write failed: disk full") {
		t.Fatal("failure line lost")
	}
}

func TestFinalCutLineForm(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3*maxOutputBytes; i++ {
		fmt.Fprintf(&b, "line %06d %s\n", i, strings.Repeat("x", i%50))
	}
	b.WriteString("VERDICT: the end\n")
	raw := b.String()
	req := ShortenRequest{Command: "ls -R", Text: raw}
	r := Shorten(req)
	shCheck(t, req, r)
	if len(r.Text) > maxOutputBytes {
		t.Fatalf("final text %d bytes", len(r.Text))
	}
	if !strings.HasSuffix(r.Text, "VERDICT: the end\n") || !strings.HasPrefix(r.Text, "line 000000 \n") {
		t.Fatal("head or tail lost")
	}
	if !strings.Contains(r.Text, "[OMNI: output truncated, ") || !strings.Contains(r.Text, " dropped from the middle") {
		t.Fatal("no line-form marker")
	}
	tail := r.Text[strings.Index(r.Text, "dropped from the middle"):]
	if len(tail) > maxOutputBytes/tailBudgetFraction+200 || len(tail) < maxOutputBytes/tailBudgetFraction-200 {
		t.Fatalf("tail of %d bytes", len(tail))
	}
	// The middle is over the 64 KiB ledger block size here: still archived.
	if len(r.Blocks) != 1 || !strings.Contains(r.Text, "omni retrieve "+r.Blocks[0].Handle+"]") {
		t.Fatal("no handle for the archived middle")
	}
	// A smaller overflow archives its middle.
	raw2 := raw[:maxOutputBytes+20000]
	raw2 = raw2[:strings.LastIndexByte(raw2, '\n')+1]
	r = Shorten(ShortenRequest{Command: "ls -R", Text: raw2})
	if len(r.Blocks) != 1 || !strings.Contains(r.Text, "omni retrieve "+r.Blocks[0].Handle+"]") {
		t.Fatalf("middle not archived: %d blocks", len(r.Blocks))
	}
	if got := strings.Replace(r.Text, r.Text[strings.Index(r.Text, "[OMNI: output truncated"):strings.Index(r.Text, "]\n")+2], r.Blocks[0].Bytes, 1); got != raw2 {
		t.Fatal("head + middle + tail is not the raw output")
	}
}

func TestFinalCutByteFormKeepsTail(t *testing.T) {
	raw := "start " + strings.Repeat("abc def ghij ", 6000) + " FATAL: the end"
	req := ShortenRequest{Command: "cat blob", Text: raw}
	r := Shorten(req)
	if !strings.HasPrefix(r.Text, "start ") || !strings.HasSuffix(r.Text, " FATAL: the end") {
		t.Fatal("byte form lost head or tail")
	}
	if !strings.Contains(r.Text, " bytes kept, omni retrieve ") || len(r.Blocks) != 1 {
		t.Fatalf("%q", r.Text[maxOutputBytes-maxOutputBytes/tailBudgetFraction-300:][:400])
	}
}

func TestShortenDeterministic(t *testing.T) {
	raw := shGoTestV(30)
	a := Shorten(ShortenRequest{Command: "go test -v", Text: raw})
	b := Shorten(ShortenRequest{Command: "go test -v", Text: raw})
	if a.Text != b.Text || len(a.Blocks) != len(b.Blocks) {
		t.Fatal("not deterministic")
	}
}

func TestShortenNeverClaimsMarkedOutput(t *testing.T) {
	raw := shGoTestV(30) + "[OMNI: 10 lines omitted, omni retrieve 0123456789abcdef for full output]\n"
	r := Shorten(ShortenRequest{Command: "go test -v", Text: raw})
	if r.Changed || r.Reason != "has-marker" {
		t.Fatalf("%+v", r)
	}
}

// shBench16K is a 16 KB cargo test log with one failure.
func shBench16K() string {
	var b strings.Builder
	b.WriteString("   Compiling app v0.1.0 (/src/app)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.00s\n     Running unittests src/lib.rs (target/debug/deps/app-0123)\n\nrunning 400 tests\n")
	for i := 0; b.Len() < 16*1024-600; i++ {
		fmt.Fprintf(&b, "test module_%d::tests::case_%d ... ok\n", i%17, i)
	}
	b.WriteString("test perf::tests::latency ... FAILED\n\nfailures:\n\n---- perf::tests::latency stdout ----\nthread 'perf::tests::latency' panicked at src/perf.rs:42:5:\nassertion failed: p50 < 10\n\nfailures:\n    perf::tests::latency\n\ntest result: FAILED. 399 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.23s\n\nerror: test failed, to rerun pass `--lib`\n")
	return b.String()
}

func TestShortenBench16KShape(t *testing.T) {
	raw := shBench16K()
	req := ShortenRequest{Command: "cargo test", Text: raw, ExitCode: 101}
	r := Shorten(req)
	shCheck(t, req, r)
	if r.Distiller != "cargo-test" || len(r.Text) > 1000 {
		t.Fatalf("%d bytes, %+v", len(r.Text), r.Reason)
	}
}

func BenchmarkShorten(b *testing.B) {
	raw := shBench16K()
	req := ShortenRequest{Command: "cargo test", Text: raw, ExitCode: 101}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		Shorten(req)
	}
}

func BenchmarkShortenCollapse(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 16*1024; i++ {
		fmt.Fprintf(&sb, "2026-01-01 10:00:%02d DEBUG [db] upsert id=%d kind=click\n", i%60, i)
		if i%25 == 0 {
			fmt.Fprintf(&sb, "2026-01-01 10:00:%02d WARNING [v] record %d rejected\n", i%60, i)
		}
	}
	req := ShortenRequest{Command: "./server", Text: sb.String()}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		Shorten(req)
	}
}

// TestShortenDoorGrewYAML: a YAML document the door's masks made longer
// (a value shorter than "[REDACTED]") gets the redaction marker line, so
// the output never grows without saying why; one the masks did not make
// longer passes in place. Red without ShortenRequest.DoorGrew.
func TestShortenDoorGrewYAML(t *testing.T) {
	doc := "services:\n  main:\n    image: b3log/siyuan\n    environment:\n      - TZ=America/New_York\n      # - AUTH_CODE=\"[REDACTED]\"\n"
	req := ShortenRequest{Command: "cat docker-compose.yml", Tool: "Bash", Text: doc, RedactedValues: 1, DoorGrew: true}
	got := Shorten(req)
	if want := "[OMNI: 1 sensitive value(s) redacted]\n" + doc; got.Text != want {
		t.Fatalf("grown YAML:\n%q\nwant\n%q", got.Text, want)
	}
	req.DoorGrew = false
	if got := Shorten(req); got.Text != doc {
		t.Fatalf("YAML the masks did not grow changed: %q", got.Text)
	}
}
