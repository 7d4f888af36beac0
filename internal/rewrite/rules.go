package rewrite

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Rule is one permission rule of Claude Code's settings, as written there:
// Tool is the part before "(" ("Bash", "Read", "WebFetch", …) and Content
// what the parentheses hold ("" for a bare tool name, which covers every
// use of the tool).
type Rule struct {
	Tool    string
	Content string
	// From is the settings file the rule was read from.
	From string
}

func (r Rule) String() string {
	if r.Content == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Content + ")"
}

// ParseRule reads one rule string: `Bash`, `Bash(npm test:*)`,
// `Read(./.env)`. A string with an opening parenthesis and no closing one is
// kept whole as the tool name (it then matches no known tool).
func ParseRule(s string) Rule {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '(')
	if i <= 0 || !strings.HasSuffix(s, ")") {
		return Rule{Tool: s}
	}
	return Rule{Tool: strings.TrimSpace(s[:i]), Content: s[i+1 : len(s)-1]}
}

// Rules are the permission rules of every settings file Claude Code merges
// for one project: each list is the union of the files' lists (the host
// concatenates them; deny beats ask beats allow whatever file they came
// from).
type Rules struct {
	Allow, Ask, Deny []Rule
	// ManagedOnly is set when managed settings say
	// allowManagedPermissionRulesOnly: the allow rules of other files are
	// then not loaded.
	ManagedOnly bool
	// Files lists the settings files that were read (existing ones only).
	Files []string
}

// Sources names the settings files of one Claude Code project.
type Sources struct {
	// User is the user's settings file: $CLAUDE_CONFIG_DIR/settings.json,
	// else ~/.claude/settings.json.
	User string
	// Project lists the project directories whose .claude/settings.json
	// and .claude/settings.local.json are read: the host's project
	// directory ($CLAUDE_PROJECT_DIR) and the call's cwd when they differ.
	// Allow rules are taken from the first only (the host reads its
	// project's files, not a subdirectory's); deny and ask rules from all.
	Project []string
	// Managed lists the managed-policy files (DefaultManaged).
	Managed []string
}

// DefaultManaged returns the managed-settings files of this platform as
// Claude Code reads them (2.1.328's managed directory: "/Library/Application
// Support/ClaudeCode" on macOS, "C:\Program Files\ClaudeCode" on Windows,
// "/etc/claude-code" elsewhere): managed-settings.json in that directory
// and every *.json of its managed-settings.d, in name order. Policies
// Claude Code takes from the Windows registry, macOS MDM profiles or the
// server are not files and are not here.
func DefaultManaged() []string { return managedFor(runtime.GOOS, filepath.Glob) }

// managedFor is DefaultManaged for system goos (a GOOS value), listing
// the drop-in directory with glob.
func managedFor(goos string, glob func(pattern string) ([]string, error)) []string {
	dir, sep := "/etc/claude-code", "/"
	switch goos {
	case "darwin":
		dir = "/Library/Application Support/ClaudeCode"
	case "windows":
		dir, sep = `C:\Program Files\ClaudeCode`, `\`
	}
	out := []string{dir + sep + "managed-settings.json"}
	m, _ := glob(dir + sep + "managed-settings.d" + sep + "*.json")
	sort.Strings(m)
	return append(out, m...)
}

// SourcesFor returns the settings files Claude Code reads for a hook call
// whose payload names cwd, with the environment given by getenv
// (CLAUDE_CONFIG_DIR, CLAUDE_PROJECT_DIR, HOME).
func SourcesFor(cwd string, getenv func(string) string) Sources {
	var s Sources
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		s.User = filepath.Join(d, "settings.json")
	} else if h := getenv("HOME"); h != "" {
		s.User = filepath.Join(h, ".claude", "settings.json")
	}
	if p := getenv("CLAUDE_PROJECT_DIR"); p != "" {
		s.Project = append(s.Project, p)
	}
	if cwd != "" && (len(s.Project) == 0 || filepath.Clean(cwd) != filepath.Clean(s.Project[0])) {
		s.Project = append(s.Project, cwd)
	}
	s.Managed = DefaultManaged()
	return s
}

// ErrSettings wraps a settings file that exists but cannot be read or
// parsed: its rules are unknown, so nothing may be rewritten.
var ErrSettings = errors.New("unreadable settings file")

// Load reads and merges the permission rules of s. A missing file adds
// nothing. Errors: ErrSettings (wrapped with the file) when a file exists
// but cannot be read or is not a JSON object with the documented
// permissions shape; the caller must then rewrite nothing.
func Load(s Sources) (*Rules, error) {
	r := &Rules{}
	for _, f := range settingsFiles(s) {
		b, err := readSettings(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSettings, f.path, err)
		}
		if err := r.add(f, b); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// maxSettingsBytes bounds a settings file Load reads: 16 MiB, far above
// a settings file of thousands of rules; a larger one is unreadable
// (ErrSettings).
const maxSettingsBytes = 16 << 20

// readSettings returns the bytes of the settings file at p. The open does
// not wait (a FIFO with no writer answers at once) and only a regular
// file of at most maxSettingsBytes is read: a link to a device such as
// /dev/zero, a FIFO or a directory is an error. Errors: os.OpenFile's
// (fs.ErrNotExist for a missing file), and one for a file that is not
// regular or is over the bound.
func readSettings(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() > maxSettingsBytes {
		return nil, fmt.Errorf("%d bytes, over the %d byte bound", fi.Size(), maxSettingsBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettingsBytes+1))
	if err == nil && len(b) > maxSettingsBytes {
		err = fmt.Errorf("grew over the %d byte bound while read", maxSettingsBytes)
	}
	return b, err
}

// settingsFile is one settings file of a Sources and the rules taken
// from it: allow rules or not, and whether it is a managed-policy file.
type settingsFile struct {
	path       string
	allow      bool
	managedSet bool
}

// settingsFiles lists the files of s in the order Load merges them
// (managed, user, then each project's settings.json and
// settings.local.json); empty paths are left out.
func settingsFiles(s Sources) []settingsFile {
	var files []settingsFile
	for _, m := range s.Managed {
		files = append(files, settingsFile{m, true, true})
	}
	files = append(files, settingsFile{s.User, true, false})
	for i, p := range s.Project {
		files = append(files, settingsFile{filepath.Join(p, ".claude", "settings.json"), i == 0, false},
			settingsFile{filepath.Join(p, ".claude", "settings.local.json"), i == 0, false})
	}
	out := files[:0]
	for _, f := range files {
		if f.path != "" {
			out = append(out, f)
		}
	}
	return out
}

// add merges the rules of one settings file's bytes b into r. Errors:
// ErrSettings when b is not a JSON object of the documented shape.
func (r *Rules) add(f settingsFile, b []byte) error {
	var doc struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
		ManagedOnly bool `json:"allowManagedPermissionRulesOnly"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, f.path, err)
	}
	r.Files = append(r.Files, f.path)
	add := func(dst *[]Rule, src []string) {
		for _, x := range src {
			rl := ParseRule(x)
			rl.From = f.path
			*dst = append(*dst, rl)
		}
	}
	if f.managedSet && doc.ManagedOnly {
		r.ManagedOnly = true
	}
	add(&r.Deny, doc.Permissions.Deny)
	add(&r.Ask, doc.Permissions.Ask)
	if f.allow && (f.managedSet || !r.ManagedOnly) {
		add(&r.Allow, doc.Permissions.Allow)
	}
	return nil
}

// bashAllows reports whether a Bash rule's content permits the command c
// exactly as the host matches it: "" or "*" every command; "P:*" c is P or
// starts with P and a space; a content with '*' a glob over the whole
// command ('*' any run of characters, spaces included); otherwise c equal
// to the content. Whitespace runs compare as one space.
func bashAllows(content, c string) bool {
	content, c = squash(content), squash(c)
	switch {
	case content == "" || content == "*":
		return true
	case strings.HasSuffix(content, ":*"):
		p := strings.TrimSuffix(content, ":*")
		return c == p || strings.HasPrefix(c, p+" ")
	case strings.Contains(content, "*"):
		return glob(content, c)
	}
	return c == content
}

// bashCouldMatch reports whether a Bash deny or ask rule could match c
// under any reading of the rule syntax: a superset of bashAllows (a prefix
// without the word boundary, a "P *" glob also as "P*", an exact rule as a
// prefix, and the rule's quotes ignored).
func bashCouldMatch(content, c string) bool {
	content = squash(content)
	if content == "" || content == "*" {
		return true
	}
	for _, k := range []string{content, unquote(content)} {
		for _, x := range []string{squash(c), squash(unquote(c))} {
			p := strings.TrimSuffix(k, ":*")
			if strings.Contains(p, "*") {
				loose := strings.ReplaceAll(p, " *", "*")
				if glob(loose, x) || glob(loose, x+" ") || glob(loose+"*", x) {
					return true
				}
				continue
			}
			if strings.HasPrefix(x, p) {
				return true
			}
		}
	}
	return false
}

// pathCouldMatch reports whether a path rule (Read, Edit, Write, …) could
// concern one word of a command: the last segment of the rule's pattern
// that is not only wildcards, matched as a glob against every '/'-separated
// segment of the word (and of the part after a flag's '='). A pattern made
// only of wildcards could concern any word that is not a flag.
func pathCouldMatch(content, word string) bool {
	pat := strings.TrimSpace(content)
	if pat == "" {
		return true
	}
	segs := strings.Split(pat, "/")
	key := ""
	for i := len(segs) - 1; i >= 0; i-- {
		if strings.Trim(segs[i], "*~.") != "" {
			key = segs[i]
			break
		}
	}
	if key == "" {
		return !strings.HasPrefix(word, "-")
	}
	cands := []string{word}
	if i := strings.IndexByte(word, '='); i >= 0 {
		cands = append(cands, word[i+1:])
	}
	for _, w := range cands {
		for _, s := range strings.Split(w, "/") {
			if ok, _ := path.Match(key, s); ok || s == key || (!strings.ContainsAny(key, "*?[") && strings.Contains(s, key)) {
				return true
			}
		}
	}
	return false
}

// squash trims s and writes every run of blanks as one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// unquote drops single and double quotes and backslashes.
func unquote(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\'' || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}

// glob matches s against p, where '*' stands for any run of characters
// (including '/' and spaces) and every other character for itself.
func glob(p, s string) bool {
	parts := strings.Split(p, "*")
	if len(parts) == 1 {
		return p == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
