package hostsetup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omnictx/omni/internal/shellcmd"
)

// The Claude-compatible hooks object (Claude Code, Codex, Gemini).

// applyHookEntries installs (or removes) omni's handlers in a settings file
// shaped {"hooks": {"<Event>": [{"matcher": …, "hooks": [handler…]}]}}. An
// omni handler is a command handler whose program is omni (by base name, or
// the binary path) and whose subcommand is hook or pretool; all of them are
// removed except one group per wanted event equal to what omni would write,
// so duplicates from another binary path or an older install disappear.
func applyHookEntries(src []byte, entries []hookEntry, omni string, install bool) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		if !install {
			return src, nil
		}
		var evs omap
		for _, e := range entries {
			evs = append(evs, kv{e.event, []any{groupValue(e, omni)}})
		}
		return renderNew(omap{{"hooks", evs}})
	}
	want := map[string]hookEntry{}
	if install {
		for _, e := range entries {
			want[e.event] = e
		}
	}
	touched := map[string]bool{}
	var kept map[string]bool
	for {
		root, err := parseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.kind != '{' {
			return nil, errors.New("the file is not a JSON object")
		}
		hm := root.member("hooks")
		kept = map[string]bool{}
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
			hs := omniHandlers(src, m.val, omni, "hook", "pretool")
			if len(hs) == 0 {
				continue
			}
			if e, ok := want[m.key]; ok && len(hs) == 1 && hs[0].sole &&
				equalJSON(src[m.val.elems[hs[0].group].start:m.val.elems[hs[0].group].end], groupValue(e, omni)) {
				kept[m.key] = true
				continue
			}
			h := hs[0]
			if h.sole {
				src = removeItem(src, m.val, h.group)
			} else {
				src = removeItem(src, h.list, h.index)
			}
			touched[m.key] = true
			edited = true
			break
		}
		if !edited {
			break
		}
	}
	// Drop event arrays our removals emptied (unless an entry goes back in).
	src = dropEmptiedEvents(src, touched, func(ev string) bool { _, w := want[ev]; return w })
	if install {
		var missing omap
		for _, e := range entries {
			if kept[e.event] {
				continue
			}
			root, _ := parseJSONC(src)
			hm := root.member("hooks")
			if hm == nil {
				missing = append(missing, kv{e.event, []any{groupValue(e, omni)}})
				continue
			}
			if m := hm.val.member(e.event); m != nil {
				if m.val.kind != '[' {
					return nil, fmt.Errorf(`"hooks.%s" is not an array`, e.event)
				}
				src = appendElem(src, m.val, groupValue(e, omni))
			} else {
				src = insertMember(src, hm.val, e.event, []any{groupValue(e, omni)})
			}
		}
		if len(missing) > 0 {
			root, _ := parseJSONC(src)
			src = insertMember(src, root, "hooks", missing)
		}
	} else if len(touched) > 0 {
		root, _ := parseJSONC(src)
		if i := root.index("hooks"); i >= 0 && len(root.members[i].val.members) == 0 {
			src = removeItem(src, root, i)
		}
	}
	return src, nil
}

// groupValue is the matcher group omni writes for e.
func groupValue(e hookEntry, omni string) omap {
	cmd := shellcmd.Quote(omni) + " " + e.sub
	if hb := HookBinary(omni); hb != "" {
		// The thin client: the same hook, started faster.
		switch e.sub {
		case "hook":
			cmd = shellcmd.Quote(hb)
		case "pretool":
			cmd = shellcmd.Quote(hb) + " pretool"
		}
	}
	h := omap{{"type", "command"}, {"command", cmd}}
	if e.timeout > 0 {
		h = append(h, kv{"timeout", e.timeout})
	}
	if e.async {
		h = append(h, kv{"async", true})
	}
	g := omap{}
	if e.matcher != "" {
		g = append(g, kv{"matcher", e.matcher})
	}
	return append(g, kv{"hooks", []any{h}})
}

// handlerPos locates one omni handler inside an event array.
type handlerPos struct {
	group int    // index of the matcher group in the event array
	list  *jnode // the group's "hooks" array
	index int    // index of the handler in list
	sole  bool   // the group holds only this handler
}

// omniHandlers finds omni's command handlers in an event array.
func omniHandlers(src []byte, arr *jnode, omni string, subs ...string) []handlerPos {
	var out []handlerPos
	for gi, g := range arr.elems {
		if g.kind != '{' {
			continue
		}
		hm := g.member("hooks")
		if hm == nil || hm.val.kind != '[' {
			continue
		}
		for hi, h := range hm.val.elems {
			if h.kind != '{' {
				continue
			}
			cm := h.member("command")
			if cm == nil || cm.val.kind != '"' {
				continue
			}
			if IsOmniCommand(cm.val.str(src), omni, subs...) {
				out = append(out, handlerPos{group: gi, list: hm.val, index: hi, sole: len(hm.val.elems) == 1})
			}
		}
	}
	return out
}

// HookBinaryName is the thin hook client (cmd/omni-hook): `omni init`
// registers it in place of `omni hook` (and `omni-hook pretool` in place
// of `omni pretool`) when it sits beside the omni binary.
const HookBinaryName = "omni-hook"

// HookBinary returns the path of the thin hook client (HookBinaryName)
// beside the omni binary at path omni, or "" when there is no executable
// regular file of that name there.
func HookBinary(omni string) string {
	if omni == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(omni), HookBinaryName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// IsOmniCommand reports whether a shell command line runs omni (its base
// name, or the binary path) with one of subs as its subcommand, or runs the
// thin hook client (omni-hook) and subs holds "hook" ("pretool" for
// `omni-hook pretool`).
func IsOmniCommand(cmd, omni string, subs ...string) bool {
	w := shellcmd.Split(cmd)
	i := 0
	for i < len(w) && strings.Contains(w[i], "=") && !strings.Contains(w[i], "/") {
		i++
	}
	if i < len(w) && filepath.Base(w[i]) == HookBinaryName {
		if i+1 < len(w) && w[i+1] == "pretool" {
			return slices.Contains(subs, "pretool")
		}
		return slices.Contains(subs, "hook")
	}
	if i+1 >= len(w) || !isOmniProgram(w[i], omni) {
		return false
	}
	for _, s := range subs {
		if w[i+1] == s {
			return true
		}
	}
	return false
}

func isOmniProgram(prog, omni string) bool {
	return filepath.Base(prog) == "omni" || (omni != "" && prog == omni)
}

// dropEmptiedEvents removes from the "hooks" object of src every event
// array that is now empty, was touched by our removals (touched[event]) and
// gets no entry back (wanted(event) false). The user's own empty arrays
// stay. It returns the edited source.
func dropEmptiedEvents(src []byte, touched map[string]bool, wanted func(event string) bool) []byte {
	for {
		root, _ := parseJSONC(src)
		hm := root.member("hooks")
		if hm == nil {
			return src
		}
		edited := false
		for i, m := range hm.val.members {
			if touched[m.key] && !wanted(m.key) && m.val.kind == '[' && len(m.val.elems) == 0 {
				src = removeItem(src, hm.val, i)
				edited = true
				break
			}
		}
		if !edited {
			return src
		}
	}
}
