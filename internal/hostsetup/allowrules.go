package hostsetup

import (
	"errors"
	"strings"

	"github.com/omnictx/omni/internal/rewrite"
)

// Claude Code's permission rules for the PreToolUse rewrite: the rewritten
// command adds `set -o pipefail` and `OMNI pipe …` to the agent's own
// command, and the host asks for every part no allow rule permits, so
// omni init writes one allow rule for each (rewrite.PipefailRule,
// rewrite.FilterRule), next to each other at the end of permissions.allow.
// Uninstall removes every filter rule of an omni binary and the pipefail
// rule right after one (a pipefail rule elsewhere is the user's own).

// isFilterRule reports an allow rule omni wrote for some omni binary's
// filter: Bash(PATH pipe:*) with PATH's base name starting with omni (omni,
// omni.exe, a renamed build such as omni-dev).
func isFilterRule(s string) bool {
	c, ok := strings.CutPrefix(s, "Bash(")
	if !ok {
		return false
	}
	c, ok = strings.CutSuffix(c, " pipe:*)")
	base := c[strings.LastIndexAny(c, `/\`)+1:]
	return ok && !strings.ContainsAny(c, "()") && strings.HasPrefix(base, "omni")
}

// applyAllowRules installs (or removes) omni's two allow rules in a Claude
// Code settings file, keeping everything else byte for byte.
func applyAllowRules(src []byte, omni string, install bool) ([]byte, error) {
	want := []any{rewrite.FilterRule(omni), rewrite.PipefailRule}
	if len(strings.TrimSpace(string(src))) == 0 {
		if !install {
			return src, nil
		}
		return renderNew(omap{{"permissions", omap{{"allow", want}}}})
	}
	// Remove every rule of omni's (another binary path, an older install),
	// unless the pair at the end is exactly what would be written.
	anyRemoved := false
	for {
		root, err := parseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.kind != '{' {
			return nil, errors.New("the file is not a JSON object")
		}
		allow := allowArray(root)
		if allow == nil {
			break
		}
		n := len(allow.elems)
		keep := install && n >= 2 && allow.elems[n-2].kind == '"' && allow.elems[n-2].str(src) == want[0] &&
			allow.elems[n-1].kind == '"' && allow.elems[n-1].str(src) == want[1]
		removed := false
		for i, e := range allow.elems {
			if keep && i >= n-2 {
				break
			}
			if e.kind != '"' || !isFilterRule(e.str(src)) {
				continue
			}
			if i+1 < n && allow.elems[i+1].kind == '"' && allow.elems[i+1].str(src) == rewrite.PipefailRule && !(keep && i+1 >= n-2) {
				src = removeItem(src, allow, i+1)
				root, _ = parseJSONC(src)
				allow = allowArray(root)
			}
			src = removeItem(src, allow, i)
			removed, anyRemoved = true, true
			break
		}
		if !removed {
			if keep {
				return src, nil
			}
			break
		}
	}
	root, _ := parseJSONC(src)
	if !install {
		// An allow array (and then a permissions object) that omni's
		// removal emptied goes too, so a file omni created can go whole.
		if !anyRemoved {
			return src, nil
		}
		if a := allowArray(root); a != nil && len(a.elems) == 0 {
			pm := root.member("permissions")
			src = removeItem(src, pm.val, pm.val.index("allow"))
			root, _ = parseJSONC(src)
			if pm = root.member("permissions"); pm != nil && len(pm.val.members) == 0 {
				src = removeItem(src, root, root.index("permissions"))
			}
		}
		return src, nil
	}
	pm := root.member("permissions")
	switch {
	case pm == nil:
		return insertMember(src, root, "permissions", omap{{"allow", want}}), nil
	case pm.val.kind != '{':
		return nil, errors.New(`"permissions" is not an object`)
	}
	am := pm.val.member("allow")
	if am == nil {
		return insertMember(src, pm.val, "allow", want), nil
	}
	if am.val.kind != '[' {
		return nil, errors.New(`"permissions.allow" is not an array`)
	}
	src = appendElem(src, am.val, want[0])
	root, _ = parseJSONC(src)
	return appendElem(src, allowArray(root), want[1]), nil
}

// allowArray returns permissions.allow when it is an array.
func allowArray(root *jnode) *jnode {
	pm := root.member("permissions")
	if pm == nil || pm.val.kind != '{' {
		return nil
	}
	am := pm.val.member("allow")
	if am == nil || am.val.kind != '[' {
		return nil
	}
	return am.val
}
