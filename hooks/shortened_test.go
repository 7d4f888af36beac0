package hooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/pipeline"
)

// TestShortenedRerunReturnsToolBytes: a pytest run delivered distilled,
// then run again: the rerun is one marker whose handle returns what the
// tool printed, not the distilled text the reader was shown. Red when the
// Engine leaves Request.Original unset (the rerun then folds the short form
// in runs beside omni's cut marker) or archives the short form.
func TestShortenedRerunReturnsToolBytes(t *testing.T) {
	ctx := context.Background()
	e, _ := newTestEngine(t)
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\nplatform linux -- Python 3.12.1, pytest-8.3.2, pluggy-1.5.0\nrootdir: /src\ncollected 60 items\n\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "tests/test_mod%02d.py::test_case_%02d PASSED                                    [%3d%%]\n", i, i, (i+1)*100/60)
	}
	b.WriteString("\n============================== 60 passed in 1.23s ==============================\n")
	raw := b.String()
	in := CallInput{Door: "exec", Command: "pytest -rN", Text: raw, Session: "s1"}
	first, err := e.Call(ctx, in)
	if err != nil || first.Delivered == raw {
		t.Fatalf("first run not distilled (%v): %q", err, first.Delivered)
	}
	again, err := e.Call(ctx, in)
	if err != nil || len(again.Folds) != 1 || again.Folds[0].Kind != pipeline.MarkerShortened {
		t.Fatalf("rerun: %v, folds %+v:\n%s", err, again.Folds, again.Delivered)
	}
	got, err := e.Retrieve(ctx, again.Folds[0].Handle, again.Reader)
	if err != nil || string(got) != raw {
		t.Fatalf("retrieve: %v, %d bytes, want the tool's %d", err, len(got), len(raw))
	}
}
