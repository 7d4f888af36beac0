package distill

import (
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// Rules found by running the real tools on small projects
// (testdata/fixtures/train), tested on their helpers.

func TestCargoTestFilter(t *testing.T) {
	cases := map[string]bool{
		"test":                    false,
		"test parse":              true,
		"test -p spans parse":     true,
		"test -p spans":           false,
		"test -- --nocapture":     false,
		"test --release merge_":   true,
		"nextest run":             false,
		"nextest run tests::pars": true,
	}
	for args, want := range cases {
		if got := cargoTestFilter(strings.Fields(args)); got != want {
			t.Errorf("cargoTestFilter(%q) = %v, want %v", args, got, want)
		}
	}
}

func TestJSFrameLine(t *testing.T) {
	yes := []string{"      17 |     c.add('bolt', 1, 15);", "    > 19 |     expect(c.total()).toBe(35);", "         |                       ^",
		"     15|   it('short text', () => {", "       |      ^", "      48|"}
	no := []string{"    Expected: 35", "      at Object.toBe (jest/cart.test.js:19:23)", " ❯ vt/wrap.test.js:17:67", "| a | b |", "2 | 3"}
	for _, s := range yes {
		if !jsFrameLine(s) {
			t.Errorf("jsFrameLine(%q) = false", s)
		}
	}
	for _, s := range no[:4] {
		if jsFrameLine(s) {
			t.Errorf("jsFrameLine(%q) = true", s)
		}
	}
}

func TestTermViewKeepsAFailureInAnEarlierState(t *testing.T) {
	in := "a\rerror: disk full\rReceiving objects: 100% (1/1), done.\n"
	d := &dctx{text: in, lines: textline.SplitLines(nil, in)}
	if d.termView(0) {
		t.Fatalf("a failure in an earlier state was hidden: %q", d.views[0])
	}
}

// A make dry run prints the commands it would run: those lines are what
// the user asked for, so the make distiller claims nothing.
func TestMakeDryRunNotDistilled(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString("cc -O2 -c -o build/obj/unit.o src/unit.c -Iinclude\n")
	}
	in := b.String()
	for _, args := range []string{"-n all", "--dry-run", "-nB all", "--just-print", "--recon"} {
		d := &dctx{text: in, lines: textline.SplitLines(nil, in), args: strings.Fields(args)}
		d.keep = make([]bool, len(d.lines))
		if distillMake(d) {
			t.Errorf("make %s: claimed by the make distiller", args)
		}
	}
	d := &dctx{text: in, lines: textline.SplitLines(nil, in), args: []string{"-j4", "all"}}
	d.keep = make([]bool, len(d.lines))
	if !distillMake(d) {
		t.Errorf("make -j4 all: a successful build with echoed compiler runs is not recognised")
	}
}
