package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testfixture"
)

// omni goal's text form of a goal reply with its history and facts.
func TestGoalRender(t *testing.T) {
	svc := testfixture.Service(t)
	const p = "/home/dev/alpha"
	if _, err := svc.Goal(t.Context(), daemon.GoalRequest{Op: "set", Project: p, Session: "s9", Text: "make stats exact"}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Goal(t.Context(), daemon.GoalRequest{Op: "remember", Project: p, Text: "bench first"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	renderGoal(&out, r, true)
	if !strings.Contains(out.String(), "goal of /home/dev/alpha: make stats exact") || !strings.Contains(out.String(), "remembered:") ||
		!strings.Contains(out.String(), "fold less, explain more") {
		t.Fatalf("render:\n%s", out.String())
	}
}
