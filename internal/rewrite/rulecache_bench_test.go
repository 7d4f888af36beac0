package rewrite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRules reads the merged rules of five settings files (three of
// 2 KB, typical of a user's and a project's settings) straight (Load) and
// through the rules cache once settled (LoadCached): the PreToolUse hook
// does one of the two on every runner line.
func BenchmarkRules(b *testing.B) {
	d := b.TempDir()
	var allow []string
	for i := 0; i < 60; i++ {
		allow = append(allow, fmt.Sprintf("Bash(tool%d sub:*)", i))
	}
	doc := map[string]any{"permissions": map[string]any{"allow": allow, "deny": []string{"Bash(rm:*)", "Read(./.env)"}},
		"hooks": map[string]any{"PostToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": "/x/omni-hook post"}}}}},
		"env":   map[string]string{"A": "b"}, "model": "opus"}
	bs, _ := json.MarshalIndent(doc, "", "  ")
	os.MkdirAll(filepath.Join(d, "u"), 0o755)
	os.MkdirAll(filepath.Join(d, "p", ".claude"), 0o755)
	os.WriteFile(filepath.Join(d, "u", "settings.json"), bs, 0o644)
	os.WriteFile(filepath.Join(d, "p", ".claude", "settings.json"), bs, 0o644)
	os.WriteFile(filepath.Join(d, "p", ".claude", "settings.local.json"), bs, 0o644)
	s := Sources{User: filepath.Join(d, "u", "settings.json"), Project: []string{filepath.Join(d, "p"), filepath.Join(d, "p", "sub")}, Managed: []string{"/etc/claude-code/managed-settings.json"}}
	b.Run("Load", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Load(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	home := filepath.Join(d, "home")
	at := time.Now().Add(2 * RacyWindow)
	b.Run("LoadCached", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := LoadCached(home, s, at); err != nil {
				b.Fatal(err)
			}
		}
	})
}
