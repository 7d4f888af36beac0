// Package hostsetup registers omni with agent hosts (Claude Code, Codex CLI,
// Gemini CLI, OpenCode) where each host reads its registration, and checks
// those registrations for omni doctor.
//
// Each host reads its hooks and MCP servers from its own files: Claude Code
// from settings.json and ~/.claude.json (or .mcp.json in a project), Codex
// from hooks.json and config.toml under $CODEX_HOME, Gemini from
// settings.json under ~/.gemini, OpenCode from a plugin file and
// opencode.json under ~/.config/opencode. Every edit inserts or removes only
// omni's own entries and keeps the rest of the file byte for byte (a JSON
// editor that keeps comments and layout, jsonc.go; a line editor for one
// TOML table, mcptoml.go); a file is backed up once before omni first
// changes it; a second run with the same options changes nothing; an
// uninstall gives back the original bytes when nothing else changed since,
// else removes only omni's entries.
//
// The TOML edit is a text edit on purpose: a TOML library decodes and
// re-encodes the whole document, which loses the user's comments, order and
// spacing, and the tests assert the bytes of every other line are kept.
package hostsetup

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"github.com/omnictx/omni/internal/rewrite"
	"os"
	"path/filepath"
	"strings"
)

// BackupSuffix names the one backup kept of every file omni init changes.
const BackupSuffix = ".omni-backup"

// pluginSource is the OpenCode plugin shim; __OMNI_BIN__ becomes the path of
// the omni binary.
//
//go:embed plugin/omni.js
var pluginSource string

// PluginMarker starts every plugin file omni writes; a file without it is
// not omni's and is never overwritten or removed.
const PluginMarker = "// omni: OpenCode plugin shim"

// clinePluginSource is the Cline plugin; __OMNI_BIN__ becomes the path of
// the omni binary.
//
//go:embed plugin/cline.js
var clinePluginSource string

// ClinePluginMarker starts the Cline plugin file omni writes; a file
// without it is not omni's and is never overwritten or removed.
const ClinePluginMarker = "// omni: Cline plugin"

// Host names one supported host.
type Host string

// The supported hosts.
const (
	Claude   Host = "claude"
	Codex    Host = "codex"
	Gemini   Host = "gemini"
	OpenCode Host = "opencode"
	Copilot  Host = "copilot"
	Cline    Host = "cline"
)

// AllHosts in the order they are set up and printed.
var AllHosts = []Host{Claude, Codex, Gemini, OpenCode, Copilot, Cline}

// hostNames are the names printed for each host.
var hostNames = map[Host]string{
	Claude: "Claude Code", Codex: "Codex CLI", Gemini: "Gemini CLI", OpenCode: "OpenCode", Copilot: "Copilot CLI", Cline: "Cline CLI",
}

// hostTiers is what each host makes of omni's reply: see Host.Tier.
var hostTiers = map[Host]string{
	Claude: "Full", Codex: "Full-text-only", Gemini: "Full", OpenCode: "Plugin", Copilot: "Full", Cline: "Plugin",
}

// Name is the host's name as printed ("Claude Code").
func (h Host) Name() string { return hostNames[h] }

// Tier is what the host makes of omni's reply: Full (the host applies the
// rewrite), Full-text-only (Codex: the rewrite arrives as plain text) or
// Plugin (OpenCode and Cline, through omni's plugin).
func (h Host) Tier() string { return hostTiers[h] }

// Options are the resolved flags of one omni init run (or the scope one
// doctor check looks at).
type Options struct {
	Omni       string // absolute path of the binary the registration runs
	Home       string // the user's home directory
	ConfigHome string // $XDG_CONFIG_HOME or ~/.config
	CodexHome  string // $CODEX_HOME or ~/.codex
	// CopilotHome is $COPILOT_HOME ("" reads as ~/.copilot).
	CopilotHome string
	// ClineDir is $CLINE_DIR ("" reads as ~/.cline).
	ClineDir string
	Project  string // project top level, with --project; "" for user scope
	HookOnly bool   // hooks (or the OpenCode plugin) only, no MCP server
	MCPOnly  bool   // the MCP server only, no hooks
	Rewrite  bool   // Claude Code: also register omni pretool for PreToolUse
	// GOOS is the system the hosts run omni on, as a GOOS value ("": this
	// one): it decides the hook command lines (hookcmd.go).
	GOOS string
}

// hookEntry is one hook registration omni writes.
type hookEntry struct {
	event   string
	matcher string // "" writes no matcher
	sub     string // the omni subcommand: "hook" or "pretool"
	timeout int    // in the host's unit; 0 writes none
	async   bool
}

// claudeEntries are Claude Code's registrations in its settings.json:
// every tool omni rewrites in the PostToolUse matcher (the tools it
// shortens, and those whose results it only redacts: WebSearch,
// BashOutput, Task/Agent and every MCP tool, so a credential in them never
// reaches the model), one handler per event, never async where a reply
// matters.
func claudeEntries(rewrite bool) []hookEntry {
	es := []hookEntry{
		{event: "PostToolUse", matcher: "Bash|Read|Grep|Glob|WebFetch|WebSearch|BashOutput|Task|Agent|mcp__.*", sub: "hook", timeout: 30},
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
// Claude-compatible.
var codexEntries = []hookEntry{
	{event: "PostToolUse", matcher: "Bash", sub: "hook", timeout: 30},
	{event: "PreCompact", sub: "hook", timeout: 10},
	{event: "PostCompact", sub: "hook", timeout: 10},
	{event: "SessionStart", sub: "hook", timeout: 10},
	{event: "SubagentStart", sub: "hook", timeout: 10},
}

// geminiEntries: Gemini's own tool names and event names; timeouts in
// milliseconds. No PreCompress: Gemini CLI 0.61.0 fires it before every
// model request, compression or not (docs/HOSTS.md), so it would cost a
// hook process per request and say nothing.
var geminiEntries = []hookEntry{
	{event: "AfterTool", matcher: "run_shell_command|read_file|read_many_files|search_file_content|grep_search|glob|web_fetch", sub: "hook", timeout: 30000},
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
func hostPaths(h Host, o Options) (hookPath, mcpPath string) {
	if s, ok := specs[h]; ok {
		return s.paths(o)
	}
	p := o.Project
	switch h {
	case Claude:
		if p != "" {
			return filepath.Join(p, ".claude", "settings.json"), filepath.Join(p, ".mcp.json")
		}
		return filepath.Join(o.Home, ".claude", "settings.json"), filepath.Join(o.Home, ".claude.json")
	case Codex:
		if p != "" {
			return filepath.Join(p, ".codex", "hooks.json"), filepath.Join(p, ".codex", "config.toml")
		}
		return filepath.Join(o.CodexHome, "hooks.json"), filepath.Join(o.CodexHome, "config.toml")
	case Gemini:
		if p != "" {
			f := filepath.Join(p, ".gemini", "settings.json")
			return f, f
		}
		f := filepath.Join(o.Home, ".gemini", "settings.json")
		return f, f
	case OpenCode:
		if p != "" {
			return filepath.Join(p, ".opencode", "plugins", "omni.js"), filepath.Join(p, "opencode.json")
		}
		return filepath.Join(o.ConfigHome, "opencode", "plugins", "omni.js"), filepath.Join(o.ConfigHome, "opencode", "opencode.json")
	case Copilot:
		// Hooks only: omni registers no MCP server with Copilot CLI (its
		// retrieve path is the 'omni retrieve' the markers name).
		return copilotSettings(o), ""
	case Cline:
		// The plugin only: omni registers no MCP server with Cline.
		if p != "" {
			return filepath.Join(p, ".cline", "plugins", "omni.js"), ""
		}
		return filepath.Join(clineDir(o), "plugins", "omni.js"), ""
	}
	return "", ""
}

// partsFor lists the registrations of host h under o.
func partsFor(h Host, o Options) []part {
	if s, ok := specs[h]; ok {
		return specParts(s, o)
	}
	hookPath, mcpPath := hostPaths(h, o)
	omni := o.Omni
	var ps []part
	if !o.MCPOnly {
		switch h {
		case Claude:
			// The rewrite names the omni binary in a command and an allow
			// rule: a path it cannot name leaves the rewrite out.
			o.Rewrite = o.Rewrite && rewrite.PathNameOK(omni)
			es := claudeEntries(o.Rewrite)
			r := hookCmdFor(o, h)
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntriesAs(src, es, r, install)
			})})
			rw := o.Rewrite
			ps = append(ps, part{"permissions", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyAllowRules(src, omni, install && rw)
			})})
		case Codex:
			r := hookCmdFor(o, h)
			if !r.runnable() {
				break // left out, and said (hostNotes)
			}
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntriesAs(src, codexEntries, r, install)
			})})
		case Gemini:
			r := hookCmdFor(o, h)
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyHookEntriesAs(src, geminiEntries, r, install)
			})})
		case OpenCode:
			ps = append(ps, part{"plugin", hookPath, func(src []byte, exists, install bool) ([]byte, bool, error) {
				return applyPlugin(src, exists, install, omni, hookPath)
			}})
		case Copilot:
			if o.Project != "" {
				ps = append(ps, copilotProjectPart(hookPath))
				break
			}
			r := hookCmdFor(o, h)
			ps = append(ps, part{"hooks", hookPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyCopilotHooksAs(src, r, install)
			})})
		case Cline:
			ps = append(ps, part{"plugin", hookPath, func(src []byte, exists, install bool) ([]byte, bool, error) {
				return applyPluginFile(src, exists, install, hookPath, ClinePluginMarker, renderPlugin(clinePluginSource, omni))
			}})
		}
	}
	if !o.HookOnly {
		switch h {
		case Claude:
			v := omap{{"type", "stdio"}, {"command", omni}, {"args", []string{"mcp"}}}
			ps = append(ps, part{"mcp", mcpPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})})
		case Codex:
			ps = append(ps, part{"mcp", mcpPath, func(src []byte, _, install bool) ([]byte, bool, error) {
				out, err := applyCodexTOML(src, omni, install)
				return out, false, err
			}})
		case Gemini:
			v := omap{{"command", omni}, {"args", []string{"mcp"}}}
			ps = append(ps, part{"mcp", mcpPath, jsonApply(func(src []byte, install bool) ([]byte, error) {
				return applyMCPEntry(src, "mcpServers", v, omni, install)
			})})
		case OpenCode:
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

// fileOp is the change one file needs, planned before any file is written
// (init is all or nothing).
type fileOp struct {
	path string
	// data is the file's new content; del removes the file instead.
	data []byte
	del  bool
	// backup, when not "", is written first with backupData (a new file,
	// never through a link); removeBackup removes path's backup after.
	backup       string
	backupData   []byte
	removeBackup bool
	// before is the file's content (existed: it was there), for undoing.
	before  []byte
	existed bool
}

// runParts plans the parts of one host, file by file; it writes nothing.
// Under a project (o.Project) every file must resolve inside it.
func runParts(ps []part, install bool, project string, variants func(path string) [][]part) ([]fileResult, []fileOp, error) {
	var order []string
	byPath := map[string][]part{}
	for _, p := range ps {
		if _, ok := byPath[p.path]; !ok {
			order = append(order, p.path)
		}
		byPath[p.path] = append(byPath[p.path], p)
	}
	var out []fileResult
	var ops []fileOp
	for _, path := range order {
		if project != "" {
			for _, f := range []string{path, path + BackupSuffix} {
				if err := insideProject(project, f); err != nil {
					return out, nil, err
				}
			}
		}
		r, op, err := planFile(path, byPath[path], install, variants)
		if err != nil {
			return out, nil, err
		}
		out = append(out, r)
		if op != nil {
			ops = append(ops, *op)
		}
	}
	return out, ops, nil
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

// planFile works out what installing (or uninstalling) ps does to path:
// the report line and the change to make (nil: none). It writes nothing.
func planFile(path string, ps []part, install bool, variants func(path string) [][]part) (fileResult, *fileOp, error) {
	r := fileResult{Path: path, Parts: partKinds(ps)}
	src, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, nil, fmt.Errorf("read %s: %w", path, err)
	}
	r.before = src
	if !install && !exists {
		r.Action = "absent"
		return r, nil, nil
	}
	out, del, err := chain(ps, src, exists, install)
	if err != nil {
		return r, nil, fmt.Errorf("%s: %w", path, err)
	}
	backup := path + BackupSuffix
	op := &fileOp{path: path, before: src, existed: exists}
	if !install {
		// The original bytes come back when the file is exactly what
		// installing into them produced.
		if orig, origExists, ok := originalOf(path, src, variants(path)); ok {
			r.Action = "restored"
			if !origExists {
				r.Action = "deleted"
			}
			r.after = orig
			op.data, op.del, op.removeBackup = orig, !origExists, true
			return r, op, nil
		}
	}
	switch {
	case del && !exists, !del && exists && bytes.Equal(out, src):
		r.Action = "unchanged"
		return r, nil, nil
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
	op.data, op.del = out, del
	// The backup keeps the file as it was before omni: a file that already
	// holds omni's entries (omni created it, or an install predates backups)
	// is not an original and is not backed up.
	if exists && install && !holdsOmni(src, variants(path)) {
		fi, err := os.Lstat(backup)
		switch {
		case errors.Is(err, os.ErrNotExist):
			op.backup, op.backupData = backup, src
			r.Backup = backup
		case err != nil:
			return r, nil, fmt.Errorf("backup %s: %w", path, err)
		case fi.Mode()&os.ModeSymlink != 0 || !fi.Mode().IsRegular():
			return r, nil, fmt.Errorf("backup %s: %s is a link or not a regular file; omni writes no backup through it (remove it and run again)", path, backup)
		}
	}
	return r, op, nil
}

// commit makes the planned changes in order. On the first failure it puts
// back every file it changed (their bytes as planned from), removes the
// backups it wrote, and returns the failure.
func commit(ops []fileOp) error {
	var done []fileOp
	var err error
	for _, op := range ops {
		if err = apply1(op); err != nil {
			break
		}
		done = append(done, op)
	}
	if err == nil {
		return nil
	}
	var undo []error
	for i := len(done) - 1; i >= 0; i-- {
		op := done[i]
		if op.existed {
			undo = append(undo, writeAtomic(op.path, op.before))
		} else if rerr := os.Remove(op.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			undo = append(undo, rerr)
		}
		if op.backup != "" {
			_ = os.Remove(op.backup)
		}
	}
	if uerr := errors.Join(undo...); uerr != nil {
		return fmt.Errorf("%w; putting back the files changed before it also failed: %v", err, uerr)
	}
	return fmt.Errorf("%w (no file was left changed)", err)
}

// apply1 makes one planned change.
func apply1(op fileOp) error {
	if op.backup != "" {
		if err := writeNew(op.backup, op.backupData, op.path); err != nil {
			return fmt.Errorf("backup %s: %w", op.path, err)
		}
	}
	var err error
	if op.del {
		if err = os.Remove(op.path); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		err = writeAtomic(op.path, op.data)
	}
	if err != nil {
		if op.backup != "" {
			_ = os.Remove(op.backup)
		}
		return err
	}
	if op.removeBackup {
		if err := os.Remove(op.path + BackupSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// insideProject returns an error when path, with every link on its way
// resolved, lies outside the project root (a repository's
// .claude/settings.json.omni-backup or .mcp.json pointing at a file of the
// user's), or is a link whose target is missing.
func insideProject(root, path string) error {
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("project %s: %w", root, err)
	}
	p := path
	var rest []string
	for {
		fi, err := os.Lstat(p)
		if err == nil {
			t, err := filepath.EvalSymlinks(p)
			if err != nil {
				kind := "a link to a missing target"
				if fi.Mode()&os.ModeSymlink == 0 {
					kind = "not resolvable"
				}
				return fmt.Errorf("%s is %s; omni writes no file of a project through a link (remove it and run again)", p, kind)
			}
			p = t
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		d := filepath.Dir(p)
		if d == p {
			break
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = d
	}
	full := filepath.Join(append([]string{p}, rest...)...)
	rel, err := filepath.Rel(rr, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s resolves to %s, outside the project %s; omni edits no file outside a project in project mode", path, full, root)
	}
	return nil
}

// originalOf reports the content a file had before omni wrote it (its
// backup, else "absent") when installing into that content with some set
// of omni's parts gives exactly the current bytes.
func originalOf(path string, cur []byte, variants [][]part) ([]byte, bool, bool) {
	orig, err := os.ReadFile(path + BackupSuffix)
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

// writeNew creates path with data and the mode of like, never through a
// link: the bytes go to a new temporary file beside it, which is then
// hard-linked at path (which fails if anything, a dangling link included,
// is there already).
func writeNew(path string, data []byte, like string) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(like); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".omni-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), mode)); err != nil {
		return err
	}
	return os.Link(f.Name(), path)
}
