package distill

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

func blocksOf(text string) (string, int, bool) {
	return CollapseBlocks(text, textline.SplitLines(nil, text))
}

// TestCollapseBlocksBuildCycle: a cycle of 3-line build steps with a
// routine "---> Using cache" line folds to its first and last steps and one counted
// marker; the lines around stay. Red without CollapseBlocks.
func TestCollapseBlocksBuildCycle(t *testing.T) {
	var b strings.Builder
	b.WriteString("Sending build context\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "Step %d/20 : RUN make part%d\n ---> Using cache\n ---> %x\n", i+1, i, 0xabcdef00+i)
	}
	b.WriteString("Successfully built 0123abcd\n")
	out, folded, ok := blocksOf(b.String())
	if !ok || folded != 18*3 {
		t.Fatalf("folded %d (ok %v):\n%s", folded, ok, out)
	}
	for _, want := range []string{"Sending build context\n", "Step 1/20 : RUN make part0\n", "Step 20/20 : RUN make part19\n",
		"[18 similar blocks of 3 lines collapsed] (pattern: \"Step 2/20 : RUN make part1\")\n", "Successfully built 0123abcd\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "part10") {
		t.Fatalf("an interior step survived:\n%s", out)
	}
}

// TestCollapseBlocksFailureLineSurvives: a failure line inside the cycle
// belongs to no block: it ends the run, stays, and the blocks on either
// side fold on their own. Red if failure lines were shaped like others.
func TestCollapseBlocksFailureLineSurvives(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "2026-01-01T10:00:%02dZ INFO fetching shard %d\nshard %d ok in %dms\n", i, i, i, 10+i)
		if i == 6 {
			b.WriteString("ERROR: shard 6 failed checksum\n")
		}
	}
	out, _, ok := blocksOf(b.String())
	if !ok {
		t.Fatalf("nothing folded:\n%s", out)
	}
	if !strings.Contains(out, "ERROR: shard 6 failed checksum\n") {
		t.Fatalf("failure line lost:\n%s", out)
	}
	if !strings.Contains(out, "INFO fetching shard 6\nshard 6 ok in 16ms\nERROR:") {
		t.Fatalf("the block before the failure line is not kept whole:\n%s", out)
	}
}

// TestCollapseBlocksFactsStay: repeated blocks with no routine line — a
// table of results, a list of commits by one author, a program's own
// untimestamped debug prints — and runs of one routine shape (lines that
// differ only in their numbers) are facts and stay whole. Red if a block
// without a routine line, or of one shape, folded.
func TestCollapseBlocksFactsStay(t *testing.T) {
	var res, log, dbg, one strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&res, "x = %d\nresult = %d\n", i, i*i)
		fmt.Fprintf(&log, "commit %040x\nAuthor: Ann <ann@example.com>\n    fix bug %d\n", i+1, i)
		fmt.Fprintf(&dbg, "DEBUG: lhs=Col(a) rhs=%d\nresult %d\n", i, i*3)
		fmt.Fprintf(&one, "2026-01-01T10:00:%02dZ INFO rhs=%d\n", i, i)
	}
	for _, in := range []string{res.String(), log.String(), dbg.String(), one.String()} {
		if out, _, ok := blocksOf(in); ok {
			t.Fatalf("facts folded:\n%s", out)
		}
	}
}

// BenchmarkCollapseBlocksOneShape: 200,000 lines of one shape and no
// routine line (the worst case for a block scan from every line).
func BenchmarkCollapseBlocksOneShape(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 200_000; i++ {
		fmt.Fprintf(&sb, "row %d value %d\n", i, i*7)
	}
	text := sb.String()
	lines := textline.SplitLines(nil, text)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		CollapseBlocks(text, lines)
	}
}

// blockShapeSplit is blockShape written over strings.SplitAfter, the
// shape's definition word by word.
func blockShapeSplit(t string) string {
	var b strings.Builder
	for _, w := range strings.SplitAfter(t, " ") {
		core := strings.TrimRight(w, " ")
		if isHexish(core) {
			b.WriteString("#" + w[len(core):])
			continue
		}
		digits := false
		for i := 0; i < len(w); i++ {
			if c := w[i]; c >= '0' && c <= '9' {
				if !digits {
					b.WriteByte('#')
				}
				digits = true
				continue
			}
			digits = false
			b.WriteByte(w[i])
		}
	}
	return b.String()
}

// FuzzBlockShape: the appending blockShape reads words as the split
// definition does.
func FuzzBlockShape(f *testing.F) {
	for _, s := range []string{"Step 3/12 : RUN make 42", "---> 9f2c1ab3e4d5", "a  b\t0ff1ce1 sha256:abcdef 7", " x ", "é 12é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := blockShape(s), blockShapeSplit(s); got != want {
			t.Fatalf("blockShape(%q) = %q, want %q", s, got, want)
		}
	})
}
