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

func sessionVia(t *testing.T, svc *daemon.Service, req daemon.SessionRequest) daemon.SessionReply {
	t.Helper()
	b, _ := json.Marshal(req)
	out, err := svc.Handle(context.Background(), "session", b)
	if err != nil {
		t.Fatal(err)
	}
	var r daemon.SessionReply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSessionMethod(t *testing.T) {
	svc := testfixture.Service(t)
	const p = "/home/dev/alpha"
	st := sessionVia(t, svc, daemon.SessionRequest{Op: "status", Project: p})
	if len(st.Sessions) != 1 || st.Goal != "fold less, explain more" || st.Facts != 1 {
		t.Fatalf("status %+v", st)
	}
	s := st.Sessions[0]
	if s.ID != "term" && s.ID != "s2" && s.ID != "s1" {
		t.Fatalf("status session %+v", s)
	}
	st = sessionVia(t, svc, daemon.SessionRequest{Op: "status", Project: p, Session: "s1"})
	s = st.Sessions[0]
	if s.ID != "s1" || s.Calls != 9 || len(s.Segments) != 1 || s.Segments[0] != 8 || s.CallsOpen != 1 ||
		strings.Join(s.Readers, ",") != "main,agent-7" && strings.Join(s.Readers, ",") != "agent-7,main" {
		t.Fatalf("s1 %+v", s)
	}
	if !strings.Contains(st.Context, "Goal: fold less, explain more") || !strings.Contains(st.Context, "go test ./...") ||
		!strings.Contains(st.Context, "main.go (2)") {
		t.Fatalf("context %q", st.Context)
	}
	var out bytes.Buffer
	renderSession(&out, st, "status")
	testfixture.CheckGolden(t, "session/status.txt", out.Bytes(), *update)

	h := sessionVia(t, svc, daemon.SessionRequest{Op: "history", Project: p})
	if len(h.Sessions) != 3 {
		t.Fatalf("history %+v", h.Sessions)
	}
	all := sessionVia(t, svc, daemon.SessionRequest{Op: "history", All: true})
	if len(all.Sessions) != 5 {
		t.Fatalf("all %d sessions", len(all.Sessions))
	}
	out.Reset()
	renderSession(&out, h, "history")
	testfixture.CheckGolden(t, "session/history.txt", out.Bytes(), *update)
	if _, err := svc.Handle(context.Background(), "session", []byte(`{"op":"x"}`)); err == nil {
		t.Fatal("unknown op accepted")
	}
}
