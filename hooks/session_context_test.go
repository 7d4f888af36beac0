package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/projections/session"
)

func readPayloadFor(session, path, content string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",
		"tool_name": "Read", "tool_input": map[string]any{"file_path": path},
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": content,
			"numLines": strings.Count(content, "\n"), "startLine": 1, "totalLines": strings.Count(content, "\n")}}})
	return b
}

func failurePayload(session, cmd, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUseFailure",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "error": msg})
	return b
}

func TestGoalsAndSessionContext(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	const proj = "/home/dev/proj"
	if got := e.SessionContext(proj); got != "" {
		t.Fatalf("unknown project: %q", got)
	}
	if _, err := e.Remember(ctx, proj, events.Reader{}, "   "); !errors.Is(err, ErrEmptyFact) {
		t.Fatalf("empty fact: %v", err)
	}
	if _, err := e.SetGoal(ctx, proj, events.Reader{}, strings.Repeat("x", MaxGoalBytes+1)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("long goal: %v", err)
	}
	seq, err := e.SetGoal(ctx, proj, events.Reader{Session: "s1"}, "  ship the stats view \n")
	if err != nil || seq != 1 {
		t.Fatalf("set goal: %d %v", seq, err)
	}
	if _, err := e.Remember(ctx, proj, events.Reader{}, "tests need python3"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Remember(ctx, proj, events.Reader{}, "the corpus lives in ../shared"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		e.HookResult(ctx, HookInput{Stdin: readPayloadFor("s1", proj+"/stats.go", "package stats\n")})
	}
	e.HookResult(ctx, HookInput{Stdin: readPayloadFor("s1", proj+"/session.go", "package session\n")})
	e.HookResult(ctx, HookInput{Stdin: failurePayload("s1", "go vet ./...", "Exit code 1\n# pkg\nvet: stats.go:12:2: unreachable code\nerror: vet failed\n")})
	e.HookResult(ctx, HookInput{Stdin: failurePayload("s1", "go test ./...", "Exit code 1\n--- FAIL: TestX (0.00s)\n")})
	// go test then passes: the go vet failure is the last active one.
	e.HookResult(ctx, HookInput{Stdin: bashPayload("s1", "", "go test ./...", "ok\n")})

	got := e.SessionContext(proj)
	want := "omni, this project so far:\n" +
		"Goal: ship the stats view\n" +
		"Last failure not yet followed by a success (2026-11-01 12:00 UTC): go vet ./... → error: vet failed\n" +
		"Files read most (reads): stats.go (3), session.go (1)\n" +
		"Remembered: the corpus lives in ../shared; tests need python3"
	if got != want {
		t.Fatalf("context:\n%s\nwant:\n%s", got, want)
	}
	var goals []session.Goal
	e.SessionView(func(s *session.Sessions) { goals = s.Project(proj).Goals })
	if len(goals) != 1 || goals[0].Session != "s1" || goals[0].Seq != 1 {
		t.Fatalf("goals %+v", goals)
	}
	// Clearing the goal; a long fact is clipped to the limit.
	if _, err := e.SetGoal(ctx, proj, events.Reader{}, ""); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if _, err := e.Remember(ctx, proj, events.Reader{}, strings.Repeat("ü long fact ", 70)); err != nil {
			t.Fatal(err)
		}
	}
	got = e.SessionContext(proj)
	if strings.Contains(got, "Goal:") || utf8.RuneCountInString(got) != SessionContextMax || !strings.HasSuffix(got, "…") {
		t.Fatalf("clipped context (%d runes): %q", utf8.RuneCountInString(got), got)
	}
	// The same log gives the same text.
	e2, err := New(ctx, log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got2 := e2.SessionContext(proj); got2 != got {
		t.Fatalf("rebuilt engine: %q", got2)
	}
}

// A goal or fact that holds a credential is stored and shown masked: it
// reaches every later session's model through SessionStart. Red when
// SetGoal or Remember store the text as given.
func TestGoalsAndFactsRedacted(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	const proj = "/home/dev/proj"
	tok := genToken(23)
	if _, err := e.SetGoal(ctx, proj, events.Reader{Session: "s1"}, "deploy with GITHUB_TOKEN="+tok); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Remember(ctx, proj, events.Reader{}, "the CI token is "+tok); err != nil {
		t.Fatal(err)
	}
	got := e.SessionContext(proj)
	if strings.Contains(got, tok) || !strings.Contains(got, "deploy with GITHUB_TOKEN=") {
		t.Fatalf("session context: %q", got)
	}
	if err := log.Read(ctx, 0, func(ev events.Event) error {
		b, _ := json.Marshal(ev)
		if strings.Contains(string(b), tok) {
			t.Errorf("the %s event holds the credential", ev.Kind)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
