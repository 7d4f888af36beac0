package pipeline

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// reuseSeed is an output Shorten reads whole (no distiller, collapse
// tried, nothing shortened): prose lines with failure lines among them.
func reuseSeed() string {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString(dtLine("row"+strconv.Itoa(i), 60))
		if i%7 == 3 {
			b.WriteString("Error: the upload of part " + strings.Repeat("x", i) + " failed\n")
		}
	}
	return b.String()
}

// FuzzDecideReuse: Decide given what Shorten read of the text (Reuse)
// decides exactly as Decide alone, every line already shown, so a
// failure verdict Shorten passed on wrongly would fold a failure line
// (red if Reuse handed over another text's lines or verdicts), and
// leaves the result it read from as Shorten returned it (red if Decide
// writes into the lines or verdicts).
func FuzzDecideReuse(f *testing.F) {
	f.Add(reuseSeed(), "./run")
	f.Add(reuseSeed()+"FAILED tests/test_a.py::test_x\n", "pytest -q")
	f.Add("commit 1\nfix: never fold failures\n"+reuseSeed(), "git log")
	f.Fuzz(func(t *testing.T, text, cmd string) {
		r := Shorten(ShortenRequest{Command: cmd, Tool: "Bash", Text: text})
		req := Request{Text: text, Source: cmd}
		if r.Changed {
			req.Text, req.Original = r.Text, text
		}
		want := Decide(req, allSeenView{})
		if got := Decide(r.Reuse(req), allSeenView{}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: with Shorten's reading %+v, alone %+v", text, got, want)
		}
		// Decide only reads what Reuse handed it: the result is still the
		// one Shorten returns, so a caller may keep it for the next equal
		// request (the hooks Engine does).
		if again := Shorten(ShortenRequest{Command: cmd, Tool: "Bash", Text: text}); !reflect.DeepEqual(r, again) {
			t.Fatalf("%q: Decide changed the result it was handed\nafter %+v\nfresh %+v", text, r, again)
		}
	})
}

// TestReuseCarriesFailureLines: on an output Shorten leaves whole after
// trying the collapse, Reuse hands Decide the text's lines and failure
// verdicts (the fuzz target above is not vacuous), and none for a text
// Shorten did not read.
func TestReuseCarriesFailureLines(t *testing.T) {
	text := reuseSeed()
	r := Shorten(ShortenRequest{Command: "./run", Tool: "Bash", Text: text})
	if r.Changed {
		t.Fatalf("seed shortened (%s); pick one Shorten leaves whole", r.Reason)
	}
	m := r.Reuse(Request{Text: text}).memo
	if m == nil || m.lines == nil || m.failure == nil {
		t.Fatalf("memo %+v", m)
	}
	fails := 0
	for _, f := range m.failure {
		if f {
			fails++
		}
	}
	if fails != 4 {
		t.Fatalf("%d failure lines, want 4", fails)
	}
	if r.Reuse(Request{Text: text + "x"}).memo != nil {
		t.Fatal("memo handed to another text")
	}
}
