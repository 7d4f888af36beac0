package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// markerLineRE matches the first line of every ledger marker (the texts
// MarkerKind documents), without its ending.
var markerLineRE = regexp.MustCompile(`^\[OMNI: (\d+ lines already shown|identical to the \d+ lines already shown|all \d+ lines already shown|\d+ lines not shown here), omni retrieve [0-9a-f]{16}\]$|^\[OMNI: output shortened to \d+ lines, all shown before; the \d+ lines: omni retrieve [0-9a-f]{16}\]$`)

// checkDecision asserts every invariant of a Decision that holds whatever
// the text and the View: the text comes back byte for byte by expanding the
// markers, folds sit on seen, non-failure lines, clear their bars and floors,
// Read keeps its line count, and Delivered lists exactly the delivered keys.
func checkDecision(tb testing.TB, req Request, v View, d Decision) {
	tb.Helper()
	text := req.Text
	lines := SplitLines(nil, text)
	if d.RawLines != len(lines) {
		tb.Fatalf("RawLines %d, want %d", d.RawLines, len(lines))
	}
	repeat := 0
	for _, l := range lines {
		if l.Key != 0 && v.Lookup(l.Key).Scope == ScopeSession {
			repeat += l.End - l.Start
		}
	}
	if d.RepeatBytes != repeat {
		tb.Fatalf("RepeatBytes %d, want %d", d.RepeatBytes, repeat)
	}
	// A debt whose block lines the text all holds is paid, on every path,
	// and none of those lines folds.
	held := map[uint64]bool{}
	for _, l := range lines {
		held[l.Key] = true
	}
	paidKeys := map[uint64]bool{}
	var wantPaid []string
	for _, db := range v.Debts() {
		if len(db.Keys) == 0 {
			continue
		}
		all := true
		for _, k := range db.Keys {
			all = all && held[k]
		}
		if all {
			wantPaid = append(wantPaid, db.Handle)
			for _, k := range db.Keys {
				paidKeys[k] = true
			}
		}
	}
	var gotPaid []string
	for _, h := range d.Paid {
		for _, db := range v.Debts() {
			if db.Handle == h && len(db.Keys) > 0 {
				gotPaid = append(gotPaid, h)
			}
		}
	}
	if !reflect.DeepEqual(gotPaid, wantPaid) {
		tb.Fatalf("Paid %v, want %v", gotPaid, wantPaid)
	}
	if len(d.Folds) == 0 {
		if d.Text != text {
			tb.Fatalf("no folds but the text changed")
		}
		if d.Reason == "" {
			tb.Fatalf("no folds and no reason")
		}
		if d.DeliveredLines != len(lines) {
			tb.Fatalf("DeliveredLines %d, want %d", d.DeliveredLines, len(lines))
		}
		if want := distinctKeys(lines, nil); !reflect.DeepEqual(d.Delivered, want) {
			tb.Fatalf("unchanged text: Delivered %v, want %v", d.Delivered, want)
		}
		return
	}
	// Something folded: the gates before the ledger all let it through.
	switch {
	case d.Reason != "":
		tb.Fatalf("folds with reason %q", d.Reason)
	case (req.Failed && !req.FoldFailing) || req.NoFold != "":
		tb.Fatalf("folded a failed or no-fold request")
	case len(text) < req.bars().MinRun:
		tb.Fatalf("folded %d B, under the %d B floor", len(text), req.bars().MinRun)
	case Sniff(text) != KindNone:
		tb.Fatalf("folded a structured payload (%s)", Sniff(text))
	case len(d.Text) >= len(text):
		tb.Fatalf("folds did not shrink the text: %d -> %d B", len(text), len(d.Text))
	}
	judge := failureJudge(req.Source, text, lines)
	seenBytes, nonBlank := 0, 0
	for _, l := range lines {
		if l.Key == 0 {
			continue
		}
		nonBlank++
		if v.Lookup(l.Key).Scope != ScopeNone && !judge(text[l.Start:l.End]) && !paidKeys[l.Key] {
			seenBytes += l.End - l.Start
		}
	}
	if seenBytes < req.bars().MinRun {
		tb.Fatalf("folded %d B of which %d B seen: under the run floor", len(text), seenBytes)
	}
	folded := make([]bool, len(lines))
	next, project, covered, fillerLines := 0, false, 0, 0
	for fi, f := range d.Folds {
		a, b := f.FirstLine, f.FirstLine+f.Lines
		if a < next || f.Lines < 1 || b > len(lines) {
			tb.Fatalf("fold %d: lines [%d,%d) out of order or range", fi, a, b)
		}
		next = b
		block := text[lines[a].Start:lines[b-1].End]
		if f.Kind == MarkerShortened {
			// The whole short form, archived as the tool's original bytes.
			if len(d.Folds) != 1 || a != 0 || b != len(lines) || f.Block != req.Original || f.Bytes != len(text) {
				tb.Fatalf("fold %d: a shortened fold that is not the whole output or not the original", fi)
			}
			block = req.Original
		} else if f.Block != block || f.Bytes != len(block) {
			tb.Fatalf("fold %d: Block is not the replaced lines", fi)
		}
		if f.Handle != HandleOf(block) || f.Handle == ExampleHandle || len(f.Handle) != HandleLen {
			tb.Fatalf("fold %d: handle %q", fi, f.Handle)
		}
		if f.Bytes > maxBlockBytes && f.Kind != MarkerShortened {
			tb.Fatalf("fold %d: %d B block over %d", fi, f.Bytes, maxBlockBytes)
		}
		gain := req.bars().SessionGain
		if f.Scope == ScopeProject {
			gain = req.bars().ProjectGain
			project = true
			if f.Kind != MarkerProject || v.Empty() {
				tb.Fatalf("fold %d: project fold of kind %s (reader empty %v)", fi, f.Kind, v.Empty())
			}
		} else {
			if f.Scope != ScopeSession || f.Kind == MarkerProject || f.Kind == MarkerProjectWhole {
				tb.Fatalf("fold %d: scope %d kind %s", fi, f.Scope, f.Kind)
			}
		}
		if f.Bytes < len(f.Marker)+gain {
			tb.Fatalf("fold %d: %d B under its bar (marker %d B + %d)", fi, f.Bytes, len(f.Marker), gain)
		}
		if (f.Kind == MarkerWhole || f.Kind == MarkerShortened) != (a == 0 && b == len(lines)) {
			tb.Fatalf("fold %d: kind %s for lines [%d,%d) of %d", fi, f.Kind, a, b, len(lines))
		}
		// No from-clause and no rerun wording: one marker per run, whatever
		// call first delivered its lines.
		if f.From != "" || f.Kind == MarkerRerun {
			tb.Fatalf("fold %d: from %q, kind %s", fi, f.From, f.Kind)
		}
		// The marker: its text, then the textline.Ending(s) of what it replaced.
		head := renderMarker(f.Kind, f.Lines, f.Handle, f.From)
		if f.Kind == MarkerWhole {
			head = renderWhole(f.Lines, f.Handle, req.Read)
		}
		if f.Kind == MarkerShortened {
			head = renderShortened(f.Lines, CountLines(req.Original), f.Handle)
		}
		if !markerLineRE.MatchString(head) {
			tb.Fatalf("fold %d: marker %q", fi, head)
		}
		want := head + textline.Ending(text[lines[b-1].Start:lines[b-1].End])
		whole := a == 0 && b == len(lines)
		if req.Read && !whole {
			var m strings.Builder
			m.WriteString(head + textline.Ending(text[lines[a].Start:lines[a].End]))
			for k := a + 1; k < b; k++ {
				m.WriteString(Filler + textline.Ending(text[lines[k].Start:lines[k].End]))
			}
			want = m.String()
		}
		if f.Marker != want {
			tb.Fatalf("fold %d: marker %q, want %q", fi, f.Marker, want)
		}
		if req.Read && !whole {
			fillerLines += f.Lines - 1
		}
		nb := 0
		for k := a; k < b; k++ {
			folded[k] = true
			l := lines[k]
			if l.Key == 0 {
				continue
			}
			nb++
			covered++
			s := v.Lookup(l.Key)
			if s.Scope != f.Scope {
				tb.Fatalf("fold %d: line %d is %+v, fold is scope %d", fi, k, s, f.Scope)
			}
			if judge(text[l.Start:l.End]) {
				tb.Fatalf("fold %d: failure line %d folded: %q", fi, k, text[l.Start:l.End])
			}
			if paidKeys[l.Key] {
				tb.Fatalf("fold %d: line %d of a paid debt folded", fi, k)
			}
		}
		if nb == 0 {
			tb.Fatalf("fold %d: only blank lines", fi)
		}
	}
	if project && covered == nonBlank {
		tb.Fatalf("an output of markers only, one of them project scope")
	}
	// Expand every marker back into its block: the input comes back byte for
	// byte, and every other delivered line is an input line in place.
	var back strings.Builder
	pos, fi := 0, 0
	for i := 0; i < len(lines); {
		if fi < len(d.Folds) && d.Folds[fi].FirstLine == i {
			f := d.Folds[fi]
			if !strings.HasPrefix(d.Text[pos:], f.Marker) {
				tb.Fatalf("fold %d: marker not at byte %d of the output", fi, pos)
			}
			back.WriteString(f.Block)
			pos += len(f.Marker)
			i += f.Lines
			fi++
			continue
		}
		ln := text[lines[i].Start:lines[i].End]
		if !strings.HasPrefix(d.Text[pos:], ln) {
			tb.Fatalf("line %d not delivered in place at byte %d", i, pos)
		}
		back.WriteString(ln)
		pos += len(ln)
		i++
	}
	want := text
	if len(d.Folds) == 1 && d.Folds[0].Kind == MarkerShortened {
		want = req.Original // expanding gives what the tool printed
	}
	if pos != len(d.Text) || back.String() != want {
		tb.Fatalf("expanding the markers does not give the input back")
	}
	outLines := len(SplitLines(nil, d.Text))
	wantLines := len(lines) - covered - countBlankFolded(d, lines) + len(d.Folds) + fillerLines
	if d.DeliveredLines != wantLines || outLines != wantLines {
		tb.Fatalf("DeliveredLines %d, output has %d lines, want %d (Read %v)", d.DeliveredLines, outLines, wantLines, req.Read)
	}
	if want := distinctKeys(lines, folded); !reflect.DeepEqual(d.Delivered, want) {
		tb.Fatalf("Delivered %d keys, want %d (the unfolded lines)", len(d.Delivered), len(want))
	}
}

// countBlankFolded counts the blank lines inside folds.
func countBlankFolded(d Decision, lines []Line) int {
	n := 0
	for _, f := range d.Folds {
		for k := f.FirstLine; k < f.FirstLine+f.Lines; k++ {
			if lines[k].Key == 0 {
				n++
			}
		}
	}
	return n
}

// fuzzView derives a View from a seed: mode picks how keys are seen (all in
// one session run, all project, or a per-key mix), and some handles are
// owed.
type fuzzView struct {
	seed  uint64
	mode  uint8
	empty bool
	src   string
	keys  []uint64 // keys a debt may name (the text's, when set)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (v fuzzView) Lookup(k uint64) Seen {
	h := splitmix(k ^ v.seed)
	sources := [...]string{"", "cat a.go", "make", v.src}
	src := sources[(h>>8)%4]
	switch v.mode % 4 {
	case 0:
		return Seen{Scope: ScopeSession, Source: v.src}
	case 1:
		return Seen{Scope: ScopeProject, Source: "make"}
	case 2:
		return Seen{Scope: Scope(h % 3), Source: src}
	}
	switch {
	case h%8 == 0:
		return Seen{}
	case (h>>4)%4 == 0:
		return Seen{Scope: ScopeProject, Source: "make"}
	}
	return Seen{Scope: ScopeSession, Source: v.src}
}

// Debts: when the seed says so, the reader is owed the block of every
// third seen key (a debt whose lines the text may or may not hold).
func (v fuzzView) Debts() []Debt {
	if v.seed%5 != 0 || len(v.keys) == 0 {
		return nil
	}
	var ks []uint64
	for i := 0; i < len(v.keys); i += 3 {
		ks = append(ks, v.keys[i])
	}
	return []Debt{{Handle: "00000000000000aa", Keys: ks}}
}
func (v fuzzView) Empty() bool { return v.empty }

// goldenInputs returns the input of every golden case (for fuzz seeds).
func goldenInputs(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join("testdata", "decide", "*.txtar"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		c, err := parseGolden(b)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out = append(out, c.req.Text)
	}
	return out
}

// FuzzDecide: any text under a View derived from the fuzz input never
// panics and satisfies every invariant of checkDecision.
//
// The seeds are kilobytes long, so minimizing a new interesting input with
// the default -fuzzminimizetime (60s) stalls the run; use
// go test ./pipeline -run XXX -fuzz FuzzDecide -fuzztime 20s -fuzzminimizetime 1s
func FuzzDecide(f *testing.F) {
	for i, in := range goldenInputs(f) {
		for mode := uint8(0); mode < 4; mode++ {
			f.Add(in, uint64(i)*7919+uint64(mode), mode|uint8(i%2)<<4)
		}
	}
	f.Add(dtLines("a", 20, 2000), uint64(0), uint8(0))
	f.Add(strings.ReplaceAll(dtLines("a", 20, 2000), "\n", "\r\n")+"tail", uint64(5), uint8(0x10))
	f.Add(dtLines("a", 5, 600)+"error: x\n"+dtLines("b", 5, 600), uint64(3), uint8(0))
	f.Fuzz(func(t *testing.T, text string, seed uint64, flags uint8) {
		v := fuzzView{seed: seed, mode: flags & 3, empty: flags&4 != 0, src: "cat a.go"}
		for _, l := range SplitLines(nil, text) {
			if l.Key != 0 {
				v.keys = append(v.keys, l.Key)
			}
		}
		if flags&8 != 0 {
			v.src = "make"
		}
		req := Request{Text: text, Source: "cat a.go", Read: flags&0x10 != 0, Failed: flags&0x60 == 0x60}
		d := Decide(req, v)
		checkDecision(t, req, v, d)
		failed := Request{Text: text, Source: req.Source, Failed: true}
		if df := Decide(failed, v); df.Text != text || len(df.Folds) != 0 {
			t.Fatal("the failure path changed the text")
		}
		if again := Decide(req, v); !reflect.DeepEqual(again, d) {
			t.Fatal("not deterministic")
		}
	})
}
