package hostsetup

// GitHub Copilot CLI: omni's command hook for postToolUse in Copilot's
// settings.json (docs/HOSTS.md, "GitHub Copilot CLI").

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/omnictx/omni/internal/shellcmd"
)

// copilotEvent is the one event omni registers with Copilot CLI 1.0.102:
// postToolUse, whose command hook may replace the text the model reads.
// Copilot has no event for a compaction or a subagent start that omni
// needs (a subagent's calls carry a sessionId of their own).
const copilotEvent = "postToolUse"

// copilotTimeoutSec bounds omni's hook, in seconds (Copilot's timeoutSec).
const copilotTimeoutSec = 30

// copilotHome is $COPILOT_HOME, else ~/.copilot.
func copilotHome(o Options) string {
	if o.CopilotHome != "" {
		return o.CopilotHome
	}
	return filepath.Join(o.Home, ".copilot")
}

// copilotSettings is the settings.json Copilot reads hooks from: the
// user's ($COPILOT_HOME/settings.json) or, in a project,
// .github/copilot/settings.json (loaded only in a folder the user
// trusts).
func copilotSettings(o Options) string {
	if o.Project != "" {
		return filepath.Join(o.Project, ".github", "copilot", "settings.json")
	}
	return filepath.Join(copilotHome(o), "settings.json")
}

// copilotHandler is the handler omni writes:
// {"type":"command","bash":"OMNI hook","timeoutSec":30}.
func copilotHandler(omni string) omap {
	cmd := shellcmd.Quote(omni) + " hook"
	if hb := HookBinary(omni); hb != "" {
		cmd = shellcmd.Quote(hb)
	}
	return omap{{"type", "command"}, {"bash", cmd}, {"timeoutSec", copilotTimeoutSec}}
}

// applyCopilotHooks installs (or removes) omni's handler in a Copilot
// settings file shaped {"hooks": {"<event>": [handler…]}}: every handler
// whose "bash" command runs omni's hook is removed from every event, then
// (install) one handler is appended to postToolUse, unless exactly the one
// omni would write is already there alone. Other keys and handlers, and
// the file's formatting, are kept.
func applyCopilotHooks(src []byte, omni string, install bool) ([]byte, error) {
	want := copilotHandler(omni)
	if len(bytes.TrimSpace(src)) == 0 {
		if !install {
			return src, nil
		}
		return renderNew(omap{{"hooks", omap{{copilotEvent, []any{want}}}}})
	}
	kept, touched := false, map[string]bool{}
	for {
		root, err := parseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.kind != '{' {
			return nil, errors.New("the file is not a JSON object")
		}
		hm := root.member("hooks")
		if hm == nil {
			break
		}
		if hm.val.kind != '{' {
			return nil, errors.New(`"hooks" is not an object`)
		}
		edited := false
		for _, m := range hm.val.members {
			if m.val.kind != '[' {
				continue
			}
			var ours []int
			for i, h := range m.val.elems {
				if h.kind != '{' {
					continue
				}
				if c := h.member("bash"); c != nil && c.val.kind == '"' && IsOmniCommand(c.val.str(src), omni, "hook") {
					ours = append(ours, i)
				}
			}
			if len(ours) == 0 {
				continue
			}
			if install && m.key == copilotEvent && len(ours) == 1 && !kept {
				e := m.val.elems[ours[0]]
				if equalJSON(src[e.start:e.end], want) {
					kept = true
					continue
				}
			}
			src = removeItem(src, m.val, ours[0])
			touched[m.key], edited = true, true
			break
		}
		if !edited {
			break
		}
	}
	// Drop the event arrays our removals emptied (unless ours goes back in).
	for {
		root, _ := parseJSONC(src)
		hm := root.member("hooks")
		if hm == nil {
			break
		}
		edited := false
		for i, m := range hm.val.members {
			if touched[m.key] && !(install && m.key == copilotEvent) && m.val.kind == '[' && len(m.val.elems) == 0 {
				src = removeItem(src, hm.val, i)
				edited = true
				break
			}
		}
		if !edited {
			break
		}
	}
	root, _ := parseJSONC(src)
	hm := root.member("hooks")
	switch {
	case install && !kept && hm == nil:
		src = insertMember(src, root, "hooks", omap{{copilotEvent, []any{want}}})
	case install && !kept:
		if m := hm.val.member(copilotEvent); m != nil {
			if m.val.kind != '[' {
				return nil, fmt.Errorf(`"hooks.%s" is not an array`, copilotEvent)
			}
			src = appendElem(src, m.val, want)
		} else {
			src = insertMember(src, hm.val, copilotEvent, []any{want})
		}
	case !install && len(touched) > 0 && hm != nil && len(hm.val.members) == 0:
		src = removeItem(src, root, root.index("hooks"))
	}
	return src, nil
}
