package hostsetup

// GitHub Copilot CLI: omni's command hook for postToolUse in Copilot's
// settings.json (docs/HOSTS.md, "GitHub Copilot CLI").

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
)

// copilotEvents are the events omni registers with Copilot CLI 1.0.102,
// with their timeouts in seconds (Copilot's timeoutSec): postToolUse,
// whose command hook may replace the text the model reads, and
// preCompact, before Copilot compacts the conversation (the session's
// shown-set empties). A subagent's calls carry a sessionId of their own,
// so no subagent event is needed.
var copilotEvents = []struct {
	name    string
	timeout int
}{{"postToolUse", 30}, {"preCompact", 10}}

// copilotHome is $COPILOT_HOME, else ~/.copilot.
func copilotHome(o Options) string {
	if o.CopilotHome != "" {
		return o.CopilotHome
	}
	return filepath.Join(o.Home, ".copilot")
}

// copilotSettings is the file Copilot reads omni's hooks from: the
// user's $COPILOT_HOME/settings.json or, in a project, the repository's
// .github/hooks/omni.json (copilotproject.go).
func copilotSettings(o Options) string {
	if o.Project != "" {
		return copilotProjectHooks(o.Project)
	}
	return filepath.Join(copilotHome(o), "settings.json")
}

// copilotHandler is the handler omni writes:
// {"type":"command","bash":"OMNI hook","timeoutSec":T}, or on Windows
// {"type":"command","powershell":"& 'OMNI' hook","timeoutSec":T} (Copilot
// runs a handler's powershell command there, its bash one elsewhere).
func copilotHandler(r hookCmd, timeout int) omap {
	cmd, _ := r.hook("hook")
	return omap{{"type", "command"}, {copilotKey(r.goos), cmd}, {"timeoutSec", timeout}}
}

// copilotKey is the handler's key Copilot reads the command from on
// system goos.
func copilotKey(goos string) string {
	if goos == "windows" {
		return "powershell"
	}
	return "bash"
}

// applyCopilotHooks installs (or removes) omni's handlers in a Copilot
// settings file shaped {"hooks": {"<event>": [handler…]}}: every handler
// whose "bash" command runs omni's hook is removed from every event, then
// (install) one handler is appended to each of copilotEvents, unless
// exactly the one omni would write is already there alone. Other keys and
// handlers, and the file's formatting, are kept.
func applyCopilotHooks(src []byte, omni string, install bool) ([]byte, error) {
	return applyCopilotHooksAs(src, posixHookCmd(omni), install)
}

// applyCopilotHooksAs is applyCopilotHooks with the handlers of r's
// system; omni's handlers under either key ("bash", "powershell") are
// recognised.
func applyCopilotHooksAs(src []byte, r hookCmd, install bool) ([]byte, error) {
	omni := r.omni
	want := map[string]omap{}
	if install {
		for _, e := range copilotEvents {
			want[e.name] = copilotHandler(r, e.timeout)
		}
	}
	if len(bytes.TrimSpace(src)) == 0 {
		if !install {
			return src, nil
		}
		var evs omap
		for _, e := range copilotEvents {
			evs = append(evs, kv{e.name, []any{want[e.name]}})
		}
		return renderNew(omap{{"hooks", evs}})
	}
	kept, touched := map[string]bool{}, map[string]bool{}
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
				for _, key := range []string{"bash", "powershell"} {
					if c := h.member(key); c != nil && c.val.kind == '"' && IsOmniCommand(c.val.str(src), omni, "hook") {
						ours = append(ours, i)
						break
					}
				}
			}
			if len(ours) == 0 {
				continue
			}
			if w, ok := want[m.key]; ok && len(ours) == 1 && !kept[m.key] {
				e := m.val.elems[ours[0]]
				if equalJSON(src[e.start:e.end], w) {
					kept[m.key] = true
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
	src = dropEmptiedEvents(src, touched, func(ev string) bool { _, w := want[ev]; return w })
	for _, e := range copilotEvents {
		if !install || kept[e.name] {
			continue
		}
		root, _ := parseJSONC(src)
		hm := root.member("hooks")
		if hm == nil {
			src = insertMember(src, root, "hooks", omap{{e.name, []any{want[e.name]}}})
		} else if m := hm.val.member(e.name); m == nil {
			src = insertMember(src, hm.val, e.name, []any{want[e.name]})
		} else if m.val.kind != '[' {
			return nil, fmt.Errorf(`"hooks.%s" is not an array`, e.name)
		} else {
			src = appendElem(src, m.val, want[e.name])
		}
	}
	if !install && len(touched) > 0 {
		root, _ := parseJSONC(src)
		if i := root.index("hooks"); i >= 0 && len(root.members[i].val.members) == 0 {
			src = removeItem(src, root, i)
		}
	}
	return src, nil
}
