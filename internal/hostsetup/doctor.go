package hostsetup

// The host-registration checks of omni doctor and their repair.

import (
	"bytes"
	"fmt"
	"github.com/omnictx/omni/internal/rewrite"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// HostStatus is one host's row of omni doctor's tier table (omni doctor
// --json prints it as is).
type HostStatus struct {
	// Host names the host; Installed says its configuration directory exists.
	Host      string `json:"host"`
	Installed bool   `json:"installed"`
	// Tier is Full, Full-text-only, Plugin, MCP-only, or "" when omni is not
	// registered with the host.
	Tier string `json:"tier"`
	// Hooks is where the hooks (or the plugin) are registered, MCP where
	// the MCP server is ("" when not).
	Hooks string `json:"hooks,omitempty"`
	MCP   string `json:"mcp,omitempty"`
	// Notes are what doctor cannot check but the user should.
	Notes []string `json:"notes,omitempty"`
	// needsInit is the init flag line that repairs the registration.
	needsInit []string
}

// Check inspects every host in AllHosts order, in each scope of scopes
// (user scope first, then a project scope), and calls problem once per
// problem found, each line ending in its fix. registered reports whether
// omni is registered with any host, even imperfectly.
func Check(scopes []Options, problem func(format string, a ...any)) (rows []HostStatus, registered bool) {
	for _, h := range AllHosts {
		row := inspectHost(h, scopes, problem)
		registered = registered || row.Tier != "" || len(row.needsInit) > 0
		rows = append(rows, row)
	}
	return rows, registered
}

// inspectHost checks one host's registration in every scope.
func inspectHost(h Host, scopes []Options, problem func(string, ...any)) HostStatus {
	row := HostStatus{Host: hostNames[h]}
	hooksOK, mcpOK := false, false
	for _, o := range scopes {
		row.Installed = row.Installed || Present(h, o)
		flag := "omni init --" + string(h)
		if o.Project != "" {
			flag += " --project"
		}
		for _, kind := range []string{"hooks", "plugin", "mcp"} {
			st, detail := inspectPart(h, o, kind)
			if st == "none" {
				continue
			}
			where := shortPath(detail, o.Home)
			if kind == "mcp" {
				row.MCP = where
			} else {
				row.Hooks = where
			}
			switch st {
			case "ok":
				if kind == "mcp" {
					mcpOK = true
				} else {
					hooksOK = true
				}
				if h == Claude && kind == "hooks" {
					rewriteRulesProblem(detail, where, flag, problem)
				}
			case "stale":
				problem("%s: omni's %s in %s are incomplete, duplicated or out of date: run '%s'", hostNames[h], kind, where, flag)
				row.needsInit = append(row.needsInit, flag)
				if kind != "mcp" {
					hooksOK = true // registered, if imperfectly
				}
			case "missing-binary":
				problem("%s: %s in %s runs a binary that does not exist: run '%s'", hostNames[h], kind, where, flag)
				row.needsInit = append(row.needsInit, flag)
			default:
				problem("%s: %s: run '%s' after fixing it", hostNames[h], st, flag)
			}
		}
	}
	switch {
	case hooksOK:
		row.Tier = hostTiers[h]
	case mcpOK:
		row.Tier = "MCP-only"
	}
	if h == Codex && row.Hooks != "" {
		// Codex skips hooks nobody approved, silently: say which.
		for _, o := range scopes {
			codexTrustProblems(o, problem)
		}
	}
	return row
}

// inspectPart reports the state of one registration kind of host h in o's
// scope: "none" (not registered), "ok", "stale", "missing-binary", or an
// error text; detail is the file.
func inspectPart(h Host, o Options, kind string) (string, string) {
	var p *part
	for _, x := range partsFor(h, o) {
		if x.kind == kind {
			p = &x
			break
		}
	}
	if p == nil {
		return "none", ""
	}
	src, err := os.ReadFile(p.path)
	if err != nil {
		return "none", p.path
	}
	out, del, err := p.apply(src, true, false)
	if err != nil {
		return fmt.Sprintf("%s cannot be read as %s: %v", p.path, kind, err), p.path
	}
	if !del && bytes.Equal(out, src) {
		return "none", p.path
	}
	for _, bin := range append(binariesIn(src), o.Omni) {
		for _, rw := range []bool{false, true} {
			v := o
			v.Omni, v.Rewrite, v.HookOnly, v.MCPOnly = bin, rw, false, false
			for _, q := range partsFor(h, v) {
				if q.kind != kind {
					continue
				}
				out, del, err := q.apply(src, true, true)
				if err == nil && !del && bytes.Equal(out, src) {
					if !filepath.IsAbs(bin) {
						// A bare name (a committed hooks file runs omni from PATH).
						if p, err := exec.LookPath(bin); err == nil {
							bin = p
						}
					}
					if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 && !strings.EqualFold(filepath.Ext(bin), ".exe") {
						return "missing-binary", p.path
					}
					return "ok", p.path
				}
			}
		}
	}
	return "stale", p.path
}

// Fix re-registers, as omni init would, every host of rows (as Check
// returned them for o) whose registration is stale, incomplete, duplicated
// or runs a missing binary, keeping the kinds (hooks, MCP) and the rewrite
// that are registered; project is the project top level for the project
// scope. It returns what it did, one "ran 'omni init --HOST [--project]'"
// per repaired registration; a repair that fails is left out.
func Fix(o Options, rows []HostStatus, project string) []string {
	var did []string
	for i, row := range rows {
		for _, flag := range row.needsInit {
			h := AllHosts[i]
			ho := o
			ho.Project = ""
			if strings.HasSuffix(flag, "--project") {
				ho.Project = project
			}
			// Keep the kinds that are registered; keep a rewrite that is.
			hooksSt, _ := inspectPart(h, ho, "hooks")
			pluginSt, _ := inspectPart(h, ho, "plugin")
			mcpSt, _ := inspectPart(h, ho, "mcp")
			ho.MCPOnly = hooksSt == "none" && pluginSt == "none"
			ho.HookOnly = mcpSt == "none"
			hp, mp := hostPaths(h, ho)
			if src, err := os.ReadFile(hp); err == nil && h == Claude {
				ho.Rewrite = bytes.Contains(src, []byte(" pretool\""))
			}
			ho.Omni = fixBinary(o.Omni, hp, mp)
			// The variants let the backup logic recognise omni's own earlier
			// entries, so a later uninstall restores the user's file, not them.
			_, ops, err := runParts(partsFor(h, ho), true, ho.Project, func(path string) [][]part { return variantsFor(h, ho, path) })
			if err == nil {
				err = commit(ops)
			}
			if err == nil {
				fix := "ran '" + flag + "'"
				if !slices.Contains(did, fix) {
					did = append(did, fix)
				}
			}
		}
	}
	return did
}

// fixBinary picks the binary a repaired registration runs: one the files
// already name that still exists, else the omni on $PATH, else this one.
func fixBinary(self string, paths ...string) string {
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, b := range binariesIn(src) {
			if fi, err := os.Stat(b); err == nil && !fi.IsDir() && (fi.Mode()&0o111 != 0 || strings.EqualFold(filepath.Ext(b), ".exe")) && filepath.IsAbs(b) {
				return b
			}
		}
	}
	if p, err := exec.LookPath("omni"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return self
}

// shortPath writes p relative to home as ~/….
func shortPath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}

// rewriteRulesProblem reports a Claude Code settings file that registers
// the PreToolUse rewrite without the allow rules of its two added parts
// (removed by hand, or written by an older omni): outside bypass mode the
// hook then leaves every command as written, silently.
func rewriteRulesProblem(path, where, flag string, problem func(string, ...any)) {
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte(` pretool"`)) {
		return
	}
	hasFilter := false
	if v, err := DecodeJSONC(b); err == nil {
		if m, ok := v.(map[string]any); ok {
			if pm, ok := m["permissions"].(map[string]any); ok {
				allow, _ := pm["allow"].([]any)
				for _, a := range allow {
					if r, ok := a.(string); ok && isFilterRule(r) {
						hasFilter = true
					}
				}
			}
		}
	}
	if !hasFilter || !bytes.Contains(b, []byte(`"`+rewrite.PipefailRule+`"`)) {
		problem("Claude Code: %s registers the PreToolUse rewrite without the allow rules of its added parts (%s, Bash(OMNI pipe:*)): outside bypass mode it leaves every command as written; run '%s'",
			where, rewrite.PipefailRule, flag)
	}
}
