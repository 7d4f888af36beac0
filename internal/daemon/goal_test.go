package daemon_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testfixture"
)

func goalVia(t *testing.T, svc *daemon.Service, req daemon.GoalRequest) (daemon.GoalReply, error) {
	t.Helper()
	b, _ := json.Marshal(req)
	out, err := svc.Handle(context.Background(), "goal", b)
	if err != nil {
		return daemon.GoalReply{}, err
	}
	var r daemon.GoalReply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r, nil
}

func TestGoalMethod(t *testing.T) {
	svc := testfixture.Service(t)
	const p = "/home/dev/alpha"
	r, err := goalVia(t, svc, daemon.GoalRequest{Op: "show", Project: p})
	if err != nil || r.Goal == nil || r.Goal.Text != "fold less, explain more" || len(r.Facts) != 1 {
		t.Fatalf("show: %+v %v", r, err)
	}
	r, err = goalVia(t, svc, daemon.GoalRequest{Op: "set", Project: p, Session: "s9", Text: "  make stats exact "})
	if err != nil || r.Goal.Text != "make stats exact" || r.Goal.Session != "s9" || r.Seq == 0 || len(r.History) != 2 {
		t.Fatalf("set: %+v %v", r, err)
	}
	r, err = goalVia(t, svc, daemon.GoalRequest{Op: "remember", Project: p, Text: "bench first"})
	if err != nil || len(r.Facts) != 2 || r.Facts[1].Text != "bench first" {
		t.Fatalf("remember: %+v %v", r, err)
	}
	r, err = goalVia(t, svc, daemon.GoalRequest{Op: "clear", Project: p})
	if err != nil || r.Goal != nil || len(r.History) != 3 || r.History[2].Text != "" {
		t.Fatalf("clear: %+v %v", r, err)
	}
	for _, bad := range []daemon.GoalRequest{{Op: "set", Project: p}, {Op: "remember", Project: p, Text: " "}, {Op: "nope"}} {
		if _, err := goalVia(t, svc, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// An unknown project has nothing.
	r, err = goalVia(t, svc, daemon.GoalRequest{Op: "show", Project: "/elsewhere"})
	if err != nil || r.Goal != nil || len(r.Facts) != 0 {
		t.Fatalf("unknown project: %+v %v", r, err)
	}
}
