package rewrite

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestServerManagedSettingsRead: Claude Code 2.1.328 also takes managed
// policy from the server (organisation settings from the console, kept
// by the host in remote-settings.json under its config directory) and,
// on Windows and macOS, from the registry (HKLM\SOFTWARE\Policies\ClaudeCode)
// and MDM profiles. A deny rule delivered that way binds the host but is
// unseen by the PreToolUse hook, which may then rewrite a line the
// rule covers (rule 8). The file's shape is not documented; reading it
// as a managed file would make the hook only more cautious.
func TestServerManagedSettingsRead(t *testing.T) {
	t.Skip("finding: server-managed (remote-settings.json), registry and MDM policies are not read by the PreToolUse hook; shape of remote-settings.json not measured")
	s := SourcesFor("/p", func(k string) string { return map[string]string{"HOME": "/h"}[k] })
	if !slices.Contains(s.Managed, filepath.Join("/h", ".claude", "remote-settings.json")) {
		t.Errorf("managed sources %q lack the server-managed settings", s.Managed)
	}
}
