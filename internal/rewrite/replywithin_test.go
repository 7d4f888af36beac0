package rewrite

import (
	"testing"
	"time"
)

// TestReplyWithinDeadline: a PreToolUse hook whose settings read never
// answers (a hung network home) prints nothing by its deadline, so the
// host runs the command as written; an answering one is Reply's answer.
func TestReplyWithinDeadline(t *testing.T) {
	o := settings(t, map[string][]string{"allow": append([]string{"Bash(go test:*)"}, omniRules...)}, nil)
	in := payload("go test ./...", "default", nil)
	if got, _ := rewritten(t, ReplyWithin(in, o, time.Minute)); got == "" {
		t.Fatal("ReplyWithin rewrote nothing where Reply rewrites")
	}
	block := make(chan struct{})
	defer close(block)
	o.Sources = func(string) Sources { <-block; return Sources{} }
	done := make(chan []byte, 1)
	go func() { done <- ReplyWithin(in, o, 50*time.Millisecond) }()
	select {
	case got := <-done:
		if got != nil {
			t.Errorf("ReplyWithin past its deadline = %s, want nil", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReplyWithin waited for a settings read that never answers")
	}
}
