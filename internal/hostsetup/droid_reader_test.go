package hostsetup

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnictx/omni/internal/mcpserver"
)

// TestDroidMCPHasNoReader: Droid names no session to its MCP servers, so
// omni_run there must run without a reader (rule 5: no reader identity,
// no claim). A droid started from a shell that holds another host's
// session (CLAUDE_CODE_SESSION_ID of a Claude Code session that ran
// `droid exec`, or a user's OMNI_SESSION) passes its environment to the
// server it starts; the registration's own env must leave the server
// with no session, or omni_run would record lines shown to a reader
// that never read them and fold them from that reader's next output.
func TestDroidMCPHasNoReader(t *testing.T) {
	o := testHome(t)
	var w bytes.Buffer
	if err := Run(&w, []Host{Droid}, o, true, false, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(o.Home, ".factory", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := DecodeJSONC(b)
	srv := v.(map[string]any)["mcpServers"].(map[string]any)["omni"].(map[string]any)
	inherited := map[string]string{"CLAUDE_CODE_SESSION_ID": "claude-session-1", "OMNI_SESSION": "user-session"}
	env := map[string]string{}
	for k, v := range inherited {
		env[k] = v
	}
	reg, _ := srv["env"].(map[string]any)
	for k, v := range reg {
		s, _ := v.(string)
		env[k] = s // the registration's env over the inherited one
	}
	got := mcpserver.OptionsFromEnv(func(k string) string { return env[k] })
	if got.Run.Session != "" {
		t.Errorf("omni_run on Droid reads as reader %q (inherited env %v, registration env %v)", got.Run.Session, inherited, reg)
	}
	if !got.Extra[mcpserver.ToolRun] {
		t.Errorf("omni_run not offered: %+v", got.Extra)
	}
}
