package hostsetup

import (
	"strings"
	"testing"
)

// An omni binary whose path holds a space (a macOS home such as
// "/Users/Jane Doe/go/bin/omni"): init no longer writes the rewrite for
// it, but rules an older install wrote are removed by uninstall, and a
// second init after a user's edit holds one filter rule.
func TestAllowRulesPathWithSpace(t *testing.T) {
	omni := "/Users/Jane Doe/go/bin/omni"
	src := []byte(`{"permissions":{"allow":["Bash(make:*)"]}}`)
	in, err := applyAllowRules(src, omni, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := applyAllowRules(in, omni, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "pipe:*") || strings.Contains(string(out), "pipefail") {
		t.Errorf("uninstall left omni's rules:\n%s", out)
	}
	edited := []byte(strings.Replace(string(in), `"Bash(set -o pipefail)"`, `"Bash(set -o pipefail)","Bash(pytest:*)"`, 1))
	again, _ := applyAllowRules(edited, omni, true)
	if n := strings.Count(string(again), "pipe:*"); n != 1 {
		t.Errorf("a second init holds %d filter rules:\n%s", n, again)
	}
}
