package main

// omni init: register omni with agent hosts, where each host reads its
// registration (HOSTS.md §1.1, §2, §3, §4, §11). Every edit inserts or
// removes only omni's own entries and keeps the rest of the file byte for
// byte; a file is backed up once before omni first changes it; a second run
// with the same flags changes nothing; --uninstall gives back the original
// bytes when nothing else changed since, else removes only omni's entries.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/shellcmd"
)

// backupSuffix names the one backup kept of every file omni init changes.
const backupSuffix = ".omni-backup"

// pluginSource is the OpenCode plugin shim; __OMNI_BIN__ becomes the path of
// the omni binary.
//
//go:embed plugin/omni.js
var pluginSource string

// pluginMarker starts every plugin file omni writes; a file without it is
// not omni's and is never overwritten or removed.
const pluginMarker = "// omni: OpenCode plugin shim"

// hostKind names one supported host.
type hostKind string

const (
	hostClaude   hostKind = "claude"
	hostCodex    hostKind = "codex"
	hostGemini   hostKind = "gemini"
	hostOpenCode hostKind = "opencode"
)

// allHosts in the order they are set up and printed.
var allHosts = []hostKind{hostClaude, hostCodex, hostGemini, hostOpenCode}

// hostNames are the names printed for each host.
var hostNames = map[hostKind]string{
	hostClaude: "Claude Code", hostCodex: "Codex CLI", hostGemini: "Gemini CLI", hostOpenCode: "OpenCode",
}

// hostTiers is what each host makes of omni's reply (HOSTS.md §9).
var hostTiers = map[hostKind]string{
	hostClaude: "Full", hostCodex: "Full-text-only", hostGemini: "Full", hostOpenCode: "Plugin",
}

// initOptions are the resolved flags of one omni init run.
type initOptions struct {
	omni       string // absolute path of the binary the registration runs
	home       string // the user's home directory
	configHome string // $XDG_CONFIG_HOME or ~/.config
	codexHome  string // $CODEX_HOME or ~/.codex
	project    string // project top level, with --project
	hookOnly   bool
	mcpOnly    bool
	rewrite    bool
}

// hookEntry is one hook registration omni writes.
type hookEntry struct {
	event   string
	matcher string // "" writes no matcher
	sub     string // the omni subcommand: "hook" or "pretool"
	timeout int    // in the host's unit; 0 writes none
	async   bool
}

// claudeEntries are Claude Code's registrations (HOSTS.md §1.1, §1.10):
// every tool omni rewrites in the PostToolUse matcher, one handler per
// event, never async where a reply matters.
func claudeEntries(rewrite bool) []hookEntry {
	es := []hookEntry{
		{event: "PostToolUse", matcher: "Bash|Read|Grep|Glob|WebFetch", sub: "hook", timeout: 30},
		{event: "PostToolUseFailure", matcher: "Bash", sub: "hook", timeout: 10, async: true},
		{event: "PreCompact", sub: "hook", timeout: 10},
		{event: "PostCompact", sub: "hook", timeout: 10},
		{event: "SessionStart", sub: "hook", timeout: 10},
		{event: "SessionEnd", sub: "hook", timeout: 10},
		{event: "SubagentStart", sub: "hook", timeout: 10},
	}
	if rewrite {
		es = append([]hookEntry{{event: "PreToolUse", matcher: "Bash", sub: "pretool", timeout: 10}}, es...)
	}
	return es
}

// codexEntries: Codex reports shell tools as "Bash"; its hooks.json is
// Claude-compatible (HOSTS.md §2).
var codexEntries = []hookEntry{
	{event: "PostToolUse", matcher: "Bash", sub: "hook", timeout: 30},
	{event: "PreCompact", sub: "hook", timeout: 10},
	{event: "PostCompact", sub: "hook", timeout: 10},
	{event: "SessionStart", sub: "hook", timeout: 10},
	{event: "SubagentStart", sub: "hook", timeout: 10},
}

// geminiEntries: Gemini's own tool names and event names; timeouts in
// milliseconds (HOSTS.md §3).
var geminiEntries = []hookEntry{
	{event: "AfterTool", matcher: "run_shell_command|read_file|read_many_files|search_file_content|grep_search|glob|web_fetch", sub: "hook", timeout: 30000},
	{event: "PreCompress", sub: "hook", timeout: 10000},
	{event: "SessionStart", sub: "hook", timeout: 10000},
	{event: "SessionEnd", sub: "hook", timeout: 10000},
}

// part is one registration in one file.
type part struct {
	kind string // "hooks", "mcp" or "plugin"
	path string
	// apply returns the new content of the file (del: remove the file).
	apply func(src []byte, exists, install bool) (out []byte, del bool, err error)
}

// hostPaths returns where a host reads omni's hook (or plugin) and MCP
// registration, user or project scope.
func hostPaths(h hostKind, o initOptions) (hookPath, mcpPath string) {
	p := o.project
	switch h {
	case hostClaude:
		if p != "" {
			return filepath.Join(p, ".claude", "settings.json"), filepath.Join(p, ".mcp.json")
		}
		return filepath.Join(o.home, ".claude", "settings.json"), filepath.Join(o.home, ".claude.json")
	case hostCodex:
		if p != "" {
			return filepath.Join(p, ".codex", "hooks.json"), filepath.Join(p, ".codex", "config.toml")
		}
		return filepath.Join(o.codexHome, "hooks.json"), filepath.Join(o.codexHome, "config.toml")
	case hostGemini:
		if p != "" {
			f := filepath.Join(p, ".gemini", "settings.json")
			return f, f
		}
		f := filepath.Join(o.home, ".gemini", "settings.json")
		return f, f
	case hostOpenCode:
		if p != "" {
			return filepath.Join(p, ".opencode", "plugins", "omni.js"), filepath.Join(p, "opencode.json")
		}
		return filepath.Join(o.configHome, "opencode", "plugins", "omni.js"), filepath.Join(o.configHome, "opencode", "opencode.json")
	}
	return "", ""
}

// partsFor lists the registrations of host h under o.
func partsFor(h hostKind, o initOptions) []part {
	hookPath, mcpPath := hostPaths(h, o)
	omni := o.omni
	var ps []part
	if !o.mcpOnly {
		switch h {
		case hostClaude:
			es := claudeEntries(o.rewrite)
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntries(src, es, omni, install)
			})})
		case hostCodex:
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntries(src, codexEntries, omni, install)
			})})
		case hostGemini:
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntries(src, geminiEntries, omni, install)
			})})
		case hostOpenCode:
			ps = append(ps, part{"plugin", hookPath, func(src []byte, exists, install bool) ([]byte, bool, error) {
				return applyPlugin(src, exists, install, omni, hookPath)
			}})
		}
	}
	if !o.hookOnly {
		switch h {
		case hostClaude:
			v := omap{{"type", "stdio"}, {"command", omni}, {"args", []string{"mcp"}}}
			ps = append(ps, part{"mcp", mcpPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})})
		case hostCodex:
			ps = append(ps, part{"mcp", mcpPath, func(src []byte, _, install bool) ([]byte, bool, error) {
				out := applyCodexTOML(src, omni, install)
				return out, false, nil
			}})
		case hostGemini:
			v := omap{{"command", omni}, {"args", []string{"mcp"}}}
			ps = append(ps, part{"mcp", mcpPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})})
		case hostOpenCode:
			v := omap{{"type", "local"}, {"command", []string{omni, "mcp"}}, {"enabled", true}}
			ps = append(ps, part{"mcp", mcpPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcp", v, omni, install)
			})})
		}
	}
	return ps
}

func jsonApply(f func(src []byte, install bool) ([]byte, error)) func([]byte, bool, bool) ([]byte, bool, error) {
	return func(src []byte, _, install bool) ([]byte, bool, error) {
		out, err := f(src, install)
		return out, false, err
	}
}

// fileResult is what happened (or, with --dry-run, would happen) to a file.
type fileResult struct {
	// Path is the file.
	Path string `json:"path"`
	// Action is created, updated, unchanged, removed (omni's entries
	// only), restored (the original bytes), deleted or absent.
	Action string `json:"action"`
	// Parts are the registrations the file holds: hooks, mcp, plugin.
	Parts []string `json:"parts"`
	// Backup is the backup written by this run, if any.
	Backup string `json:"backup,omitempty"`
	before []byte
	after  []byte
}

// runParts applies the parts of one host, file by file.
func runParts(ps []part, install, dry bool, variants func(path string) [][]part) ([]fileResult, error) {
	var order []string
	byPath := map[string][]part{}
	for _, p := range ps {
		if _, ok := byPath[p.path]; !ok {
			order = append(order, p.path)
		}
		byPath[p.path] = append(byPath[p.path], p)
	}
	var out []fileResult
	for _, path := range order {
		r, err := runFile(path, byPath[path], install, dry, variants)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func partKinds(ps []part) []string {
	var k []string
	for _, p := range ps {
		k = append(k, p.kind)
	}
	return k
}

// chain applies parts in order to one file's content.
func chain(ps []part, src []byte, exists, install bool) ([]byte, bool, error) {
	cur, del := src, false
	for _, p := range ps {
		out, d, err := p.apply(cur, exists && !del, install)
		if err != nil {
			return nil, false, err
		}
		cur, del = out, d
	}
	return cur, del, nil
}

func runFile(path string, ps []part, install, dry bool, variants func(path string) [][]part) (fileResult, error) {
	r := fileResult{Path: path, Parts: partKinds(ps)}
	src, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("read %s: %w", path, err)
	}
	r.before = src
	if !install && !exists {
		r.Action = "absent"
		return r, nil
	}
	out, del, err := chain(ps, src, exists, install)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	backup := path + backupSuffix
	if !install {
		// The original bytes come back when the file is exactly what
		// installing into them produced.
		if orig, origExists, ok := originalOf(path, src, variants(path)); ok {
			r.Action = "restored"
			out, del = orig, !origExists
			if !origExists {
				r.Action = "deleted"
			}
			r.after = out
			if dry {
				return r, nil
			}
			if del {
				err = os.Remove(path)
			} else {
				err = writeAtomic(path, out)
			}
			if err != nil {
				return r, err
			}
			if err := os.Remove(backup); err != nil && !errors.Is(err, os.ErrNotExist) {
				return r, err
			}
			return r, nil
		}
	}
	switch {
	case del && !exists, !del && exists && bytes.Equal(out, src):
		r.Action = "unchanged"
		return r, nil
	case del:
		r.Action = "deleted"
	case !exists:
		r.Action = "created"
	case install:
		r.Action = "updated"
	default:
		r.Action = "removed"
	}
	r.after = out
	if dry {
		return r, nil
	}
	// The backup keeps the file as it was before omni: a file that already
	// holds omni's entries (omni created it, or an install predates backups)
	// is not an original and is not backed up.
	if exists && install && !holdsOmni(src, variants(path)) {
		if _, err := os.Stat(backup); errors.Is(err, os.ErrNotExist) {
			if err := writeFileMode(backup, src, path); err != nil {
				return r, fmt.Errorf("backup %s: %w", path, err)
			}
			r.Backup = backup
		}
	}
	if del {
		if err := os.Remove(path); err != nil {
			return r, err
		}
		return r, nil
	}
	return r, writeAtomic(path, out)
}

// originalOf reports the content a file had before omni wrote it (its
// backup, else "absent") when installing into that content with some set
// of omni's parts gives exactly the current bytes.
func originalOf(path string, cur []byte, variants [][]part) ([]byte, bool, bool) {
	orig, err := os.ReadFile(path + backupSuffix)
	origExists := err == nil
	if origExists && holdsOmni(orig, variants) {
		return nil, false, false
	}
	for _, ps := range variants {
		out, del, err := chain(ps, orig, origExists, true)
		if err == nil && !del && bytes.Equal(out, cur) {
			return orig, origExists, true
		}
	}
	return nil, false, false
}

// holdsOmni reports whether src holds any of omni's entries.
func holdsOmni(src []byte, variants [][]part) bool {
	for _, ps := range variants {
		out, del, err := chain(ps, src, true, false)
		if err == nil && (del || !bytes.Equal(out, src)) {
			return true
		}
	}
	return false
}

// writeAtomic replaces path with data through a temporary file, keeping the
// mode of the file it replaces (0644 for a new one). A symlinked path (a
// dotfiles repository) is followed: its target is rewritten and the link
// stays a link.
func writeAtomic(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".omni-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), mode)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileMode writes data to path with the mode of like.
func writeFileMode(path string, data []byte, like string) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(like); err == nil {
		mode = fi.Mode().Perm()
	}
	return os.WriteFile(path, data, mode)
}

// ---- the Claude-compatible hooks object (Claude Code, Codex, Gemini) ----

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
	for {
		root, _ := parseJSONC(src)
		hm := root.member("hooks")
		if hm == nil {
			break
		}
		edited := false
		for i, m := range hm.val.members {
			if _, w := want[m.key]; touched[m.key] && !w && m.val.kind == '[' && len(m.val.elems) == 0 {
				src = removeItem(src, hm.val, i)
				edited = true
				break
			}
		}
		if !edited {
			break
		}
	}
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
	if hb := hookBinary(omni); hb != "" && e.sub == "hook" {
		cmd = shellcmd.Quote(hb) // the thin client: the same hook, started faster
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
			if isOmniCommand(cm.val.str(src), omni, subs...) {
				out = append(out, handlerPos{group: gi, list: hm.val, index: hi, sole: len(hm.val.elems) == 1})
			}
		}
	}
	return out
}

// hookBinaryName is the thin hook client (cmd/omni-hook): `omni init`
// registers it in place of `omni hook` when it sits beside the omni binary.
const hookBinaryName = "omni-hook"

// hookBinary returns the thin hook client beside the omni binary, or "".
func hookBinary(omni string) string {
	if omni == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(omni), hookBinaryName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// isOmniCommand reports whether a shell command line runs omni (its base
// name, or the binary path) with one of subs as its subcommand, or runs the
// thin hook client (omni-hook) and subs holds "hook".
func isOmniCommand(cmd, omni string, subs ...string) bool {
	w := shellcmd.Split(cmd)
	i := 0
	for i < len(w) && strings.Contains(w[i], "=") && !strings.Contains(w[i], "/") {
		i++
	}
	if i < len(w) && filepath.Base(w[i]) == hookBinaryName {
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

// ---- MCP server entries ----

// applyMCPEntry installs (or removes) the MCP server "omni" in the object
// container of a JSON settings file. Any other server running omni's mcp
// subcommand is a duplicate and is removed.
func applyMCPEntry(src []byte, container string, value any, omni string, install bool) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		if !install {
			return src, nil
		}
		return renderNew(omap{{container, omap{{"omni", value}}}})
	}
	removed, kept := false, false
	for {
		root, err := parseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.kind != '{' {
			return nil, errors.New("the file is not a JSON object")
		}
		cm := root.member(container)
		if cm == nil {
			break
		}
		if cm.val.kind != '{' {
			return nil, fmt.Errorf("%q is not an object", container)
		}
		kept = false
		edited := false
		for i, m := range cm.val.members {
			ours := isOmniServer(src, m.val, omni)
			if !ours && !(install && m.key == "omni") {
				continue
			}
			if install && m.key == "omni" && !kept && equalJSON(src[m.val.start:m.val.end], value) {
				kept = true
				continue
			}
			src = removeItem(src, cm.val, i)
			removed, edited = true, true
			break
		}
		if !edited {
			break
		}
	}
	root, _ := parseJSONC(src)
	cm := root.member(container)
	switch {
	case install && !kept && cm == nil:
		src = insertMember(src, root, container, omap{{"omni", value}})
	case install && !kept:
		src = insertMember(src, cm.val, "omni", value)
	case !install && removed && cm != nil && len(cm.val.members) == 0:
		src = removeItem(src, root, root.index(container))
	}
	return src, nil
}

// isOmniServer reports an MCP server entry that runs omni's mcp subcommand:
// {"command": OMNI, "args": ["mcp"]} or {"command": [OMNI, "mcp"]}.
func isOmniServer(src []byte, v *jnode, omni string) bool {
	if v.kind != '{' {
		return false
	}
	var s struct {
		Command json.RawMessage `json:"command"`
		Args    []string        `json:"args"`
	}
	if json.Unmarshal(src[v.start:v.end], &s) != nil {
		return false
	}
	var prog string
	var list []string
	if json.Unmarshal(s.Command, &prog) == nil {
		return isOmniProgram(prog, omni) && len(s.Args) > 0 && s.Args[0] == "mcp"
	}
	if json.Unmarshal(s.Command, &list) == nil && len(list) >= 2 {
		return isOmniProgram(list[0], omni) && list[1] == "mcp"
	}
	return false
}

// ---- Codex config.toml ----

var tomlHeader = regexp.MustCompile(`^\s*\[\s*([^\]]*?)\s*\]\s*(#.*)?$`)

// codexBlock renders omni's [mcp_servers.omni] table.
func codexBlock(omni string) string {
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(omni)
	return "[mcp_servers.omni]\ncommand = \"" + q + "\"\nargs = [\"mcp\"]\n"
}

// applyCodexTOML installs (or removes) the [mcp_servers.omni] table (and its
// sub-tables) of a Codex config.toml, as text: the rest of the file is kept
// byte for byte. The table is complete on its own, so Codex never sees a
// sub-table without its parent.
func applyCodexTOML(src []byte, omni string, install bool) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	isOurs := func(name string) bool {
		name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
		return name == "mcp_servers.omni" || strings.HasPrefix(name, "mcp_servers.omni.")
	}
	start, end := -1, -1
	for i, l := range lines {
		m := tomlHeader.FindStringSubmatch(strings.TrimRight(l, "\r\n"))
		if m == nil {
			continue
		}
		if start < 0 && isOurs(m[1]) {
			start = i
			continue
		}
		if start >= 0 && !isOurs(m[1]) {
			end = i
			break
		}
	}
	if start >= 0 && end < 0 {
		end = len(lines)
	}
	for start >= 0 && end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	want := codexBlock(omni)
	if install {
		if start >= 0 {
			if strings.Join(lines[start:end], "") == want {
				return src
			}
			return []byte(strings.Join(lines[:start], "") + want + strings.Join(lines[end:], ""))
		}
		s := string(src)
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		return []byte(s + want)
	}
	if start < 0 {
		return src
	}
	before := lines[:start]
	if len(before) > 0 && strings.TrimSpace(before[len(before)-1]) == "" {
		before = before[:len(before)-1]
	}
	out := strings.Join(before, "") + strings.Join(lines[end:], "")
	if strings.TrimSpace(out) == "" {
		return nil
	}
	return []byte(out)
}

// ---- the OpenCode plugin shim ----

// pluginFor renders the plugin shim for the binary omni.
func pluginFor(omni string) []byte {
	js, _ := json.Marshal(omni)
	// json.Marshal escapes <, > and & as \u003c…, which is also valid JS.
	return []byte(strings.Replace(pluginSource, `"__OMNI_BIN__"`, string(js), 1))
}

func applyPlugin(src []byte, exists, install bool, omni, path string) ([]byte, bool, error) {
	ours := exists && bytes.HasPrefix(src, []byte(pluginMarker))
	if install {
		if exists && !ours {
			return nil, false, fmt.Errorf("%s exists and was not written by omni; move it away first", path)
		}
		return pluginFor(omni), false, nil
	}
	if !ours {
		return src, !exists, nil
	}
	return nil, true, nil
}

// ---- a JSON (with comments) editor that keeps formatting ----

// jnode is one parsed JSON value with its byte span in the source.
type jnode struct {
	kind       byte // '{' object, '[' array, '"' string, '0' other scalar
	start, end int
	members    []jmember
	elems      []*jnode
}

// jmember is one key of an object.
type jmember struct {
	key              string
	keyStart, keyEnd int
	val              *jnode
}

func (n *jnode) member(key string) *jmember {
	if i := n.index(key); i >= 0 {
		return &n.members[i]
	}
	return nil
}

func (n *jnode) index(key string) int {
	if n == nil {
		return -1
	}
	for i := range n.members {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

func (n *jnode) str(src []byte) string {
	var s string
	_ = json.Unmarshal(src[n.start:n.end], &s)
	return s
}

// errEmptyJSON: the source holds no JSON value.
var errEmptyJSON = errors.New("no JSON value")

type jparser struct {
	src []byte
	pos int
}

// parseJSONC parses one JSON value; // and /* */ comments count as blanks.
func parseJSONC(src []byte) (*jnode, error) {
	p := &jparser{src: src}
	if err := p.blank(); err != nil {
		return nil, err
	}
	if p.pos >= len(src) {
		return nil, errEmptyJSON
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.blank(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errf("text after the JSON value")
	}
	return n, nil
}

func (p *jparser) errf(format string, a ...any) error {
	line := 1 + bytes.Count(p.src[:min(p.pos, len(p.src))], []byte("\n"))
	return fmt.Errorf("not valid JSON at line %d: %s", line, fmt.Sprintf(format, a...))
}

func (p *jparser) blank() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			i := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errf("unterminated comment")
			}
			p.pos += i + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value(depth int) (*jnode, error) {
	if depth > 256 {
		return nil, p.errf("nested too deep")
	}
	if p.pos >= len(p.src) {
		return nil, p.errf("unexpected end")
	}
	n := &jnode{start: p.pos}
	switch p.src[p.pos] {
	case '{':
		n.kind = '{'
		p.pos++
		if err := p.blank(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				return nil, p.errf("expected a key")
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return nil, p.errf("expected ':'")
			}
			p.pos++
			if err := p.blank(); err != nil {
				return nil, err
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jmember{key: k.str(p.src), keyStart: k.start, keyEnd: k.end, val: v})
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) {
				return nil, p.errf("unexpected end")
			}
			switch p.src[p.pos] {
			case ',':
				p.pos++
			case '}':
				p.pos++
				n.end = p.pos
				return n, nil
			default:
				return nil, p.errf("expected ',' or '}'")
			}
		}
	case '[':
		n.kind = '['
		p.pos++
		if err := p.blank(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		for {
			if err := p.blank(); err != nil {
				return nil, err
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			if err := p.blank(); err != nil {
				return nil, err
			}
			if p.pos >= len(p.src) {
				return nil, p.errf("unexpected end")
			}
			switch p.src[p.pos] {
			case ',':
				p.pos++
			case ']':
				p.pos++
				n.end = p.pos
				return n, nil
			default:
				return nil, p.errf("expected ',' or ']'")
			}
		}
	case '"':
		n.kind = '"'
		i := p.pos + 1
		for i < len(p.src) && p.src[i] != '"' {
			if p.src[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(p.src) {
			return nil, p.errf("unterminated string")
		}
		p.pos = i + 1
	default:
		n.kind = '0'
		for p.pos < len(p.src) && !strings.ContainsRune(",]}/ \t\r\n", rune(p.src[p.pos])) {
			p.pos++
		}
	}
	n.end = p.pos
	if !json.Valid(p.src[n.start:n.end]) {
		p.pos = n.start
		return nil, p.errf("bad value %.20q", p.src[n.start:n.end])
	}
	return n, nil
}

// kv and omap render objects with their keys in order.
type kv struct {
	k string
	v any
}

type omap []kv

// MarshalJSON renders the object with its keys in order.
func (m omap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := encodeJSON(e.k, "", "")
		if err != nil {
			return nil, err
		}
		v, err := encodeJSON(e.v, "", "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSON renders v without HTML escaping, indented when unit != "".
func encodeJSON(v any, prefix, unit string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// renderNew renders a new file: two-space indent, final newline.
func renderNew(v any) ([]byte, error) {
	b, err := encodeJSON(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// equalJSON reports whether raw holds the same JSON value as v.
func equalJSON(raw []byte, v any) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil {
		return false
	}
	enc, err := encodeJSON(v, "", "")
	if err != nil || json.Unmarshal(enc, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func splice(src []byte, a, b int, text string) []byte {
	out := make([]byte, 0, len(src)-(b-a)+len(text))
	out = append(out, src[:a]...)
	out = append(out, text...)
	return append(out, src[b:]...)
}

// lineIndent returns the blanks that start the line holding pos.
func lineIndent(src []byte, pos int) string {
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	e := ls
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[ls:e])
}

// indentUnit guesses one level of indentation: the blanks before the first
// key of the top-level object when it sits on its own line, else two spaces.
func indentUnit(src []byte) string {
	root, err := parseJSONC(src)
	if err == nil && root.kind == '{' && len(root.members) > 0 {
		k := root.members[0].keyStart
		if bytes.IndexByte(src[root.start:k], '\n') >= 0 {
			if ind := lineIndent(src, k); ind != "" {
				return ind
			}
		}
	}
	return "  "
}

// items returns the spans of an object's members or an array's elements.
func (n *jnode) items() [][2]int {
	var s [][2]int
	for _, m := range n.members {
		s = append(s, [2]int{m.keyStart, m.val.end})
	}
	for _, e := range n.elems {
		s = append(s, [2]int{e.start, e.end})
	}
	return s
}

// removeItem removes item i of an object or array with the comma and
// blanks that separate it from its neighbour.
func removeItem(src []byte, n *jnode, i int) []byte {
	it := n.items()
	switch {
	case len(it) == 1:
		return splice(src, n.start+1, n.end-1, "")
	case i < len(it)-1:
		return splice(src, it[i][0], it[i+1][0], "")
	default:
		return splice(src, it[i-1][1], it[i][1], "")
	}
}

// insertMember adds key: v at the end of object n, in the style of its
// neighbours (or of the file, for an empty object).
func insertMember(src []byte, n *jnode, key string, v any) []byte {
	k, _ := encodeJSON(key, "", "")
	return insertItem(src, n, string(k), v)
}

// appendElem adds v at the end of array n.
func appendElem(src []byte, n *jnode, v any) []byte {
	return insertItem(src, n, "", v)
}

func insertItem(src []byte, n *jnode, key string, v any) []byte {
	unit := indentUnit(src)
	colon := ": "
	if len(n.members) > 0 {
		m := n.members[0]
		if c := src[m.keyEnd:m.val.start]; !bytes.ContainsAny(c, "\n/") {
			colon = string(c)
		}
	}
	head := func() string {
		if key == "" {
			return ""
		}
		return key + colon
	}
	it := n.items()
	if len(it) > 0 {
		last := it[len(it)-1]
		if bytes.IndexByte(src[n.start:n.end], '\n') >= 0 {
			ind := lineIndent(src, last[0])
			val, _ := encodeJSON(v, ind, unit)
			return splice(src, last[1], last[1], ",\n"+ind+head()+string(val))
		}
		sep := ", "
		if len(it) > 1 {
			if s := src[it[0][1]:it[1][0]]; !bytes.ContainsAny(s, "\n/") {
				sep = string(s)
			}
		} else if colon == ":" {
			sep = ","
		}
		val, _ := encodeJSON(v, "", "")
		return splice(src, last[1], last[1], sep+head()+string(val))
	}
	if bytes.IndexByte(src, '\n') >= 0 && bytes.IndexByte(bytes.TrimSpace(src), '\n') >= 0 {
		pind := lineIndent(src, n.start)
		ind := pind + unit
		val, _ := encodeJSON(v, ind, unit)
		return splice(src, n.start+1, n.end-1, "\n"+ind+head()+string(val)+"\n"+pind)
	}
	val, _ := encodeJSON(v, "", "")
	if key != "" {
		return splice(src, n.start+1, n.end-1, key+":"+string(val))
	}
	return splice(src, n.start+1, n.end-1, string(val))
}

// ---- host detection, the command ----

// hostDirs are the directories whose presence says a host is installed.
func hostDirs(h hostKind, o initOptions) []string {
	if o.project != "" {
		switch h {
		case hostClaude:
			return []string{filepath.Join(o.project, ".claude")}
		case hostCodex:
			return []string{filepath.Join(o.project, ".codex")}
		case hostGemini:
			return []string{filepath.Join(o.project, ".gemini")}
		case hostOpenCode:
			return []string{filepath.Join(o.project, ".opencode"), filepath.Join(o.project, "opencode.json")}
		}
	}
	switch h {
	case hostClaude:
		return []string{filepath.Join(o.home, ".claude"), filepath.Join(o.home, ".claude.json")}
	case hostCodex:
		return []string{o.codexHome}
	case hostGemini:
		return []string{filepath.Join(o.home, ".gemini")}
	case hostOpenCode:
		return []string{filepath.Join(o.configHome, "opencode")}
	}
	return nil
}

func hostPresent(h hostKind, o initOptions) bool {
	for _, d := range hostDirs(h, o) {
		if _, err := os.Stat(d); err == nil {
			return true
		}
	}
	return false
}

// hostRegistered reports whether any of h's files holds an omni entry.
func hostRegistered(h hostKind, o initOptions) bool {
	for _, p := range partsFor(h, o) {
		src, err := os.ReadFile(p.path)
		if err != nil {
			continue
		}
		out, del, err := p.apply(src, true, false)
		if err == nil && (del || !bytes.Equal(out, src)) {
			return true
		}
	}
	return false
}

// defaultOptions fills the paths of initOptions from the environment.
func defaultOptions() (initOptions, error) {
	var o initOptions
	home, err := os.UserHomeDir()
	if err != nil {
		return o, fmt.Errorf("home directory: %w", err)
	}
	o.home = home
	o.configHome = os.Getenv("XDG_CONFIG_HOME")
	if o.configHome == "" {
		o.configHome = filepath.Join(home, ".config")
	}
	o.codexHome = os.Getenv("CODEX_HOME")
	if o.codexHome == "" {
		o.codexHome = filepath.Join(home, ".codex")
	}
	o.omni, err = os.Executable()
	if err != nil {
		return o, fmt.Errorf("locate the omni binary: %w", err)
	}
	return o, nil
}

// hostFlagHelp lists the host flags, for refusals.
const hostFlagHelp = `  --claude     Claude Code (~/.claude/settings.json, ~/.claude.json)
  --codex      Codex CLI ($CODEX_HOME/hooks.json, config.toml)
  --gemini     Gemini CLI (~/.gemini/settings.json)
  --opencode   OpenCode (~/.config/opencode/plugins/omni.js, opencode.json)
  --all        all four`

func newInitCmd(s streams) *cobra.Command {
	var claude, codex, gemini, opencode, all, uninstall, hookOnly, mcpOnly, dry, project, rewrite, asJSON bool
	var bin string
	cmd := &cobra.Command{
		Use:   "init [--claude|--codex|--gemini|--opencode|--all] [flags]",
		Short: "Register omni's hooks and MCP server with agent hosts",
		Long: `Writes omni's registration where each host reads it:

  Claude Code  hooks in ~/.claude/settings.json (--project: .claude/settings.json):
               PostToolUse (Bash|Read|Grep|Glob|WebFetch), PostToolUseFailure,
               PreCompact, PostCompact, SessionStart, SessionEnd, SubagentStart;
               MCP server in ~/.claude.json (--project: .mcp.json).
  Codex CLI    hooks in $CODEX_HOME/hooks.json (default ~/.codex; --project:
               .codex/hooks.json); MCP [mcp_servers.omni] in config.toml.
               Codex runs a new or changed hook only after you approve it:
               start codex and approve omni under "Hooks need review".
               Codex applies a replacement only as {"decision":"block",
               "reason":TEXT}: some versions show it as a blocked or failed call
               although the model reads the shortened text.
  Gemini CLI   hooks (AfterTool on Gemini's own tool names, PreCompress,
               SessionStart, SessionEnd; timeouts in milliseconds) and
               mcpServers in ~/.gemini/settings.json (--project: .gemini/).
               The reply is hookSpecificOutput.tool_output.
  OpenCode     a plugin shim, ~/.config/opencode/plugins/omni.js (--project:
               .opencode/plugins/), that runs 'omni hook' after each tool call
               and assigns the shortened text; MCP in opencode.json "mcp".

Only omni's own entries are inserted or removed; other keys, hooks and the
file's formatting stay as they were. Omni's entries are recognised by program
(omni) and subcommand, so an older or duplicate registration is replaced,
never doubled. Before omni first changes a file it copies it to
FILE.omni-backup (once). Running init again with the same flags changes
nothing. --uninstall restores the original bytes when the file was not
changed since, else removes only omni's entries.

Without a host flag, init sets up the one host found on this machine (or,
with --uninstall, every host omni is registered with), and refuses when it
cannot tell.

--rewrite (Claude Code only) also registers 'omni pretool' for PreToolUse:
plain commands of known programs are rewritten to 'omni exec ...'. Opt-in:
the host replaces the whole tool input, permission rules then see the
rewritten command, and it is never auto-allowed.

Exit codes: 0 done (or nothing to do); 1 a file could not be read, parsed or
written; 2 usage error, or the host could not be told.`,
		Example: `  omni init --claude
  omni init --all --dry-run
  omni init --gemini --project --hook-only
  omni init --claude --uninstall`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hookOnly && mcpOnly {
				return &exitError{code: 2, msg: "omni init: --hook-only and --mcp-only exclude each other"}
			}
			o, err := defaultOptions()
			if err != nil {
				return &exitError{code: 1, msg: "omni init: " + err.Error()}
			}
			if bin != "" {
				if filepath.Base(bin) == hookBinaryName {
					return &exitError{code: 2, msg: "omni init: --bin names the omni binary; omni-hook is registered for the hooks on its own when it sits beside it"}
				}
				if o.omni, err = filepath.Abs(bin); err != nil {
					return &exitError{code: 2, msg: "omni init: --bin: " + err.Error()}
				}
			}
			o.hookOnly, o.mcpOnly, o.rewrite = hookOnly, mcpOnly, rewrite
			if project {
				wd, err := os.Getwd()
				if err != nil {
					return &exitError{code: 1, msg: "omni init: " + err.Error()}
				}
				o.project = projectOf(wd)
			}
			var hosts []hostKind
			sel := map[hostKind]bool{hostClaude: claude, hostCodex: codex, hostGemini: gemini, hostOpenCode: opencode}
			for _, h := range allHosts {
				if all || sel[h] {
					hosts = append(hosts, h)
				}
			}
			if len(hosts) == 0 {
				var found []hostKind
				for _, h := range allHosts {
					if (uninstall && hostRegistered(h, o)) || (!uninstall && hostPresent(h, o)) {
						found = append(found, h)
					}
				}
				switch {
				case uninstall && len(found) == 0:
					fmt.Fprintln(s.Out, "omni is not registered with any host; nothing to do")
					return nil
				case uninstall, len(found) == 1:
					hosts = found
				default:
					var names []string
					for _, h := range found {
						names = append(names, hostNames[h])
					}
					why := "no host found"
					if len(found) > 1 {
						why = "found " + strings.Join(names, ", ")
					}
					return &exitError{code: 2, msg: "omni init: cannot tell which host to set up (" + why + "); pass one or more of:\n" + hostFlagHelp}
				}
			}
			if rewrite && !slicesContains(hosts, hostClaude) {
				return &exitError{code: 2, msg: "omni init: --rewrite is for Claude Code only (add --claude)"}
			}
			return runInit(s.Out, hosts, o, !uninstall, dry, asJSON)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&claude, "claude", false, "set up Claude Code")
	f.BoolVar(&codex, "codex", false, "set up Codex CLI")
	f.BoolVar(&gemini, "gemini", false, "set up Gemini CLI")
	f.BoolVar(&opencode, "opencode", false, "set up OpenCode")
	f.BoolVar(&all, "all", false, "set up all four hosts")
	f.BoolVar(&uninstall, "uninstall", false, "remove omni's registration (restores the original bytes when nothing else changed)")
	f.BoolVar(&hookOnly, "hook-only", false, "hooks (or the OpenCode plugin) only, no MCP server")
	f.BoolVar(&mcpOnly, "mcp-only", false, "the MCP server only, no hooks")
	f.BoolVar(&dry, "dry-run", false, "print what would change and write nothing")
	f.BoolVar(&project, "project", false, "write the project's files (repository top level) instead of the user's")
	f.BoolVar(&rewrite, "rewrite", false, "Claude Code: also rewrite plain Bash commands to 'omni exec' in PreToolUse (opt-in)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	f.StringVar(&bin, "bin", "", "path of the omni binary the registration runs (default: this binary); an omni-hook beside it is registered for the hooks")
	return cmd
}

func slicesContains(hs []hostKind, h hostKind) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// initReport is the --json output of omni init.
type initReport struct {
	// Host and Tier name the host and what it makes of omni's reply.
	Host string `json:"host"`
	Tier string `json:"tier"`
	// Files lists what happened to each file.
	Files []fileResult `json:"files"`
	// Notes are the steps the host needs beyond its files.
	Notes []string `json:"notes,omitempty"`
}

// runInit installs (or uninstalls) the hosts and prints one line per file.
func runInit(w io.Writer, hosts []hostKind, o initOptions, install, dry, asJSON bool) error {
	var reports []initReport
	var failed error
	for _, h := range hosts {
		ho := o
		if h != hostClaude {
			ho.rewrite = false
		}
		ps := partsFor(h, ho)
		res, err := runParts(ps, install, dry, func(path string) [][]part { return variantsFor(h, ho, path) })
		rep := initReport{Host: hostNames[h], Tier: hostTiers[h], Files: res}
		changed := false
		for _, f := range res {
			changed = changed || (f.Action != "unchanged" && f.Action != "absent")
			if f.Action == "removed" {
				if _, err := os.Stat(f.Path + backupSuffix); err == nil {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s changed since omni's install, so only omni's entries were removed; the copy from before the install stays in %s", f.Path, f.Path+backupSuffix))
				}
			}
		}
		if install && changed {
			rep.Notes = append(rep.Notes, hostNotes(h, ho)...)
		}
		reports = append(reports, rep)
		if err != nil {
			failed = err
			break
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(reports, "", "  ")
		fmt.Fprintln(w, string(b))
	} else {
		for _, r := range reports {
			fmt.Fprintf(w, "%s (%s):\n", r.Host, r.Tier)
			for _, f := range r.Files {
				verb := f.Action
				if dry && verb != "unchanged" && verb != "absent" {
					verb = "would be " + verb
				}
				fmt.Fprintf(w, "  %-10s %s (%s)\n", verb, f.Path, strings.Join(f.Parts, ", "))
				if f.Backup != "" {
					fmt.Fprintf(w, "  %-10s %s\n", "backup", f.Backup)
				}
				if dry && verb != "unchanged" && verb != "absent" {
					for _, l := range lineDiff(f.before, f.after) {
						fmt.Fprintf(w, "    %s\n", l)
					}
				}
			}
			for _, n := range r.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
		}
	}
	if failed != nil {
		return &exitError{code: 1, msg: "omni init: " + failed.Error()}
	}
	return nil
}

// variantsFor lists the part sets an install may have written to path: any
// binary named in the file, with and without --rewrite, hooks and MCP alone
// or together, never more kinds than o asks for (an --mcp-only uninstall
// must not take the hooks away by restoring the backup).
func variantsFor(h hostKind, o initOptions, path string) [][]part {
	asked := map[string]bool{}
	for _, p := range partsFor(h, o) {
		if p.path == path {
			asked[p.kind] = true
		}
	}
	bins := []string{o.omni}
	if src, err := os.ReadFile(path); err == nil {
		for _, b := range binariesIn(src) {
			if !slicesContainsString(bins, b) {
				bins = append(bins, b)
			}
		}
	}
	var out [][]part
	for _, bin := range bins {
		for _, rw := range []bool{false, true} {
			if rw && h != hostClaude {
				continue
			}
			for _, only := range []int{0, 1, 2} {
				v := o
				v.omni, v.rewrite = bin, rw
				v.hookOnly, v.mcpOnly = only == 1, only == 2
				var ps []part
				subset := true
				for _, p := range partsFor(h, v) {
					if p.path == path {
						ps = append(ps, p)
						subset = subset && asked[p.kind]
					}
				}
				if len(ps) > 0 && subset {
					out = append(out, ps)
				}
			}
		}
	}
	return out
}

func slicesContainsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var (
	reJSONCommand = regexp.MustCompile(`"command"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	reJSONArray   = regexp.MustCompile(`"command"\s*:\s*\[\s*"((?:[^"\\]|\\.)*)"`)
	reTOMLCommand = regexp.MustCompile(`(?m)^\s*command\s*=\s*"((?:[^"\\]|\\.)*)"`)
	rePluginBin   = regexp.MustCompile(`process\.env\.OMNI_BIN \|\| ("(?:[^"\\]|\\.)*")`)
)

// binariesIn returns the omni binaries (programs named omni) a registration
// file names.
func binariesIn(src []byte) []string {
	var out []string
	add := func(quoted string, shell bool) {
		var s string
		if json.Unmarshal([]byte(`"`+quoted+`"`), &s) != nil {
			return
		}
		if shell {
			w := shellcmd.Split(s)
			switch {
			case len(w) >= 1 && filepath.Base(w[0]) == hookBinaryName:
				s = w[0]
			case len(w) < 2 || (w[1] != "hook" && w[1] != "pretool"):
				return
			default:
				s = w[0]
			}
		}
		if filepath.Base(s) == hookBinaryName { // the thin client stands for the omni beside it
			s = filepath.Join(filepath.Dir(s), "omni")
		}
		if filepath.Base(s) == "omni" && !slicesContainsString(out, s) {
			out = append(out, s)
		}
	}
	for _, m := range reJSONCommand.FindAllSubmatch(src, -1) {
		add(string(m[1]), true)
		add(string(m[1]), false)
	}
	for _, m := range reJSONArray.FindAllSubmatch(src, -1) {
		add(string(m[1]), false)
	}
	for _, m := range reTOMLCommand.FindAllSubmatch(src, -1) {
		add(string(m[1]), false)
	}
	if m := rePluginBin.FindSubmatch(src); m != nil {
		add(string(m[1][1:len(m[1])-1]), false)
	}
	return out
}

// hostNotes are the steps a host needs beyond its files.
func hostNotes(h hostKind, o initOptions) []string {
	var n []string
	switch h {
	case hostClaude:
		if !o.hookOnly {
			n = append(n, "Claude Code drops its prompt cache when an MCP server connects or disconnects; the hook alone covers every feature (markers name 'omni retrieve'), so --hook-only is a fine choice")
		}
		if o.rewrite {
			n = append(n, "PreToolUse rewrite on: plain commands run through 'omni exec'; permission rules see the rewritten command")
		}
	case hostCodex:
		if !o.mcpOnly {
			n = append(n, "Codex skips new or changed hooks until you approve them: start codex, open \"Hooks need review\" and approve omni's entries (every change to an entry needs a new approval)")
			n = append(n, `Codex reads omni's shortened text as {"decision":"block","reason":...}; some versions show the call as blocked although the model reads the shortened output`)
		}
	case hostGemini:
		if !o.mcpOnly {
			n = append(n, `some Gemini CLI releases run hooks only when enabled in settings.json ("hooks": {"enabled": true} or "tools": {"enableHooks": true})`)
		}
	case hostOpenCode:
		if !o.mcpOnly {
			n = append(n, "restart OpenCode to load the plugin")
		}
	}
	return n
}

// lineDiff lists the lines only in a ("-") and only in b ("+"), after
// dropping the common head and tail.
func lineDiff(a, b []byte) []string {
	al := strings.SplitAfter(string(a), "\n")
	bl := strings.SplitAfter(string(b), "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	j := 0
	for j < len(al)-i && j < len(bl)-i && al[len(al)-1-j] == bl[len(bl)-1-j] {
		j++
	}
	var out []string
	for _, l := range al[i : len(al)-j] {
		if l != "" {
			out = append(out, "- "+strings.TrimRight(l, "\n"))
		}
	}
	for _, l := range bl[i : len(bl)-j] {
		if l != "" {
			out = append(out, "+ "+strings.TrimRight(l, "\n"))
		}
	}
	return out
}

// ---- omni pretool: the opt-in PreToolUse rewrite ----

func newPretoolCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "pretool",
		Short: "Claude Code PreToolUse hook: run plain Bash commands through omni exec (opt-in)",
		Long: `Reads one Claude Code PreToolUse payload on stdin. For a Bash call whose
command is a plain command of a known program (git, go, cargo, npm, pytest,
make, docker, kubectl, ls, cat, grep, ...; no pipe, redirection, list,
background job, substitution, newline, leading assignment or cd) it prints
{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{...}}}
with every original tool_input key and the command wrapped in
'omni exec --session S [--agent A] -- CMD'. Otherwise it prints nothing.

It is registered only by 'omni init --claude --rewrite'. It never sends a
permissionDecision: the user's permission rules decide, and they see the
rewritten command. Claude Code rewrites output in PostToolUse anyway, so this
is rarely needed; OMNI_PRETOOL_REWRITE=0 turns it off without unregistering.

Exit codes: always 0; on any problem it prints nothing and the host runs
the command as written.`,
		Example: `  echo '{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"go test ./..."}}' | omni pretool`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("OMNI_PRETOOL_REWRITE") == "0" {
				return nil
			}
			stdin, err := io.ReadAll(io.LimitReader(s.In, hooks.MaxInput+1))
			if err != nil || len(stdin) > hooks.MaxInput {
				return nil
			}
			self, err := os.Executable()
			if err != nil {
				return nil
			}
			if reply := hooks.PreToolRewrite(stdin, self); reply != nil {
				_, _ = s.Out.Write(reply)
			}
			return nil
		},
	}
}
