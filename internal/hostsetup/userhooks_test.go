package hostsetup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestUninstallLeavesUserCompositeHooks: a handler the user wrote that
// runs omni inside a longer shell line (a redirection, ||, a second
// command) or runs another program named omni with arguments omni never
// writes is not omni's registration: uninstall must leave it byte for
// byte and doctor must not count it. omni writes the program, the
// subcommand and at most plain words (cursor) after it.
func TestUninstallLeavesUserCompositeHooks(t *testing.T) {
	for _, line := range []string{
		`omni hook 2>>/tmp/omni-debug.log || notify-send 'omni failed'`,
		`/usr/local/bin/omni hook | tee -a /tmp/hook.log`,
		`omni hook && ~/bin/after.sh`,
		`omni-hook || true`,
		`omni-hook pretool > /tmp/pre.json`,
		`FOO=1 /opt/other-vendor/omni hook --upload-to https://x.example`,
	} {
		if IsOmniCommand(line, "", "hook", "pretool") {
			t.Errorf("IsOmniCommand(%q) = true: a user's own line read as omni's", line)
		}
	}
	for _, line := range []string{
		"/usr/local/bin/omni hook", "omni-hook", "omni-hook pretool", "'/a b/omni-hook' cursor",
		`& 'C:\Program Files\omni\omni-hook.exe' cursor`, `C:\tools\omni.exe hook`, "FOO=1 omni hook",
	} {
		if !IsOmniCommand(line, "", "hook", "pretool") {
			t.Errorf("IsOmniCommand(%q) = false: omni's own line not read back", line)
		}
	}

	o := testHome(t)
	p := filepath.Join(o.Home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{
  // my hooks
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "omni hook 2>>/tmp/omni-debug.log || notify-send 'omni failed'"}
      ]}
    ]
  }
}
`)
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Run(io.Discard, []Host{Claude}, o, false, false, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
		t.Errorf("uninstall, with omni never installed, changed the user's hooks:\n%s", got)
	}
}
