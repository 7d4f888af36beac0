package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/linediff"
	"github.com/omnictx/omni/internal/testfixture"
)

func TestDiffFixture(t *testing.T) {
	svc := testfixture.Service(t)
	ctx := context.Background()
	// seq 3: `grep -n shard big.txt`, a run of 20 lines folded.
	b, err := svc.Handle(ctx, "diff", []byte(`{"seq":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var d hooks.DiffResult
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Match || len(d.Folds) != 1 || d.Source != "grep -n shard big.txt" {
		t.Fatalf("%+v", d)
	}
	var out bytes.Buffer
	renderDiff(&out, d, 2, false)
	testfixture.CheckGolden(t, "diff/seq3.txt", out.Bytes(), *update)
	out.Reset()
	renderDiff(&out, d, 2, true)
	if !strings.Contains(out.String(), linediff.Red+"-big 010") || !strings.Contains(out.String(), linediff.Green+"+[OMNI: 20 lines already shown, omni retrieve") {
		t.Fatalf("coloured diff:\n%q", out.String())
	}
	// seq 1 delivered its text unchanged.
	b, err = svc.Handle(ctx, "diff", []byte(`{"seq":1}`))
	if err != nil {
		t.Fatal(err)
	}
	d = hooks.DiffResult{}
	json.Unmarshal(b, &d)
	out.Reset()
	renderDiff(&out, d, 3, false)
	if !strings.HasSuffix(out.String(), "delivered unchanged (no-run)\n") {
		t.Fatalf("unchanged diff:\n%s", out.String())
	}
	// A sequence with no delivery.
	if _, err := svc.Handle(ctx, "diff", []byte(`{"seq":11}`)); err == nil || !strings.Contains(err.Error(), hooks.ErrNoDelivery.Error()) {
		t.Fatalf("seq 11 (a retrieve): %v", err)
	}
}

func TestDiffLast(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	eng, err := hooks.New(ctx, log, hooks.Options{Now: testfixture.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	svc := daemon.ServiceOf(log, eng, "")
	if _, err := svc.Handle(ctx, "diff", nil); err == nil {
		t.Fatal("diff of an empty log")
	}
	text := testfixture.Text("x", 30)
	for i := 0; i < 2; i++ {
		eng.HookResult(ctx, hooks.HookInput{Stdin: testfixture.Bash("s", "", "/p", "cat x", text)})
	}
	b, err := svc.Handle(ctx, "diff", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d hooks.DiffResult
	json.Unmarshal(b, &d)
	if d.Seq != 2 || !d.Match || d.Raw != text || !strings.HasPrefix(d.Delivered, "[OMNI: identical to the 30 lines already shown") {
		t.Fatalf("%+v", d)
	}
}
