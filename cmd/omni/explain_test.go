package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

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
