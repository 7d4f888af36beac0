package hostsetup

// Hosts added after the first six describe themselves in one value each
// (cursor.go, droid.go); the per-host switches of hostsetup.go and run.go
// ask this table first.

import (
	"bytes"
	"errors"
	"fmt"
)

// hostSpec is where one host reads omni's registration and what omni
// writes there.
type hostSpec struct {
	// dirs are the directories (or files) whose presence says the host is
	// installed in o's scope.
	dirs func(o Options) []string
	// paths are the files of the hooks and of the MCP server ("" for none).
	paths func(o Options) (hookPath, mcpPath string)
	// hooks and mcp are the parts written there (nil for none).
	hooks func(o Options, path string) []part
	mcp   func(o Options, path string) []part
	// notes are the steps the host needs beyond its files, after a change.
	notes func(o Options) []string
}

// specs holds the hosts described by a hostSpec.
var specs = map[Host]hostSpec{}

// specParts lists the parts of a spec host under o.
func specParts(s hostSpec, o Options) []part {
	hookPath, mcpPath := s.paths(o)
	var ps []part
	if !o.MCPOnly && s.hooks != nil && hookPath != "" {
		ps = append(ps, s.hooks(o, hookPath)...)
	}
	if !o.HookOnly && s.mcp != nil && mcpPath != "" {
		ps = append(ps, s.mcp(o, mcpPath)...)
	}
	return ps
}

// flatHook is one handler of a host whose hooks file is shaped
// {"hooks": {"<event>": [handler…]}} (Copilot CLI's settings.json,
// Cursor's hooks.json): the event, and the handler object omni writes.
type flatHook struct {
	event   string
	handler omap
}

// applyFlatHooks installs (or removes) omni's handlers in a hooks file
// shaped {"hooks": {"<event>": [handler…]}} whose handlers name their
// command under cmdKey: every handler whose command runs omni's hook is
// removed from every event, then (install) hooks' handlers are appended,
// unless exactly the one omni would write is already there alone. On
// install, each member of top the file lacks is added at its top level
// (Cursor's "version": 1, without which it rejects the whole file); a new
// file is top followed by "hooks". Other keys, handlers and the file's
// formatting are kept.
func applyFlatHooks(src []byte, hooks []flatHook, cmdKey string, top omap, omni string, install bool) ([]byte, error) {
	want := map[string]omap{}
	if install {
		for _, h := range hooks {
			want[h.event] = h.handler
		}
	}
	if len(bytesTrim(src)) == 0 {
		if !install {
			return src, nil
		}
		var evs omap
		for _, h := range hooks {
			evs = append(evs, kv{h.event, []any{h.handler}})
		}
		return renderNew(append(append(omap{}, top...), kv{"hooks", evs}))
	}
	kept, touched := map[string]bool{}, map[string]bool{}
	for {
		root, err := parseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.kind != '{' {
			return nil, errNotObject
		}
		hm := root.member("hooks")
		if hm == nil {
			break
		}
		if hm.val.kind != '{' {
			return nil, errHooksNotObject
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
				if c := h.member(cmdKey); c != nil && c.val.kind == '"' && IsOmniCommand(c.val.str(src), omni, "hook") {
					ours = append(ours, i)
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
	src = dropEmptiedEvents(src, touched, func(ev string) bool { _, w := want[ev]; return w })
	if install {
		for _, t := range top {
			if root, _ := parseJSONC(src); root.member(t.k) == nil {
				src = insertMember(src, root, t.k, t.v)
			}
		}
	}
	for _, h := range hooks {
		if !install || kept[h.event] {
			continue
		}
		root, _ := parseJSONC(src)
		hm := root.member("hooks")
		if hm == nil {
			src = insertMember(src, root, "hooks", omap{{h.event, []any{h.handler}}})
		} else if m := hm.val.member(h.event); m == nil {
			src = insertMember(src, hm.val, h.event, []any{h.handler})
		} else if m.val.kind != '[' {
			return nil, fmt.Errorf(`"hooks.%s" is not an array`, h.event)
		} else {
			src = appendElem(src, m.val, h.handler)
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

var (
	errNotObject      = errors.New("the file is not a JSON object")
	errHooksNotObject = errors.New(`"hooks" is not an object`)
)

func bytesTrim(b []byte) []byte { return bytes.TrimSpace(b) }
