package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testfixture"
)

func TestExplainFixture(t *testing.T) {
	svc := testfixture.Service(t)
	// seq 2 is the second `cat big.txt` of s1: a whole fold of seq 1.
	x := testfixture.Explain(t, svc, "2")
	if len(x.Folds) != 1 {
		t.Fatalf("%+v", x)
	}
	w := x.Folds[0]
	if w.Marker != "whole" || w.First == nil || w.First.Seq != 1 || w.Compacted == nil || len(w.Retrieves) != 1 {
		t.Fatalf("%+v", w)
	}
	var out bytes.Buffer
	renderExplain(&out, x)
	testfixture.CheckGolden(t, "explain/seq2.txt", out.Bytes(), *update)
	for target, code := range map[string]string{"zz": "give a handle", "999": "no fold"} {
		req, _ := json.Marshal(daemon.ExplainRequest{Target: target})
		if _, err := svc.Handle(context.Background(), "explain", req); err == nil || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// TestRenderExplainPrintable: ids, projects and sources that hold control
// bytes print escaped, on their own lines.
func TestRenderExplainPrintable(t *testing.T) {
	x := hooks.Explanation{Target: "0123456789abcdef", TotalFolds: 1, Folds: []hooks.FoldWhy{{
		Seq: 4, Reader: "s1\x1b]52;c;cHduZWQ=\a", Project: "/p\nfold at seq 9 forged", Source: "cat\x1b[2J x",
		Marker: "run", Scope: "session", Handle: "0123456789abcdef",
		First:     &hooks.Delivery{Seq: 2, Reader: "s0\r\x1b[1A", Source: "cat x"},
		Retrieves: []hooks.Later{{Seq: 5, Reader: "r\x9b"}},
	}}}
	var b strings.Builder
	renderExplain(&b, x)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\r\x9b") || strings.Contains(out, "\nfold at seq 9") {
		t.Errorf("explain prints control bytes or a forged line:\n%q", out)
	}
}
