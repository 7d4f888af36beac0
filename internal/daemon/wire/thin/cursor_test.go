package thin

import "testing"

// Omni's Claude Code hooks run by Cursor (which also runs the hooks of
// ~/.claude/settings.json) answer nothing; the entry of omni init --cursor,
// Claude Code itself, and Claude Code under an environment that merely has
// CURSOR_VERSION are answered as before.
func TestCursorDuplicate(t *testing.T) {
	cursor := []byte(`{"conversation_id":"c","session_id":"c","hook_event_name":"postToolUse","cursor_version":"2026.09.18-9a7762b","tool_name":"Shell","tool_input":{"command":"ls"},"tool_output":"{\"output\":\"a\\n\",\"exitCode\":0}"}`)
	claude := []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{"file":{"content":"\"cursor_version\": \"1\""}}}`)
	t.Setenv("CURSOR_VERSION", "")
	if CursorDuplicate(false, cursor) {
		t.Error("without CURSOR_VERSION a payload is never dropped")
	}
	t.Setenv("CURSOR_VERSION", "2026.09.18-9a7762b")
	if !CursorDuplicate(false, cursor) {
		t.Error("a Cursor payload reached omni's Claude Code hook: it must answer nothing")
	}
	if CursorDuplicate(true, cursor) {
		t.Error("the entry of omni init --cursor was dropped")
	}
	if CursorDuplicate(false, claude) {
		t.Error("a Claude Code payload quoting cursor_version was dropped")
	}
}
