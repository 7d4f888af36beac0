package hostsetup

import (
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
