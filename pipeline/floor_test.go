package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// Request.Floor replaces the 264-byte floor: an output under it never
// folds, with the floor named in the reason; 0 keeps the ledger's floor.
func TestDecideFloorSetting(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "line %02d of an output the reader was already shown\n", i)
	}
	text := b.String() // about 2 KB, every line seen
	if d := Decide(Request{Text: text}, allSeenView{}); len(d.Folds) == 0 {
		t.Fatalf("default floor: no fold (%q)", d.Reason)
	}
	d := Decide(Request{Text: text, Floor: 4096}, allSeenView{})
	if len(d.Folds) != 0 || d.Text != text || d.Reason != "floor:4096" {
		t.Fatalf("floor 4096: folds %d, reason %q", len(d.Folds), d.Reason)
	}
	if d := Decide(Request{Text: text, Floor: len(text)}, allSeenView{}); len(d.Folds) == 0 {
		t.Fatalf("a floor at the output's size: no fold (%q)", d.Reason)
	}
}
