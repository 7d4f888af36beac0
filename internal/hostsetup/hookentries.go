package hostsetup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The Claude-compatible hooks object (Claude Code, Codex, Gemini).

// applyHookEntries installs (or removes) omni's handlers in a settings file
// shaped {"hooks": {"<Event>": [{"matcher": …, "hooks": [handler…]}]}}. An
// omni handler is a command handler whose program is omni (by base name, or
// the binary path) and whose subcommand is hook or pretool; all of them are
// removed except one group per wanted event equal to what omni would write,
// so duplicates from another binary path or an older install disappear.
// The commands are those of Linux and macOS (applyHookEntriesAs for
// another system's).
func applyHookEntries(src []byte, entries []hookEntry, omni string, install bool) ([]byte, error) {
	return applyHookEntriesAs(src, entries, posixHookCmd(omni), install)
}

// applyHookEntriesAs is applyHookEntries with the command lines of r's
// host and system. Errors: the file's shape, or a binary path that host
// cannot run there (hookCmd.line).
func applyHookEntriesAs(src []byte, entries []hookEntry, r hookCmd, install bool) ([]byte, error) {
	omni := r.omni
	if install && len(entries) > 0 {
		if _, ok := r.hook("hook"); !ok {
			return nil, fmt.Errorf("%s cannot run %s from its hooks on %s (a path its shell would need quoted); install omni under a plain path", r.host.Name(), omni, r.goos)
		}
	}
	if len(bytes.TrimSpace(src)) == 0 {
		if !install {
			return src, nil
		}
		var evs omap
		for _, e := range entries {
			evs = append(evs, kv{e.event, []any{groupValueAs(e, r)}})
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
				equalJSON(src[m.val.elems[hs[0].group].start:m.val.elems[hs[0].group].end], groupValueAs(e, r)) {
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
				missing = append(missing, kv{e.event, []any{groupValueAs(e, r)}})
				continue
			}
			if m := hm.val.member(e.event); m != nil {
				if m.val.kind != '[' {
					return nil, fmt.Errorf(`"hooks.%s" is not an array`, e.event)
				}
				src = appendElem(src, m.val, groupValueAs(e, r))
			} else {
				src = insertMember(src, hm.val, e.event, []any{groupValueAs(e, r)})
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

// groupValue is the matcher group omni writes for e on Linux and macOS.
func groupValue(e hookEntry, omni string) omap { return groupValueAs(e, posixHookCmd(omni)) }

// groupValueAs is the matcher group omni writes for e, with r's command
// line (the thin client's, the same hook started faster, when it sits
// beside the binary).
func groupValueAs(e hookEntry, r hookCmd) omap {
	cmd, _ := r.hook(e.sub)
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

// HookBinary returns the path of the thin hook client (HookBinaryName,
// with .exe when the omni binary's name has it) beside the omni binary at
// path omni, or "" when there is no executable regular file of that name
// there (a .exe counts as executable: Windows has no mode bits).
func HookBinary(omni string) string {
	if omni == "" {
		return ""
	}
	name := HookBinaryName
	exe := strings.EqualFold(filepath.Ext(omni), ".exe")
	if exe {
		name += filepath.Ext(omni)
	}
	p := filepath.Join(filepath.Dir(omni), name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (exe || fi.Mode()&0o111 != 0) {
		return p
	}
	return ""
}

// IsOmniCommand reports whether a shell command line runs omni (its base
// name, or the binary path) with one of subs as its subcommand, or runs the
// thin hook client (omni-hook) and subs holds "hook" ("pretool" for
// `omni-hook pretool`), followed by nothing but plain words (plainWords):
// a line that goes on with an operator, a redirection or a flag is the
// user's own.
//
// The line may be any system's rendering (hookWords): POSIX, Git Bash's
// C:/… paths, PowerShell's & 'C:\…\omni.exe', cmd.exe's "C:\…\omni.exe"
// or a bare C:\…\omni.exe; a base name is read with either separator and
// without .exe.
func IsOmniCommand(cmd, omni string, subs ...string) bool {
	w := hookWords(cmd)
	i := 0
	for i < len(w) && strings.Contains(w[i], "=") && !strings.ContainsAny(w[i], `/\`) {
		i++
	}
	if i < len(w) && programBase(w[i]) == HookBinaryName {
		if i+1 < len(w) && w[i+1] == "pretool" {
			return slices.Contains(subs, "pretool") && plainWords(w[i+2:])
		}
		return slices.Contains(subs, "hook") && plainWords(w[i+1:])
	}
	if i+1 >= len(w) || !isOmniProgram(w[i], omni) {
		return false
	}
	return slices.Contains(subs, w[i+1]) && plainWords(w[i+2:])
}

// plainWords reports whether every word is a plain argument such as omni
// writes after its subcommand (cursor): letters, digits, '_' and '-', not
// starting with '-'. A shell operator (||, |, &&), a redirection
// (2>>file), a flag or a URL makes the line a user's own, which
// uninstall and doctor leave alone.
func plainWords(ws []string) bool {
	for _, x := range ws {
		if x == "" || x[0] == '-' {
			return false
		}
		for _, c := range x {
			if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

// isOmniProgram reports whether prog names omni: its base name (either
// separator, without .exe) is omni, or it is the binary path itself.
func isOmniProgram(prog, omni string) bool {
	return programBase(prog) == "omni" || (omni != "" && prog == omni)
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
