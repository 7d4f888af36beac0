package thin

import (
	"encoding/json"
	"os"
)

// CursorArg is the argument omni init --cursor puts after the hook
// command (`omni-hook cursor`, `omni hook cursor`): the call comes from
// omni's own Cursor registration.
const CursorArg = "cursor"

// CursorDuplicate reports whether a hook call is one of omni's Claude Code
// registrations run by Cursor, which also runs the hooks of
// ~/.claude/settings.json, with its own payloads (Cursor's hooks
// documentation): CURSOR_VERSION is set in the hook's environment (Cursor
// sets it in every hook process), the command was not given CursorArg
// (fromCursorEntry false), and the payload has a top-level
// "cursor_version". Such a call is answered with nothing: the
// registration of omni init --cursor handles the same event, and a Claude
// Code reply (a permission decision above all) is one Cursor would misread.
func CursorDuplicate(fromCursorEntry bool, payload []byte) bool {
	if fromCursorEntry || os.Getenv("CURSOR_VERSION") == "" {
		return false
	}
	var p struct {
		CursorVersion *string `json:"cursor_version"`
	}
	return json.Unmarshal(payload, &p) == nil && p.CursorVersion != nil
}
