package rewrite

import (
	"reflect"
	"strings"
	"testing"
)

// TestManagedFilesPerSystem: the managed-settings files the PreToolUse
// hook reads are those Claude Code 2.1.328 reads on each system (its
// managed directory, and the managed-settings.d drop-ins there on every
// system): a deny rule an administrator put in a drop-in on macOS, or in
// C:\Program Files\ClaudeCode on Windows, must stop a rewrite as it
// binds the host (rule 8).
func TestManagedFilesPerSystem(t *testing.T) {
	var asked []string
	glob := func(p string) ([]string, error) {
		asked = append(asked, p)
		dir := strings.TrimSuffix(p, "*.json")
		return []string{dir + "20-team.json", dir + "10-org.json"}, nil
	}
	for goos, want := range map[string][]string{
		"linux": {"/etc/claude-code/managed-settings.json",
			"/etc/claude-code/managed-settings.d/10-org.json", "/etc/claude-code/managed-settings.d/20-team.json"},
		"darwin": {"/Library/Application Support/ClaudeCode/managed-settings.json",
			"/Library/Application Support/ClaudeCode/managed-settings.d/10-org.json",
			"/Library/Application Support/ClaudeCode/managed-settings.d/20-team.json"},
		"windows": {`C:\Program Files\ClaudeCode\managed-settings.json`,
			`C:\Program Files\ClaudeCode\managed-settings.d\10-org.json`,
			`C:\Program Files\ClaudeCode\managed-settings.d\20-team.json`},
	} {
		if got := managedFor(goos, glob); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", goos, got, want)
		}
	}
}
