package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testfixture"
)

// apply rebuilds both sides of an edit script.
func applyScript(script []diffLine) (a, b []string) {
	for _, l := range script {
		if l.op != '+' {
			a = append(a, l.text)
		}
		if l.op != '-' {
			b = append(b, l.text)
		}
	}
	return a, b
}

func TestDiffLinesRoundTrip(t *testing.T) {
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
		script := diffLinesOf(a, b)
		ga, gb := applyScript(script)
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("round trip failed for %q -> %q: %v", a, b, script)
		}
		edits := 0
		for _, l := range script {
			if l.op != ' ' {
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
	hs := unifiedHunks(a, b, 1)
	if len(hs) != 1 || hs[0].a0 != 0 || hs[0].an != 7 || hs[0].b0 != 0 || hs[0].bn != 3 || len(hs[0].lines) != 8 {
		t.Fatalf("hunks %+v", hs)
	}
	// Far-apart changes make two hunks; near ones merge.
	a = strings.SplitAfter("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "\n")
	a = a[:len(a)-1]
	b = append([]string{}, a...)
	b[1], b[10] = "x\n", "y\n"
	if hs := unifiedHunks(a, b, 2); len(hs) != 2 {
		t.Fatalf("want two hunks, got %+v", hs)
	}
	if hs := unifiedHunks(a, b, 5); len(hs) != 1 {
		t.Fatalf("want one hunk, got %+v", hs)
	}
}

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
	checkGolden(t, "diff/seq3.txt", out.Bytes())
	out.Reset()
	renderDiff(&out, d, 2, true)
	if !strings.Contains(out.String(), ansiRed+"-big 010") || !strings.Contains(out.String(), ansiGreen+"+[OMNI: 20 lines already shown from big.txt") {
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
