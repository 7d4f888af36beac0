package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// One test per ledger rule (the floors, runs, bars, scopes and marker texts
// Decide documents). Each test
// is built so that breaking the rule it names turns it red; the comment on
// each test names the code change that was tried.

// fakeView is a View over plain maps: key -> Seen, owed handles, and the
// Empty flag.
type fakeView struct {
	seen  map[uint64]Seen
	owed  map[string]bool // debts recorded without keys
	debts []Debt          // debts with their block's keys
	empty bool
}

func newFakeView() *fakeView {
	return &fakeView{seen: map[uint64]Seen{}, owed: map[string]bool{}}
}

func (v *fakeView) Lookup(k uint64) Seen { return v.seen[k] }
func (v *fakeView) Empty() bool          { return v.empty }
func (v *fakeView) Debts() []Debt {
	out := append([]Debt(nil), v.debts...)
	for h, ok := range v.owed {
		if ok {
			out = append(out, Debt{Handle: h})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}
func (v *fakeView) clone() *fakeView { c := newFakeView(); c.empty = v.empty; return c.merge(v) }
func (v *fakeView) merge(o *fakeView) *fakeView {
	for k, s := range o.seen {
		v.seen[k] = s
	}
	for h, b := range o.owed {
		v.owed[h] = b
	}
	v.debts = append(v.debts, o.debts...)
	return v
}

// see records every non-blank line of text as delivered in scope from
// source, the way the ledger answers: the first source in a scope stays,
// and a line in both scopes counts as session.
func (v *fakeView) see(scope Scope, source, text string) *fakeView {
	for _, l := range SplitLines(nil, text) {
		if l.Key == 0 {
			continue
		}
		old, ok := v.seen[l.Key]
		if ok && (old.Scope == ScopeSession || old.Scope == scope) {
			continue
		}
		v.seen[l.Key] = Seen{Scope: scope, Source: source}
	}
	return v
}

// allSeenView answers "delivered to this reader" for every key it is asked
// about, blank or not.
type allSeenView struct{}

func (allSeenView) Lookup(uint64) Seen { return Seen{Scope: ScopeSession, Source: "cat f"} }
func (allSeenView) Debts() []Debt      { return nil }
func (allSeenView) Empty() bool        { return false }

var dtWords = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod " +
	"tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud")

// dtLine returns one line of exactly size bytes ("\n" included) that starts
// with tag: plain prose, no failure word, nothing structured.
func dtLine(tag string, size int) string {
	if size < len(tag)+1 {
		panic(fmt.Sprintf("dtLine(%q, %d): too small", tag, size))
	}
	var b strings.Builder
	b.WriteString(tag)
	for i := 0; b.Len() < size-1; i++ {
		b.WriteByte(' ')
		b.WriteString(dtWords[(i+len(tag))%len(dtWords)])
	}
	s := b.String()[:size-1]
	if strings.HasSuffix(s, " ") { // keep the line's identity free of trailing blanks
		s = s[:len(s)-1] + "x"
	}
	s += "\n"
	if IsFailureLine(s) {
		panic("dtLine made a failure line: " + s)
	}
	return s
}

// dtLines returns k distinct lines tagged tag-0 … tag-(k-1) of total size n.
func dtLines(tag string, k, n int) string {
	var b strings.Builder
	for i := 0; i < k; i++ {
		size := n / k
		if i < n%k {
			size++
		}
		b.WriteString(dtLine(fmt.Sprintf("%s-%d", tag, i), size))
	}
	if b.Len() != n {
		panic("dtLines: size")
	}
	return b.String()
}

// dtMarker renders a marker independently of renderMarker, from the marker
// texts MarkerKind documents.
func dtMarker(kind MarkerKind, n int, h, from string) string {
	fc := ""
	if from != "" {
		fc = " from " + from
	}
	switch kind {
	case MarkerRun:
		return fmt.Sprintf("[OMNI: %d lines already shown%s, omni retrieve %s]", n, fc, h)
	case MarkerRerun:
		return fmt.Sprintf("[OMNI: %d lines identical to an earlier run, omni retrieve %s]", n, h)
	case MarkerWhole:
		return fmt.Sprintf("[OMNI: identical to the %d lines already shown%s, omni retrieve %s]", n, fc, h)
	case MarkerProject:
		return fmt.Sprintf("[OMNI: %d lines not shown here%s, omni retrieve %s]", n, fc, h)
	case MarkerProjectWhole:
		return fmt.Sprintf("[OMNI: identical to %d lines from an earlier session%s, none shown here, omni retrieve %s]", n, fc, h)
	}
	panic("kind")
}

func dtKeys(text string) []uint64 { return distinctKeys(SplitLines(nil, text), nil) }

func dtDecide(t *testing.T, req Request, v View) Decision {
	t.Helper()
	if k := Sniff(req.Text); k != KindNone && !strings.Contains(t.Name(), "Structured") {
		t.Fatalf("test text sniffs as %q; the test must use unstructured text", k)
	}
	d := Decide(req, v)
	checkDecision(t, req, v, d)
	return d
}

func dtUnchanged(t *testing.T, d Decision, req Request, reason string) {
	t.Helper()
	if d.Text != req.Text || len(d.Folds) != 0 {
		t.Fatalf("want the text unchanged (%s), got %d folds:\n%s", reason, len(d.Folds), d.Text)
	}
	if reason != "" && d.Reason != reason {
		t.Fatalf("reason %q, want %q", d.Reason, reason)
	}
	if want := dtKeys(req.Text); !reflect.DeepEqual(d.Delivered, want) {
		t.Fatalf("an unchanged text is recorded whole: Delivered has %d keys, want %d", len(d.Delivered), len(want))
	}
}

// TestDecideRunFloor: an output under MinRunBytes (128 B) never reaches the
// ledger; inside a longer output a run under 128 B never folds even when it
// clears its gain bar; a small output all seen folds whole (no coverage
// rule). Red with MinRunBytes = 129 or 127, with `<=`, without the run
// floor in planBlock, or with a coverage rule back.
func TestDecideRunFloor(t *testing.T) {
	if MinRunBytes != 128 || DefaultBars.MinRun != 128 {
		t.Fatalf("MinRunBytes = %d, DefaultBars.MinRun = %d, want 128", MinRunBytes, DefaultBars.MinRun)
	}
	for _, n := range []int{127, 128} {
		text := dtLines("floor", 1, n)
		v := newFakeView().see(ScopeSession, "cat f", text)
		req := Request{Text: text, Source: "cat f"}
		d := dtDecide(t, req, v)
		want := reasonFloor
		if n == 128 {
			want = reasonNoRun // past the floor, under the whole marker's bar
		}
		dtUnchanged(t, d, req, want)
	}
	// A 300 B output all seen folds whole.
	small := dtLines("small", 3, 300)
	if d := dtDecide(t, Request{Text: small, Source: "cat f"}, newFakeView().see(ScopeSession, "cat f", small)); len(d.Folds) != 1 || d.Folds[0].Kind != MarkerWhole {
		t.Fatalf("a 300 B output all seen: want one whole fold, got %d (%q)", len(d.Folds), d.Reason)
	}
	// One seen line of 127 B between new lines: its marker plus the gain
	// cost less than 127 B, only the run floor keeps it.
	for _, n := range []int{127, 128} {
		run := dtLines("run", 1, n)
		text := dtLines("head", 4, 400) + run + dtLines("tail", 4, 400)
		if c := len(dtMarker(MarkerRun, 1, ExampleHandle, "")) + 1 + MinSessionGain; c > 127 {
			t.Fatalf("the marker plus the gain is %d B: the test needs it under 127", c)
		}
		v := newFakeView().see(ScopeSession, "", run)
		d := dtDecide(t, Request{Text: text, Source: "make"}, v)
		if folds := len(d.Folds); (n == 127) != (folds == 0) {
			t.Fatalf("a %d B run: %d folds (floor %d)", n, folds, MinRunBytes)
		}
	}
	// A small output mostly seen: the seen run folds (the 1,024 B / 80%
	// rule is gone).
	run := dtLines("old", 4, 400)
	text := dtLines("new", 1, 90) + run
	v := newFakeView().see(ScopeSession, "", run)
	if d := dtDecide(t, Request{Text: text, Source: "make"}, v); len(d.Folds) != 1 || d.Folds[0].Block != run {
		t.Fatalf("a 490 B output 80%% seen: want its seen run folded, got %d folds (%q)", len(d.Folds), d.Reason)
	}
}

// dtBarText builds 1100 B of new lines, a run of k seen lines of runBytes,
// and a new last line; the run is the only thing that can fold.
func dtBarText(runBytes, k int) (text, run string) {
	run = dtLines("run", k, runBytes)
	return dtLines("head", 11, 1100) + run + dtLine("tail", 50), run
}

// TestDecideSessionBar: a session run folds only if its bytes are at least
// the rendered marker (with its line ending) plus 64. Red with
// MinSessionGain = 63 or 65, or with the ending left out of the cost.
func TestDecideSessionBar(t *testing.T) {
	marker := dtMarker(MarkerRun, 4, ExampleHandle, "")
	bar := len(marker) + len("\n") + 64
	// The run floor (128 B) lies above this bar: weigh the gain alone.
	bars := DefaultBars
	bars.MinRun = 0
	for _, n := range []int{bar, bar - 1} {
		text, run := dtBarText(n, 4)
		v := newFakeView().see(ScopeSession, "", run)
		d := dtDecide(t, Request{Text: text, Source: "go test ./...", Bars: &bars}, v)
		if n == bar-1 {
			if len(d.Folds) != 0 {
				t.Fatalf("a %d B run (bar %d) folded", n, bar)
			}
			continue
		}
		if len(d.Folds) != 1 {
			t.Fatalf("a run of exactly the bar (%d B) did not fold: %q", n, d.Reason)
		}
		f := d.Folds[0]
		if f.Kind != MarkerRun || f.Scope != ScopeSession || f.Bytes != n || f.Marker != dtMarker(MarkerRun, 4, f.Handle, "")+"\n" {
			t.Fatalf("fold %+v", f)
		}
	}
}

// TestDecideProjectBar: a project run needs the marker plus 128 B. Red with
// ProjectGainMult = 1 or 3.
func TestDecideProjectBar(t *testing.T) {
	marker := dtMarker(MarkerProject, 4, ExampleHandle, "")
	bar := len(marker) + len("\n") + 128
	for _, n := range []int{bar, bar - 1} {
		text, run := dtBarText(n, 4)
		v := newFakeView().see(ScopeProject, "", run)
		d := dtDecide(t, Request{Text: text, Source: "go test ./..."}, v)
		if n == bar-1 {
			if len(d.Folds) != 0 {
				t.Fatalf("a %d B project run (bar %d) folded", n, bar)
			}
			continue
		}
		if len(d.Folds) != 1 {
			t.Fatalf("a project run of exactly the bar (%d B) did not fold: %q", n, d.Reason)
		}
		if f := d.Folds[0]; f.Kind != MarkerProject || f.Scope != ScopeProject || f.Marker != dtMarker(MarkerProject, 4, f.Handle, "")+"\n" {
			t.Fatalf("fold %+v", f)
		}
	}
}

// TestDecideFailureLineSplitsRun: a failure line is never folded, however
// often it was shown, and splits the run; both halves still fold. Red
// without the IsFailureLine check in Decide.
func TestDecideFailureLineSplitsRun(t *testing.T) {
	head := dtLines("head", 4, 400)
	a := dtLines("a", 3, 300)
	fail := "error: connection refused (os error 111)\n"
	b := dtLines("b", 3, 300)
	tail := dtLine("tail", 80)
	text := head + a + fail + b + tail
	v := newFakeView().see(ScopeSession, "", a+fail+b)
	d := dtDecide(t, Request{Text: text, Source: "cargo run"}, v)
	if len(d.Folds) != 2 || d.Folds[0].Block != a || d.Folds[1].Block != b {
		t.Fatalf("want two folds around the failure line, got %d: %q", len(d.Folds), d.Text)
	}
	want := head + d.Folds[0].Marker + fail + d.Folds[1].Marker + tail
	if d.Text != want {
		t.Fatalf("delivered\n%s\nwant\n%s", d.Text, want)
	}
	// The repeated failure line is delivered (and recorded) again.
	if !containsKey(d.Delivered, textline.KeyOf(fail)) {
		t.Fatal("failure line missing from Delivered")
	}
}

func containsKey(ks []uint64, k uint64) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// TestDecideBlankLinesTravel: blank lines inside a run (and at the very
// start or end of the output) travel with it; blank lines between a run and
// a new line stay. Red without the blank-line bridging in planFolds (each
// half is under the bar alone).
func TestDecideBlankLinesTravel(t *testing.T) {
	a := dtLines("a", 2, 120)
	b := dtLines("b", 2, 120)
	run := a + "\n   \n\t\r\n" + b
	head := dtLines("head", 11, 1100)
	t.Run("inside", func(t *testing.T) {
		text := head + run + "\n" + dtLine("tail", 60)
		v := newFakeView().see(ScopeSession, "", a+b)
		d := dtDecide(t, Request{Text: text}, v)
		if len(d.Folds) != 1 || d.Folds[0].Block != run || d.Folds[0].Lines != 7 {
			t.Fatalf("want one fold of the 7 lines, blank ones included; got %d folds", len(d.Folds))
		}
		// The blank line after the run, before a new line, is not folded.
		if !strings.HasSuffix(d.Text, "]\n\n"+dtLine("tail", 60)) {
			t.Fatalf("blank line before the new line was folded: %q", d.Text[len(d.Text)-120:])
		}
	})
	t.Run("edges", func(t *testing.T) {
		text := "\n\n" + run + "\n" + head + run + "\n\n"
		v := newFakeView().see(ScopeSession, "", a+b)
		d := dtDecide(t, Request{Text: text}, v)
		if len(d.Folds) != 2 || d.Folds[0].Block != "\n\n"+run || d.Folds[1].Block != run+"\n\n" {
			t.Fatalf("leading/trailing blank lines did not travel: %d folds %q", len(d.Folds), d.Text)
		}
	})
}

// TestDecideBlankOnlyNeverFolds: blank lines never fold, even when the view
// claims every key. Red when blank lines are looked up (remove the
// `continue` after `info[i].blank = true`).
func TestDecideBlankOnlyNeverFolds(t *testing.T) {
	text := strings.Repeat("\n", 600) + strings.Repeat("   \r\n", 200) + strings.Repeat("\t\n", 300)
	req := Request{Text: text}
	d := dtDecide(t, req, allSeenView{})
	if d.Text != text || len(d.Folds) != 0 || len(d.Delivered) != 0 {
		t.Fatalf("blank-only text changed: %d folds, %d delivered", len(d.Folds), len(d.Delivered))
	}
	if d.RepeatBytes != 0 {
		t.Fatalf("RepeatBytes %d for blank lines", d.RepeatBytes)
	}
}

// TestDecideLineEndings: CRLF and a missing final newline survive byte for
// byte in unfolded lines; the marker takes the ending of the replaced lines
// (the last one outside Read, each one inside Read). Red with the marker's
// ending forced to "\n".
func TestDecideLineEndings(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	head := crlf(dtLines("head", 11, 1100))
	run := crlf(dtLines("run", 4, 400))
	mid := crlf(dtLine("mid", 70))
	last := "last line without a newline"
	t.Run("crlf", func(t *testing.T) {
		text := head + run + mid + last
		v := newFakeView().see(ScopeSession, "", run)
		d := dtDecide(t, Request{Text: text}, v)
		if len(d.Folds) != 1 {
			t.Fatalf("%d folds", len(d.Folds))
		}
		want := head + dtMarker(MarkerRun, 4, d.Folds[0].Handle, "") + "\r\n" + mid + last
		if d.Text != want {
			t.Fatalf("got\n%q\nwant\n%q", d.Text, want)
		}
	})
	t.Run("run at the end without a newline", func(t *testing.T) {
		text := head + strings.TrimSuffix(run, "\r\n")
		v := newFakeView().see(ScopeSession, "", run)
		d := dtDecide(t, Request{Text: text}, v)
		if len(d.Folds) != 1 {
			t.Fatalf("%d folds", len(d.Folds))
		}
		if want := head + dtMarker(MarkerRun, 4, d.Folds[0].Handle, ""); d.Text != want {
			t.Fatalf("got %q", d.Text[len(head):])
		}
	})
	t.Run("mixed endings, last one wins", func(t *testing.T) {
		r := strings.TrimSuffix(run, "\r\n") + "\n"
		text := head + r + mid
		v := newFakeView().see(ScopeSession, "", r)
		d := dtDecide(t, Request{Text: text}, v)
		if len(d.Folds) != 1 || d.Text != head+dtMarker(MarkerRun, 4, d.Folds[0].Handle, "")+"\n"+mid {
			t.Fatalf("got %q", d.Text)
		}
	})
	t.Run("read keeps each ending", func(t *testing.T) {
		// first line CRLF, then LF, CRLF, LF
		ls := strings.SplitAfter(run, "\r\n")
		r := ls[0] + strings.TrimSuffix(ls[1], "\r\n") + "\n" + ls[2] + strings.TrimSuffix(ls[3], "\r\n") + "\n"
		text := head + r + mid + last
		v := newFakeView().see(ScopeSession, "", r)
		d := dtDecide(t, Request{Text: text, Read: true}, v)
		if len(d.Folds) != 1 {
			t.Fatalf("%d folds", len(d.Folds))
		}
		want := head + dtMarker(MarkerRun, 4, d.Folds[0].Handle, "") + "\r\n" + "⋮\n⋮\r\n⋮\n" + mid + last
		if d.Text != want {
			t.Fatalf("got %q", d.Text[len(head):])
		}
	})
}

// TestDecideRunsSplitByScopeOnly: runs are maximal stretches of one scope,
// whatever call first delivered each line: adjacent seen lines of two
// earlier commands fold as one marker without a from-clause; a change of
// scope starts another run. Red when planFolds compares the source too
// (3 folds) or not even the scope (1 fold).
func TestDecideRunsSplitByScopeOnly(t *testing.T) {
	t.Run("same source, two scopes", func(t *testing.T) {
		s := dtLines("s", 3, 300)
		p := dtLines("p", 6, 600)
		text := dtLines("head", 11, 1100) + s + p + dtLine("tail", 60)
		v := newFakeView().see(ScopeSession, "make", s).see(ScopeProject, "make", p)
		d := dtDecide(t, Request{Text: text, Source: "make"}, v)
		if len(d.Folds) != 2 || d.Folds[0].Block != s || d.Folds[1].Block != p ||
			d.Folds[0].Kind != MarkerRun || d.Folds[1].Kind != MarkerProject {
			t.Fatalf("want a session fold then a project fold, got %d folds: %q", len(d.Folds), d.Text)
		}
	})
	head := dtLines("head", 11, 1100)
	a := dtLines("a", 3, 300)
	b := dtLines("b", 3, 300)
	c := dtLines("c", 6, 600)
	text := head + a + b + c + dtLine("tail", 60)
	v := newFakeView().see(ScopeSession, "cat a.go", a).see(ScopeSession, "cat b.go", b).see(ScopeProject, "make", c)
	d := dtDecide(t, Request{Text: text, Source: "go vet ./..."}, v)
	if len(d.Folds) != 2 {
		t.Fatalf("want 2 folds, got %d: %q", len(d.Folds), d.Text)
	}
	want := []string{
		dtMarker(MarkerRun, 6, d.Folds[0].Handle, ""),
		dtMarker(MarkerProject, 6, d.Folds[1].Handle, ""),
	}
	for i, f := range d.Folds {
		if f.Marker != want[i]+"\n" || f.Block != []string{a + b, c}[i] {
			t.Fatalf("fold %d: %q", i, f.Marker)
		}
	}
}

// TestDecideSessionOverProject: a line this reader was delivered and that
// the project also holds is decided as session: the session bar (150) and
// the "already shown" wording with the reader's own first source. The
// precedence itself lives in the View (ledger.Lookup answers Session first,
// see TestLineInBothScopesCountsAsSession in projections/ledger, and
// hooks.view passes it through); this test pins what Decide does with it.
func TestDecideSessionOverProject(t *testing.T) {
	marker := dtMarker(MarkerRun, 4, ExampleHandle, "")
	n := max(len(marker)+1+MinSessionGain, MinRunBytes) // clears the session bar, not the project one
	text, run := dtBarText(n, 4)
	v := newFakeView().see(ScopeProject, "make", run).see(ScopeSession, "cat a.go", run)
	d := dtDecide(t, Request{Text: text, Source: "go test"}, v)
	if len(d.Folds) != 1 || d.Folds[0].Scope != ScopeSession || d.Folds[0].Marker != dtMarker(MarkerRun, 4, d.Folds[0].Handle, "")+"\n" {
		t.Fatalf("want one session fold from cat a.go, got %d folds: %q", len(d.Folds), d.Text)
	}
}

// TestDecideProjectNeverWhole: a project fold never replaces the whole
// output, neither as one run nor as several. Red without the drop at the
// end of planFolds (two sources; the one-run case is guarded twice: by
// `whole ||` in planBlock and by that drop, and goes red only without both).
func TestDecideProjectNeverWhole(t *testing.T) {
	a := dtLines("a", 8, 800)
	b := dtLines("b", 8, 800)
	cases := []struct {
		name string
		text string
		v    *fakeView
		fold bool
	}{
		{"one run", a + b, newFakeView().see(ScopeProject, "make", a+b), false},
		{"two sources", a + b, newFakeView().see(ScopeProject, "make a", a).see(ScopeProject, "make b", b), false},
		{"two sources and blank lines", "\n" + a + "\n\n" + b + "\n", newFakeView().see(ScopeProject, "make a", a).see(ScopeProject, "make b", b), false},
		{"a new line beside it", a + b + dtLine("new", 40), newFakeView().see(ScopeProject, "make", a+b), true},
		{"two sources, a new line", a + dtLine("new", 40) + b, newFakeView().see(ScopeProject, "make a", a).see(ScopeProject, "make b", b), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := Request{Text: c.text, Source: "make"}
			d := dtDecide(t, req, c.v)
			if !c.fold {
				dtUnchanged(t, d, req, reasonNoRun)
				return
			}
			if len(d.Folds) == 0 {
				t.Fatal("a partial project fold was refused")
			}
		})
	}
}

// TestDecideProjectRefusedForEmptyReader: a reader that holds nothing yet
// (first delivery, or first after compaction) gets no project fold, partial
// or whole. Red without `|| v.Empty()` in planBlock.
func TestDecideProjectRefusedForEmptyReader(t *testing.T) {
	head := dtLines("head", 11, 1100)
	run := dtLines("run", 7, 700)
	text := head + run + dtLine("tail", 40)
	for _, empty := range []bool{true, false} {
		v := newFakeView().see(ScopeProject, "pytest", run)
		v.empty = empty
		d := dtDecide(t, Request{Text: text, Source: "pytest -x"}, v)
		if empty && len(d.Folds) != 0 {
			t.Fatalf("project fold for an empty reader: %q", d.Text)
		}
		if !empty && len(d.Folds) != 1 {
			t.Fatalf("no project fold for a reader holding lines")
		}
	}
}

// TestDecideOwedDeliveredWhole: a block the reader retrieved is delivered
// whole once and its handle listed in Paid; other blocks still fold. Red
// without the Owed check in planBlock.
func TestDecideOwedDeliveredWhole(t *testing.T) {
	head := dtLines("head", 11, 1100)
	a := dtLines("a", 4, 400)
	b := dtLines("b", 4, 400)
	mid := dtLine("mid", 50)
	text := head + a + mid + b
	v := newFakeView().see(ScopeSession, "", a+b)
	d1 := dtDecide(t, Request{Text: text}, v)
	if len(d1.Folds) != 2 {
		t.Fatalf("want 2 folds, got %d", len(d1.Folds))
	}
	ha := d1.Folds[0].Handle
	v.owed[ha] = true
	d2 := dtDecide(t, Request{Text: text}, v)
	if len(d2.Folds) != 1 || d2.Folds[0].Block != b {
		t.Fatalf("want only b folded, got %d folds", len(d2.Folds))
	}
	if !reflect.DeepEqual(d2.Paid, []string{ha}) {
		t.Fatalf("Paid %v, want [%s]", d2.Paid, ha)
	}
	if !strings.HasPrefix(d2.Text, head+a+mid) {
		t.Fatal("owed block not delivered whole")
	}
	for _, k := range dtKeys(a) {
		if !containsKey(d2.Delivered, k) {
			t.Fatal("owed block delivered but not recorded")
		}
	}
	if len(d1.Paid) != 0 {
		t.Fatalf("Paid %v without a debt", d1.Paid)
	}
}

// TestDecideBlockCut: a run over 64 KiB is cut at line boundaries into
// blocks of at most 65536 B; a single line over 64 KiB never folds. Red with
// `>=` for `>` in cutBlocks, with a larger maxBlockBytes, and without the
// long-line skip.
func TestDecideBlockCut(t *testing.T) {
	if maxBlockBytes != 65536 {
		t.Fatalf("maxBlockBytes = %d", maxBlockBytes)
	}
	head := dtLine("head", 100)
	mk := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(dtLine(fmt.Sprintf("blk%05d", i), 64))
		}
		return b.String()
	}
	for _, c := range []struct {
		lines int
		want  []int // fold sizes
	}{
		{1024, []int{65536}},
		{1025, []int{65536}}, // the 1-line remainder is under the bar
		{3000, []int{65536, 65536, 60928}},
	} {
		run := mk(c.lines)
		text := head + run
		d := dtDecide(t, Request{Text: text}, newFakeView().see(ScopeSession, "", run))
		var got []int
		next := 1
		for _, f := range d.Folds {
			got = append(got, f.Bytes)
			if f.Bytes > maxBlockBytes || f.FirstLine != next {
				t.Fatalf("%d lines: fold %+v", c.lines, f.Lines)
			}
			next += f.Lines
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%d lines: fold sizes %v, want %v", c.lines, got, c.want)
		}
	}
	t.Run("one line over 64 KiB", func(t *testing.T) {
		var long strings.Builder
		for i := 0; long.Len() < maxBlockBytes+100; i++ {
			long.WriteString(dtWords[i%len(dtWords)] + " ")
		}
		big := long.String() + "end\n"
		a, b := dtLines("a", 4, 400), dtLines("b", 4, 400)
		text := head + a + big + b
		d := dtDecide(t, Request{Text: text}, newFakeView().see(ScopeSession, "", a+big+b))
		if len(d.Folds) != 2 || d.Folds[0].Block != a || d.Folds[1].Block != b {
			t.Fatalf("want a and b folded around the long line, got %d folds", len(d.Folds))
		}
		if !strings.Contains(d.Text, big) {
			t.Fatal("the long line did not survive")
		}
	})
}

// TestRenderMarkerTexts pins every ledger marker text byte for byte, with
// and without the from-clause.
func TestRenderMarkerTexts(t *testing.T) {
	const h = "0123456789abcdef"
	cases := []struct {
		kind MarkerKind
		n    int
		from string
		want string
	}{
		{MarkerRun, 40, "", "[OMNI: 40 lines already shown, omni retrieve 0123456789abcdef]"},
		{MarkerRun, 40, "cat a.go", "[OMNI: 40 lines already shown from cat a.go, omni retrieve 0123456789abcdef]"},
		{MarkerRun, 1, "", "[OMNI: 1 lines already shown, omni retrieve 0123456789abcdef]"},
		{MarkerProject, 12, "", "[OMNI: 12 lines not shown here, omni retrieve 0123456789abcdef]"},
		{MarkerProject, 12, "go test ./...", "[OMNI: 12 lines not shown here from go test ./..., omni retrieve 0123456789abcdef]"},
		{MarkerWhole, 7, "", "[OMNI: identical to the 7 lines already shown, omni retrieve 0123456789abcdef]"},
		{MarkerWhole, 7, "cat a.go", "[OMNI: identical to the 7 lines already shown from cat a.go, omni retrieve 0123456789abcdef]"},
		{MarkerProjectWhole, 9, "", "[OMNI: identical to 9 lines from an earlier session, none shown here, omni retrieve 0123456789abcdef]"},
		{MarkerProjectWhole, 9, "make", "[OMNI: identical to 9 lines from an earlier session from make, none shown here, omni retrieve 0123456789abcdef]"},
		{MarkerRerun, 30, "", "[OMNI: 30 lines identical to an earlier run, omni retrieve 0123456789abcdef]"},
		// A rerun never names its source: it is the current command.
		{MarkerRerun, 30, "make", "[OMNI: 30 lines identical to an earlier run, omni retrieve 0123456789abcdef]"},
	}
	for _, c := range cases {
		if got := renderMarker(c.kind, c.n, h, c.from); got != c.want {
			t.Errorf("renderMarker(%s, %d, %q):\n got %s\nwant %s", c.kind, c.n, c.from, got, c.want)
		}
		if got := dtMarker(c.kind, c.n, h, c.from); got != c.want && c.kind != MarkerRerun {
			t.Errorf("test helper disagrees: %s", got)
		}
	}
	// The whole-output marker outside a Read, and the shortened rerun.
	if got, want := renderWhole(7, h, false), "[OMNI: identical to the 7 lines already shown, omni retrieve 0123456789abcdef]"; got != want {
		t.Errorf("renderWhole: %s, want %s", got, want)
	}
	if got, want := renderWhole(7, h, true), "[OMNI: identical to the 7 lines already shown, omni retrieve 0123456789abcdef]"; got != want {
		t.Errorf("renderWhole(read): %s, want %s", got, want)
	}
	if got, want := renderShortened(3, 40, h), "[OMNI: output shortened to 3 lines, all shown before; the 40 lines: omni retrieve 0123456789abcdef]"; got != want {
		t.Errorf("renderShortened: %s, want %s", got, want)
	}
}

// TestDecideNoFromClause: a marker never carries a from-clause nor the
// rerun wording, whatever the first source; the fold still records that
// source (Fold.Source, for omni explain). Red when planBlock renders a
// from-clause or picks MarkerRerun again.
func TestDecideNoFromClause(t *testing.T) {
	head := dtLines("head", 11, 1100)
	run := dtLines("run", 3, 450)
	tail := dtLine("tail", 60)
	heredoc := "python3 - <<'EOF'\nimport sys\nprint(sys.argv)\nEOF"
	long := "find . -name '*.go'   -not -path './vendor/*' -exec grep -l TODO {} +"
	cases := []struct {
		name         string
		scope        Scope
		seenSrc, req string
		whole        bool
		kind         MarkerKind
		from         string
	}{
		{"unknown source", ScopeSession, "", "cat a.go", false, MarkerRun, ""},
		{"same command", ScopeSession, "cat a.go", "cat a.go", false, MarkerRun, ""},
		{"other command", ScopeSession, "cat a.go", "sed -n 1,40p a.go", false, MarkerRun, ""},
		{"heredoc source", ScopeSession, heredoc, "cat a.go", false, MarkerRun, ""},
		{"long source", ScopeSession, long, "ls", false, MarkerRun, ""},
		{"current source unknown", ScopeSession, "cat a.go", "", false, MarkerRun, ""},
		{"whole, same", ScopeSession, "cat a.go", "cat a.go", true, MarkerWhole, ""},
		{"whole, other", ScopeSession, "cat a.go", "cat b.go", true, MarkerWhole, ""},
		{"project, same", ScopeProject, "make", "make", false, MarkerProject, ""},
		{"project, other", ScopeProject, "make", "make test", false, MarkerProject, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, folded := head+run+tail, run
			if c.whole {
				text = dtLines("all", 12, 1200)
				folded = text
			}
			if c.scope == ScopeProject {
				folded = run + dtLines("more", 3, 300)
				text = head + folded + tail
			}
			v := newFakeView().see(c.scope, c.seenSrc, folded)
			d := dtDecide(t, Request{Text: text, Source: c.req}, v)
			if len(d.Folds) != 1 {
				t.Fatalf("%d folds", len(d.Folds))
			}
			f := d.Folds[0]
			n := len(SplitLines(nil, folded))
			want := dtMarker(c.kind, n, f.Handle, c.from) + "\n"
			if c.kind == MarkerWhole {
				want = "[OMNI: identical to the " + fmt.Sprint(n) + " lines already shown, omni retrieve " + f.Handle + "]\n"
			}
			if f.Kind != c.kind || f.From != c.from || f.Marker != want {
				t.Fatalf("marker %q (kind %s, from %q), want %q", f.Marker, f.Kind, f.From, want)
			}
			if f.Source != c.seenSrc {
				t.Fatalf("Source %q, want the first source %q", f.Source, c.seenSrc)
			}
		})
	}
}

// TestSourceForMarker: first line, control characters dropped, whitespace
// squeezed, trimmed, at most 40 characters.
func TestSourceForMarker(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"cat a.go", "cat a.go"},
		{"  go   test\t\t./...  ", "go test ./..."},
		{"first\nsecond", "first"},
		{"first\r\nsecond", "first"},
		{"\nsecond", ""},
		{"a\x1b[31mred\x1b[0m", "a[31mred[0m"},
		{"\x00\x01cmd\x7f", "cmd"},
		{strings.Repeat("x", 50), strings.Repeat("x", 40)},
		{strings.Repeat("é", 50), strings.Repeat("é", 40)},
		{strings.Repeat("a", 39) + " b", strings.Repeat("a", 39)}, // no trailing space
		{strings.Repeat("a", 38) + " bcd", strings.Repeat("a", 38) + " b"},
	}
	for _, c := range cases {
		if got := sourceForMarker(c.in); got != c.want {
			t.Errorf("sourceForMarker(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	alphabet := []rune("ab \t\n\r\x00\x1b\x7fé→ ")
	for i := 0; i < 5000; i++ {
		rs := make([]rune, r.IntN(90))
		for j := range rs {
			rs[j] = alphabet[r.IntN(len(alphabet))]
		}
		got := sourceForMarker(string(rs))
		if utf8.RuneCountInString(got) > maxSourceInMarker || strings.Contains(got, "  ") ||
			strings.TrimSpace(got) != got || strings.ContainsAny(got, "\n\r\t\x00\x1b\x7f") {
			t.Fatalf("sourceForMarker(%q) = %q", string(rs), got)
		}
	}
}

// TestDecideReadKeepsLineNumbers: in Read mode a fold is the marker line and
// one ⋮ line per further replaced line: the line count never changes and
// every surviving line keeps its index, below interior folds too. Red when
// the Read rendering writes the marker alone.
func TestDecideReadKeepsLineNumbers(t *testing.T) {
	a := dtLines("a", 10, 600)
	b := dtLines("b", 8, 480)
	text := dtLines("h", 12, 720) + a + dtLines("m", 6, 360) + b + dtLines("t", 5, 300)
	v := newFakeView().see(ScopeSession, "a.go", a).see(ScopeSession, "b.go", b)
	req := Request{Text: text, Source: "c.go", Read: true}
	d := dtDecide(t, req, v)
	if len(d.Folds) != 2 || d.Folds[0].FirstLine != 12 || d.Folds[1].FirstLine != 28 {
		t.Fatalf("want 2 interior folds, got %d", len(d.Folds))
	}
	in, out := strings.SplitAfter(text, "\n"), strings.SplitAfter(d.Text, "\n")
	if len(in) != len(out) || d.DeliveredLines != d.RawLines || d.RawLines != 41 {
		t.Fatalf("line count %d -> %d (DeliveredLines %d, RawLines %d)", len(in), len(out), d.DeliveredLines, d.RawLines)
	}
	folded := map[int]string{}
	for _, f := range d.Folds {
		folded[f.FirstLine] = dtMarker(MarkerRun, f.Lines, f.Handle, f.From) + "\n"
		for k := 1; k < f.Lines; k++ {
			folded[f.FirstLine+k] = Filler + "\n"
		}
	}
	for i := range in {
		want, ok := folded[i]
		if !ok {
			want = in[i]
		}
		if out[i] != want {
			t.Fatalf("line %d: %q, want %q", i+1, out[i], want)
		}
	}
}

// TestDecideReadFillerCountsAgainstBar: a Read run must also pay for its ⋮
// lines: 60 short lines clear the Bash bar but not the Read one. Red when
// the filler is left out of the cost.
func TestDecideReadFillerCountsAgainstBar(t *testing.T) {
	var run strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&run, "l%04d\n", i)
	}
	text := dtLines("head", 11, 1100) + run.String() + dtLine("tail", 40)
	v := newFakeView().see(ScopeSession, "", run.String())
	if d := dtDecide(t, Request{Text: text}, v); len(d.Folds) != 1 {
		t.Fatalf("Bash: %d folds, want 1", len(d.Folds))
	}
	if d := dtDecide(t, Request{Text: text, Read: true}, v); len(d.Folds) != 0 {
		t.Fatalf("Read: a run that does not beat its filler folded: %q", d.Folds[0].Marker[:80])
	}
}

// TestHandleOf: the first 16 lowercase hex of SHA-256, never the reserved
// example.
//
// The remap branch (a block whose digest starts with 64 zero bits is named
// 0000000000000001) cannot be reached from a test: it needs a SHA-256
// preimage with 64 leading zero bits. HandleOf computes the digest inline,
// so the branch could only be tested by refactoring it (e.g. a
// handleOfDigest([32]byte) helper), which this test file does not do; what
// is tested here is that no ordinary input ever gets the example handle,
// and that the remapped value is not itself the example.
func TestHandleOf(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for i := 0; i < n; i++ {
		s := "line " + strconv.Itoa(i) + "\n"
		if i%3 == 0 {
			s = strings.Repeat(s, i%7+1)
		}
		sum := sha256.Sum256([]byte(s))
		want := hex.EncodeToString(sum[:])[:16]
		got := HandleOf(s)
		if got != want {
			t.Fatalf("HandleOf(%q) = %s, want %s", s, got, want)
		}
		if got == ExampleHandle {
			t.Fatalf("HandleOf(%q) is the reserved example", s)
		}
	}
	if got := HandleOf(""); got != "e3b0c44298fc1c14" {
		t.Fatalf("HandleOf(\"\") = %s", got)
	}
	if ExampleHandle != "0000000000000000" || HandleLen != 16 {
		t.Fatal("reserved handle constants changed")
	}
}

// TestDecideDeliveredExcludesFolded: Delivered lists the keys of delivered
// lines only (each once, in order); a folded line's key appears only if the
// same line was also delivered unfolded. Red with distinctKeys(lines, nil)
// after a fold.
func TestDecideDeliveredExcludesFolded(t *testing.T) {
	head := dtLines("head", 11, 1100)
	run := dtLines("run", 4, 400)
	again := strings.SplitAfter(run, "\n")[1] // one run line, repeated unfolded
	tail := dtLine("tail", 60) + "\n" + again + dtLine("tail2", 60)
	text := head + run + tail
	v := newFakeView().see(ScopeSession, "", run)
	d := dtDecide(t, Request{Text: text}, v)
	if len(d.Folds) != 1 {
		t.Fatalf("%d folds", len(d.Folds))
	}
	want := dtKeys(head + tail)
	if !reflect.DeepEqual(d.Delivered, want) {
		t.Fatalf("Delivered %v, want %v", d.Delivered, want)
	}
}

// TestDecideStructuredNeverFolds: structured payloads (Sniff != KindNone)
// pass byte for byte even when every line was shown. Red without the Sniff
// check in Decide.
func TestDecideStructuredNeverFolds(t *testing.T) {
	var js, yml, csv, nd strings.Builder
	js.WriteString("[\n")
	yml.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  script: |\n")
	csv.WriteString("id,name,owner,state\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&js, "  {\"id\": %d, \"name\": \"item-%d\", \"tags\": [\"a\", \"b\"]},\n", i, i)
		fmt.Fprintf(&yml, "    echo step %d of the deployment script for the settings map\n", i)
		fmt.Fprintf(&csv, "%d,item-%d,team-%d,active\n", i, i, i%3)
		fmt.Fprintf(&nd, "{\"ts\": %d, \"level\": \"info\", \"msg\": \"request served in %d ms\"}\n", 1700000000+i, i)
	}
	js.WriteString("  {\"id\": -1}\n]\n")
	for _, text := range []string{js.String(), yml.String(), csv.String(), nd.String()} {
		k := Sniff(text)
		if k == KindNone || len(text) < 1024 {
			t.Fatalf("test payload: kind %q, %d B", k, len(text))
		}
		req := Request{Text: text, Source: "kubectl get -o yaml"}
		d := dtDecide(t, req, newFakeView().see(ScopeSession, "kubectl get -o yaml", text))
		dtUnchanged(t, d, req, reasonStructured+string(k))
	}
}

// TestDecideFoldFailing: a failing run through a door that ran the command
// itself (FoldFailing) folds its seen lines but never its failure lines,
// which stay delivered in place. Red without the FoldFailing term in
// Decide's failed case or in eligibility.
func TestDecideFoldFailing(t *testing.T) {
	seen := dtLines("setup", 8, 800)
	fail := "FAILED tests/test_io.py::test_read - AssertionError: 1 != 2\n"
	text := seen + fail + dtLines("more", 4, 400)
	v := newFakeView().see(ScopeSession, "pytest", seen+fail)
	d := dtDecide(t, Request{Text: text, Source: "pytest", Failed: true, FoldFailing: true}, v)
	if len(d.Folds) != 1 || d.Folds[0].Block != seen {
		t.Fatalf("want the seen lines before the failure folded, got %d folds (%q):\n%s", len(d.Folds), d.Reason, d.Text)
	}
	if !strings.Contains(d.Text, fail) {
		t.Fatalf("the failure line was not delivered:\n%s", d.Text)
	}
}

// TestDecideFailedNeverFolds: the failure path passes the text unchanged and
// still records it as delivered. Red without the Failed case in Decide and
// the Failed term of eligibility together (either one alone keeps it green).
func TestDecideFailedNeverFolds(t *testing.T) {
	text := dtLines("out", 15, 1500)
	v := newFakeView().see(ScopeSession, "make", text)
	req := Request{Text: text, Source: "make", Failed: true}
	d := dtDecide(t, req, v)
	dtUnchanged(t, d, req, reasonFailed)
	// NoFold (archive failed, passthrough) is the same shape with its reason.
	req = Request{Text: text, Source: "make", NoFold: "archive-failed"}
	dtUnchanged(t, dtDecide(t, req, v), req, "archive-failed")
}

// TestDecideRepeatBytes: the available repetition counts this reader's
// non-blank lines (failure lines included), never project ones.
func TestDecideRepeatBytes(t *testing.T) {
	s := dtLines("s", 3, 300)
	fail := "FAILED tests/test_x.py::test_y - assert 1 == 2\n"
	p := dtLines("p", 3, 300)
	text := dtLines("head", 11, 1100) + s + fail + "\n\n" + p
	v := newFakeView().see(ScopeSession, "", s+fail).see(ScopeProject, "", p)
	d := dtDecide(t, Request{Text: text}, v)
	if d.RepeatBytes != len(s)+len(fail) {
		t.Fatalf("RepeatBytes %d, want %d", d.RepeatBytes, len(s)+len(fail))
	}
}

// TestDecideDeterministic: the same Request and View answers give identical
// Decisions, call after call and across goroutines. Red when anything
// outside the inputs (a clock, a random number) reaches a handle or marker.
func TestDecideDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type tc struct {
		req Request
		v   *fakeView
	}
	var cases []tc
	for c := 0; c < 60; c++ {
		var text strings.Builder
		v := newFakeView()
		v.empty = r.IntN(4) == 0
		for chunk := 0; chunk < 3+r.IntN(8); chunk++ {
			scope := Scope(r.IntN(3))
			src := []string{"", "cat a", "make"}[r.IntN(3)]
			for i := 0; i < 1+r.IntN(15); i++ {
				ln := dtLine(fmt.Sprintf("c%d-%d", c, r.IntN(60)), 20+r.IntN(90))
				if r.IntN(10) == 0 {
					ln = "\n"
				}
				if r.IntN(20) == 0 {
					ln = "error: step " + strconv.Itoa(i) + "\n"
				}
				if r.IntN(3) == 0 {
					ln = strings.TrimSuffix(ln, "\n") + "\r\n"
				}
				if scope != ScopeNone {
					v.see(scope, src, ln)
				}
				text.WriteString(ln)
			}
		}
		cases = append(cases, tc{Request{Text: text.String(), Source: "make", Read: r.IntN(2) == 0}, v})
	}
	for _, in := range goldenInputs(t) {
		v := newFakeView().see(ScopeSession, "make", in)
		cases = append(cases, tc{Request{Text: in, Source: "make"}, v}, tc{Request{Text: in, Source: "cat", Read: true}, v})
	}
	folding := 0
	for c, x := range cases {
		req, v := x.req, x.v
		first := Decide(req, v)
		checkDecision(t, req, v, first)
		if len(first.Folds) > 0 {
			folding++
		}
		var wg sync.WaitGroup
		results := make([]Decision, 8)
		for g := range results {
			wg.Add(1)
			go func() { defer wg.Done(); results[g] = Decide(req, v.clone()) }()
		}
		wg.Wait()
		for _, d := range append(results, Decide(req, v)) {
			if !reflect.DeepEqual(d, first) {
				t.Fatalf("case %d: decisions differ:\n%+v\n%+v", c, d, first)
			}
		}
	}
	if folding < len(cases)/3 {
		t.Fatalf("only %d of %d cases fold; the test needs folds to compare", folding, len(cases))
	}
}

// TestDecideNeverOnlyMarkersWithProject: an output is never
// made only of markers when one of them is project scope, also when
// session folds stand beside it; the project folds are dropped and their
// lines delivered (recorded, so they become shown), the session folds stay.
// Red with the old per-block rule (`!session && covered == nonBlank`).
func TestDecideNeverOnlyMarkersWithProject(t *testing.T) {
	s := dtLines("s", 10, 1000)
	p := dtLines("p", 10, 1000)
	cases := []struct {
		name     string
		text     string
		v        *fakeView
		sessions int
	}{
		{"session then project", s + p, newFakeView().see(ScopeSession, "ls", s).see(ScopeProject, "ls", p), 1},
		{"project then session, blank lines", "\n" + p + "\n" + s + "\n", newFakeView().see(ScopeSession, "ls", s).see(ScopeProject, "ls", p), 1},
		{"project between two session runs", s + p + dtLines("t", 10, 1000), newFakeView().see(ScopeSession, "ls", s+dtLines("t", 10, 1000)).see(ScopeProject, "ls", p), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := dtDecide(t, Request{Text: c.text, Source: "ls"}, c.v)
			if len(d.Folds) != c.sessions {
				t.Fatalf("%d folds, want %d session folds:\n%s", len(d.Folds), c.sessions, d.Text)
			}
			for _, f := range d.Folds {
				if f.Scope != ScopeSession {
					t.Fatalf("a project fold in an output of markers only:\n%s", d.Text)
				}
			}
			if !strings.Contains(d.Text, p) {
				t.Fatal("the project lines are not delivered")
			}
			for _, k := range dtKeys(p) {
				if !containsKey(d.Delivered, k) {
					t.Fatal("the project lines are delivered but not recorded")
				}
			}
		})
	}
	// With a new line beside them, the project fold stays.
	text := s + p + dtLine("new", 40)
	d := dtDecide(t, Request{Text: text, Source: "ls"}, newFakeView().see(ScopeSession, "ls", s).see(ScopeProject, "ls", p))
	if len(d.Folds) != 2 {
		t.Fatalf("%d folds, want the session and the project fold", len(d.Folds))
	}
}

// TestDecideDebtPaidOnEveryPath: after a retrieve, the next
// delivery that holds the block's lines carries them unfolded and pays the
// debt, whatever path it takes: a whole output of other bytes (no final
// newline, a leading blank line), a partial fold, the failure path, a
// floor. A text that holds only some of the lines does not pay. Red when
// the debt is matched on the exact handle only (the whole-output path then
// answers "identical to the N lines already shown").
func TestDecideDebtPaidOnEveryPath(t *testing.T) {
	block := dtLines("blk", 12, 1200)
	other := dtLines("other", 12, 1200)
	debt := Debt{Handle: HandleOf(block), Keys: dtKeys(block)}
	cases := []struct {
		name string
		req  Request
		pays bool
	}{
		{"whole, no final newline", Request{Text: strings.TrimSuffix(block, "\n")}, true},
		{"whole, a leading blank line", Request{Text: "\n" + block}, true},
		{"whole, read", Request{Text: block, Read: true}, true},
		{"inside a longer output", Request{Text: other + block + other}, true},
		{"failure path", Request{Text: block, Failed: true}, true},
		{"under the 264 B floor", Request{Text: dtLines("blk", 2, 200)}, false},
		{"half of the block", Request{Text: other + block[:600]}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newFakeView().see(ScopeSession, "cat f", block+other)
			v.debts = []Debt{debt}
			d := dtDecide(t, c.req, v)
			paid := reflect.DeepEqual(d.Paid, []string{debt.Handle})
			if paid != c.pays {
				t.Fatalf("Paid %v, want paid %v:\n%s", d.Paid, c.pays, d.Text)
			}
			if c.pays && !strings.Contains(d.Text, strings.TrimSuffix(block, "\n")) {
				t.Fatalf("the owed lines are not delivered whole:\n%s", d.Text)
			}
			// Without the debt, the same text folds them (or is unchanged).
			d0 := Decide(c.req, newFakeView().see(ScopeSession, "cat f", block+other))
			if len(d0.Paid) != 0 {
				t.Fatalf("Paid %v without a debt", d0.Paid)
			}
		})
	}
}

// TestDecideReadWholeOneLine: a whole-file Read re-read is
// one marker line, no fillers; a partial Read fold keeps one filler per
// further line so every kept line keeps its number. It also measures what
// the model reads of a 120-line re-read, numbered by the host from
// startLine ("N\t" before each line): 707 characters with fillers before.
// Red with fillers after a whole fold.
func TestDecideReadWholeOneLine(t *testing.T) {
	file := dtLines("line", 120, 120*40)
	v := newFakeView().see(ScopeSession, "/src/f.go", file)
	d := dtDecide(t, Request{Text: file, Source: "/src/f.go", Read: true}, v)
	if len(d.Folds) != 1 || d.Folds[0].Kind != MarkerWhole {
		t.Fatalf("want one whole fold, got %d", len(d.Folds))
	}
	if CountLines(d.Text) != 1 || d.DeliveredLines != 1 || strings.Contains(d.Text, Filler) {
		t.Fatalf("a whole re-read is %d lines:\n%s", CountLines(d.Text), d.Text)
	}
	view := hostNumbered(d.Text, 1)
	if view > 100 {
		t.Fatalf("the model reads %d characters of a whole re-read, want at most 100", view)
	}
	t.Logf("whole-file Read re-read of 120 lines: %d characters in the model's view", view)
	// A fold in the middle keeps the numbers below it.
	text := dtLines("head", 5, 200) + file + dtLines("tail", 5, 200)
	d = dtDecide(t, Request{Text: text, Source: "/src/f.go", Read: true}, v)
	if len(d.Folds) != 1 || CountLines(d.Text) != CountLines(text) {
		t.Fatalf("a partial Read fold changed the line count: %d -> %d", CountLines(text), CountLines(d.Text))
	}
	got, want := SplitLines(nil, d.Text), SplitLines(nil, text)
	for i := 125; i < 130; i++ {
		if d.Text[got[i].Start:got[i].End] != text[want[i].Start:want[i].End] {
			t.Fatalf("line %d is not at its number", i+1)
		}
	}
}

// hostNumbered returns the characters the model reads of a Read result
// numbered by Claude Code from startLine: "N\t" before each line.
func hostNumbered(text string, start int) int {
	n := 0
	for i, l := range SplitLines(nil, text) {
		n += len(strconv.Itoa(start+i)) + 1 + utf8.RuneCountInString(text[l.Start:l.End])
	}
	return n
}

// TestDecideRedactionNoticeNeverFolds: a redaction marker at the head of an
// output already delivered once is not content the reader was shown, so no
// fold covers it (a rerun fold over it would claim "already shown" about a
// marker). Red without the isRedactionNotice exemption in Decide.
func TestDecideRedactionNoticeNeverFolds(t *testing.T) {
	notice := "[OMNI: 1 sensitive value(s) redacted]\n"
	body := dtLines("body", 20, 2000)
	text := notice + body
	v := newFakeView().see(ScopeSession, "", text)
	d := dtDecide(t, Request{Text: text, Source: "cat CLAUDE.md"}, v)
	if len(d.Folds) == 0 {
		t.Fatalf("want the body folded, got %q", d.Text)
	}
	for _, f := range d.Folds {
		if strings.Contains(f.Block, "sensitive value(s) redacted") {
			t.Fatalf("a fold covers the redaction notice: %q", f.Block)
		}
	}
	if !strings.HasPrefix(d.Text, notice) {
		t.Fatalf("the notice is not delivered first: %q", d.Text)
	}
	for _, s := range []string{"[OMNI: 12 sensitive value(s) redacted]\r\n", "  [OMNI: 3 sensitive value(s) redacted]"} {
		if !isRedactionNotice(s) {
			t.Errorf("isRedactionNotice(%q) = false", s)
		}
	}
	for _, s := range []string{"[OMNI: x sensitive value(s) redacted]", "[OMNI:  sensitive value(s) redacted]", "1 sensitive value(s) redacted"} {
		if isRedactionNotice(s) {
			t.Errorf("isRedactionNotice(%q) = true", s)
		}
	}
}
