package hostsetup

// Codex's hook trust: whether Codex CLI will run omni's hooks or skip them.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pelletier/go-toml/v2"
)

// Codex trust states of one hook handler, as Codex CLI 0.169.0 names them
// in its app-server's hooks/list (measured: docs/HOSTS.md, "Codex hook
// trust"), plus CodexDisabled and CodexProjectUntrusted.
const (
	// CodexTrusted: config.toml holds the handler's current hash; Codex runs it.
	CodexTrusted = "trusted"
	// CodexUntrusted: no approval recorded; Codex skips the handler silently.
	CodexUntrusted = "untrusted"
	// CodexModified: the approval is for another version of the handler
	// (it was edited or rewritten since); Codex skips it silently.
	CodexModified = "modified"
	// CodexDisabled: approved but switched off (enabled = false).
	CodexDisabled = "disabled"
	// CodexProjectUntrusted: the hooks.json is a project's and the project
	// is not trusted; Codex does not load the file at all.
	CodexProjectUntrusted = "project-untrusted"
)

// CodexHook is one of omni's handlers in a Codex hooks.json and what Codex
// will do with it.
type CodexHook struct {
	// Key is Codex's name for the handler, "<hooks.json path>:<event in
	// snake_case>:<group index>:<handler index>", as under [hooks.state]
	// in config.toml.
	Key string `json:"key"`
	// Event is the event as hooks.json spells it (PostToolUse).
	Event string `json:"event"`
	// Hash is the handler's current hash, "sha256:<64 hex>", the value
	// config.toml must hold as trusted_hash for Codex to run it.
	Hash string `json:"hash"`
	// Status is one of the Codex* trust states.
	Status string `json:"status"`
}

// codexConfig is the part of Codex's config.toml that decides trust.
type codexConfig struct {
	Hooks struct {
		State map[string]struct {
			TrustedHash string `toml:"trusted_hash"`
			Enabled     *bool  `toml:"enabled"`
		} `toml:"state"`
	} `toml:"hooks"`
	Projects map[string]struct {
		TrustLevel string `toml:"trust_level"`
	} `toml:"projects"`
}

// CodexHookTrust reads omni's handlers in the hooks.json of o's scope
// ($CODEX_HOME/hooks.json, or <project>/.codex/hooks.json when o.Project
// is set) and tells, for each, whether Codex will run it, from the
// approvals in $CODEX_HOME/config.toml. Codex 0.169.0 skips a handler
// without saying so unless [hooks.state."<key>"] trusted_hash equals the
// handler's hash, and loads a project's hooks.json only when
// [projects."<project>"] trust_level is "trusted" (measured: docs/HOSTS.md).
// A missing hooks.json gives no hooks and no error; the error says which
// file could not be read or parsed.
func CodexHookTrust(o Options) ([]CodexHook, error) {
	path := filepath.Join(o.CodexHome, "hooks.json")
	if o.Project != "" {
		path = filepath.Join(o.Project, ".codex", "hooks.json")
	}
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	hooks, err := codexOmniHooks(path, src, o.Omni)
	if err != nil || len(hooks) == 0 {
		return nil, err
	}
	var cfg codexConfig
	cpath := filepath.Join(o.CodexHome, "config.toml")
	if csrc, err := os.ReadFile(cpath); err == nil {
		if err := toml.Unmarshal(csrc, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %v", cpath, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for i := range hooks {
		h := &hooks[i]
		st, ok := cfg.Hooks.State[h.Key]
		switch {
		case o.Project != "" && cfg.Projects[o.Project].TrustLevel != "trusted":
			h.Status = CodexProjectUntrusted
		case !ok || st.TrustedHash == "":
			h.Status = CodexUntrusted
		case st.TrustedHash != h.Hash:
			h.Status = CodexModified
		case st.Enabled != nil && !*st.Enabled:
			h.Status = CodexDisabled
		default:
			h.Status = CodexTrusted
		}
	}
	return hooks, nil
}

// codexOmniHooks lists omni's command handlers in a hooks.json (path as
// Codex names it in keys) with their keys and hashes.
func codexOmniHooks(path string, src []byte, omni string) ([]CodexHook, error) {
	v, err := DecodeJSONC(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	root, _ := v.(map[string]any)
	events, _ := root["hooks"].(map[string]any)
	var out []CodexHook
	for _, ev := range sortedKeys(events) {
		groups, _ := events[ev].([]any)
		for gi, g := range groups {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			for hi, h := range hs {
				hm, _ := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				if hm["type"] != "command" || !IsOmniCommand(cmd, omni, "hook", "pretool") {
					continue
				}
				snake := snakeCase(ev)
				out = append(out, CodexHook{Key: path + ":" + snake + ":" + strconv.Itoa(gi) + ":" + strconv.Itoa(hi),
					Event: ev, Hash: codexHandlerHash(snake, gm["matcher"], hm)})
			}
		}
	}
	return out, nil
}

// codexHandlerHash is the hash Codex 0.169.0 gives a command handler:
// "sha256:" and the hex SHA-256 of the compact JSON, keys sorted and
// nothing HTML-escaped, of {"event_name": event, "hooks": [{"async",
// "command", "timeout", "type"}], "matcher"} (matcher only when the group
// has one). Reproduced against the currentHash its app-server reports for
// omni's entries (docs/HOSTS.md); a handler with keys beyond these (a
// statusMessage) may hash otherwise, and then reads as modified.
func codexHandlerHash(event string, matcher any, h map[string]any) string {
	async, _ := h["async"].(bool)
	handler := map[string]any{"async": async, "command": h["command"], "timeout": h["timeout"], "type": "command"}
	for k, v := range h {
		if _, ok := handler[k]; !ok {
			handler[k] = v
		}
	}
	obj := map[string]any{"event_name": event, "hooks": []any{handler}}
	if matcher != nil {
		obj["matcher"] = matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(obj) // maps sort their keys; the values came from JSON
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// snakeCase spells a hook event as Codex's keys do: PostToolUse ->
// post_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// codexTrustProblems reports, through problem, omni's Codex handlers in
// o's scope that Codex will skip, one line per hooks.json, each ending in
// its fix.
func codexTrustProblems(o Options, problem func(string, ...any)) {
	hooks, err := CodexHookTrust(o)
	if err != nil {
		problem("Codex CLI: cannot tell whether Codex runs omni's hooks: %v", err)
		return
	}
	byStatus := map[string][]string{}
	path := ""
	for _, h := range hooks {
		path = h.Key[:strings.Index(h.Key, ".json:")+len(".json")]
		if h.Status != CodexTrusted {
			byStatus[h.Status] = append(byStatus[h.Status], h.Event)
		}
	}
	where := shortPath(path, o.Home)
	if evs := byStatus[CodexProjectUntrusted]; len(evs) > 0 {
		problem("Codex CLI: %s belongs to a project Codex does not trust, so Codex loads none of its hooks: trust %s when codex asks (or set [projects.%q] trust_level = \"trusted\" in %s)",
			where, o.Project, o.Project, shortPath(filepath.Join(o.CodexHome, "config.toml"), o.Home))
		return
	}
	for _, st := range []string{CodexUntrusted, CodexModified, CodexDisabled} {
		evs := byStatus[st]
		if len(evs) == 0 {
			continue
		}
		what := map[string]string{
			CodexUntrusted: "not approved",
			CodexModified:  "changed since you approved them",
			CodexDisabled:  "turned off",
		}[st]
		fix := "start codex and trust them where it says \"Hooks need review\""
		if st == CodexDisabled {
			fix = "turn them on again in codex's hooks view"
		}
		problem("Codex CLI: omni's hooks in %s are %s (%s), so Codex skips them silently: %s",
			where, what, strings.Join(evs, ", "), fix)
	}
}
