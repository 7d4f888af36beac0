package hostsetup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// omni's two allow rules go in once, at the end of permissions.allow;
// another binary's rules are replaced; uninstall removes omni's pair and
// keeps a pipefail rule of the user's own elsewhere in the list.
func TestAllowRules(t *testing.T) {
	const omni = "/opt/omni/bin/omni"
	src := []byte(`{
  "permissions": {
    "allow": ["Bash(set -o pipefail)", "Bash(git:*)", "Bash(/old/bin/omni pipe:*)", "Bash(set -o pipefail)"]
  }
}`)
	out, err := applyAllowRules(src, omni, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `["Bash(set -o pipefail)", "Bash(git:*)", "Bash(/opt/omni/bin/omni pipe:*)", "Bash(set -o pipefail)"]`
	if !strings.Contains(strings.Join(strings.Fields(string(out)), " "), strings.Join(strings.Fields(want), " ")) {
		t.Fatalf("install:\n%s", out)
	}
	again, err := applyAllowRules(out, omni, true)
	if err != nil || string(again) != string(out) {
		t.Fatalf("a second install changed the file:\n%s", again)
	}
	gone, err := applyAllowRules(out, omni, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(gone), "omni pipe") || !strings.Contains(string(gone), `"Bash(set -o pipefail)", "Bash(git:*)"`) ||
		strings.Count(string(gone), "pipefail") != 1 {
		t.Fatalf("uninstall:\n%s", gone)
	}
	fresh, err := applyAllowRules(nil, omni, true)
	if err != nil || !strings.Contains(string(fresh), `"Bash(/opt/omni/bin/omni pipe:*)"`) {
		t.Fatalf("new file: %v\n%s", err, fresh)
	}
	if _, err := applyAllowRules([]byte(`{"permissions": []}`), omni, true); err == nil {
		t.Fatal("a permissions value that is not an object was edited")
	}
}

// doctor names a Claude Code settings file that registers the rewrite
// without the allow rules of its added parts (the rewrite is then off
// outside bypass mode), and is silent when they are there.
func TestRewriteRulesProblem(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	hooks := `"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/opt/omni/bin/omni-hook pretool"}]}]}`
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{` + hooks + `}`, true},
		{`{` + hooks + `,"permissions":{"allow":["Bash(set -o pipefail)"]}}`, true},
		{`{` + hooks + `,"permissions":{"allow":["Bash(/opt/omni/bin/omni pipe:*)","Bash(set -o pipefail)"]}}`, false},
		{`{"permissions":{"allow":[]}}`, false},
	} {
		if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		got := false
		rewriteRulesProblem(p, "settings.json", "omni init --claude", func(string, ...any) { got = true })
		if got != c.want {
			t.Errorf("%s: problem %v, want %v", c.body, got, c.want)
		}
	}
}
