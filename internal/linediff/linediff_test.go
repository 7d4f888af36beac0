package linediff

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// applyScript rebuilds both sides of an edit script.
func applyScript(script []Line) (a, b []string) {
	for _, l := range script {
		if l.Op != '+' {
			a = append(a, l.Text)
		}
		if l.Op != '-' {
			b = append(b, l.Text)
		}
	}
	return a, b
}

func TestScriptRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "[OMNI: marker]\n", "e"}
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[rng.Intn(len(alphabet)-1)]
		}
		return out
	}
	for i := 0; i < 500; i++ {
		a, b := gen(rng.Intn(30)), gen(rng.Intn(30))
		script := Script(a, b)
		ga, gb := applyScript(script)
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("round trip failed for %q -> %q: %v", a, b, script)
		}
		edits := 0
		for _, l := range script {
			if l.Op != ' ' {
				edits++
			}
		}
		if edits > len(a)+len(b) {
			t.Fatalf("%d edits for %d+%d lines", edits, len(a), len(b))
		}
	}
	// A fold: one run replaced by one marker is one hunk, minimal.
	a := []string{"h\n", "1\n", "2\n", "3\n", "4\n", "5\n", "t\n"}
	b := []string{"h\n", "[OMNI: 5 lines already shown]\n", "t\n"}
	hs := Hunks(a, b, 1)
	if len(hs) != 1 || hs[0].A0 != 0 || hs[0].An != 7 || hs[0].B0 != 0 || hs[0].Bn != 3 || len(hs[0].Lines) != 8 {
		t.Fatalf("hunks %+v", hs)
	}
	// Far-apart changes make two hunks; near ones merge.
	a = strings.SplitAfter("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "\n")
	a = a[:len(a)-1]
	b = append([]string{}, a...)
	b[1], b[10] = "x\n", "y\n"
	if hs := Hunks(a, b, 2); len(hs) != 2 {
		t.Fatalf("want two hunks, got %+v", hs)
	}
	if hs := Hunks(a, b, 5); len(hs) != 1 {
		t.Fatalf("want one hunk, got %+v", hs)
	}
}

// TestScriptPastMaxEdits: past MaxEdits the middle is one deletion and one
// insertion, and the script still rebuilds both sides.
func TestScriptPastMaxEdits(t *testing.T) {
	var a, b []string
	for i := 0; i < MaxEdits; i++ {
		a = append(a, "a\n")
		b = append(b, "b\n")
	}
	script := Script(a, b)
	if len(script) != 2*MaxEdits || script[0].Op != '-' || script[MaxEdits].Op != '+' {
		t.Fatalf("script of %d lines, first %q", len(script), script[0].Op)
	}
	ga, gb := applyScript(script)
	if len(ga) != MaxEdits || len(gb) != MaxEdits {
		t.Fatal("round trip")
	}
}

func TestSplitKeepEnds(t *testing.T) {
	if got := SplitKeepEnds("a\nb\n\nc"); strings.Join(got, "|") != "a\n|b\n|\n|c" {
		t.Fatalf("%q", got)
	}
	if SplitKeepEnds("") != nil {
		t.Fatal("empty text has lines")
	}
}

func TestWrite(t *testing.T) {
	var out bytes.Buffer
	Write(&out, SplitKeepEnds("a\nb\nc"), SplitKeepEnds("a\nx\nc"), 1, false)
	want := "@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n\\ No newline at end of text\n"
	if out.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	Write(&out, SplitKeepEnds("a\n"), nil, 0, true)
	if want := Cyan + "@@ -1 +0,0 @@" + Reset + "\n" + Red + "-a" + Reset + "\n"; out.String() != want {
		t.Fatalf("got %q want %q", out.String(), want)
	}
	out.Reset()
	Write(&out, []string{"a\n"}, []string{"a\n"}, 3, false)
	if out.Len() != 0 {
		t.Fatalf("equal texts printed %q", out.String())
	}
}
