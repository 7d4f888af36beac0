package hostsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// MCP server entries in JSON settings files, the Codex config.toml table and
// the OpenCode plugin shim.

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

// Codex config.toml.

// codexBlock renders omni's [mcp_servers.omni] table. Codex starts MCP
// servers with a filtered environment, so OMNI_HOME is passed on by name
// (env_vars), or `omni mcp` would read ~/.omni (measured on Codex 0.169.0,
// docs/HOSTS.md).
func codexBlock(omni string) string {
	return "[mcp_servers.omni]\ncommand = " + tomlBasic(omni) + "\nargs = [\"mcp\"]\nenv_vars = [\"OMNI_HOME\"]\n"
}

// tomlBasic renders s as a TOML basic string: quotes and backslashes
// escaped, and every control character (U+0000–U+001F but tab, and
// U+007F, which TOML 1.0 forbids bare in a basic string) written as a
// \uXXXX escape, so a path holding a newline still parses.
func tomlBasic(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteRune(c)
		case (c < 0x20 && c != '\t') || c == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlTables returns the line (0-based) of every table header of a TOML
// document ([a.b] and [[a.b]]) and its dotted key, its parts unquoted,
// found by go-toml's parser: a header-like line inside a multi-line
// string is text, not a header. Errors: the document does not parse.
func tomlTables(src []byte) (map[int]string, error) {
	out := map[int]string{}
	var p unstable.Parser
	p.Reset(src)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		var parts []string
		line := -1
		for it := e.Key(); it.Next(); {
			k := it.Node()
			if line < 0 && k.Raw.Length > 0 {
				line = bytes.Count(src[:k.Raw.Offset], []byte("\n"))
			}
			parts = append(parts, string(k.Data))
		}
		if line >= 0 {
			out[line] = strings.Join(parts, ".")
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("does not parse as TOML: %w", err)
	}
	return out, nil
}

// applyCodexTOML installs (or removes) the [mcp_servers.omni] table (and its
// sub-tables) of a Codex config.toml, as text: the rest of the file is kept
// byte for byte. The table is complete on its own, so Codex never sees a
// sub-table without its parent. Tables are found by go-toml's parser
// (tomlTables), so a multi-line string that holds "[mcp_servers.omni]" is
// kept whole. Errors: a file that does not parse (nothing is changed).
func applyCodexTOML(src []byte, omni string, install bool) ([]byte, error) {
	tables, err := tomlTables(src)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	isOurs := func(name string) bool {
		return name == "mcp_servers.omni" || strings.HasPrefix(name, "mcp_servers.omni.")
	}
	start, end := -1, -1
	for i := range lines {
		name, ok := tables[i]
		if !ok {
			continue
		}
		if start < 0 && isOurs(name) {
			start = i
			continue
		}
		if start >= 0 && !isOurs(name) {
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
				return src, nil
			}
			return []byte(strings.Join(lines[:start], "") + want + strings.Join(lines[end:], "")), nil
		}
		s := string(src)
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		return []byte(s + want), nil
	}
	if start < 0 {
		return src, nil
	}
	before := lines[:start]
	if len(before) > 0 && strings.TrimSpace(before[len(before)-1]) == "" {
		before = before[:len(before)-1]
	}
	out := strings.Join(before, "") + strings.Join(lines[end:], "")
	if strings.TrimSpace(out) == "" {
		return nil, nil
	}
	return []byte(out), nil
}

// The OpenCode plugin shim and the Cline plugin.

// pluginFor renders the OpenCode plugin shim for the binary omni.
func pluginFor(omni string) []byte { return renderPlugin(pluginSource, omni) }

// renderPlugin puts the binary omni in a plugin's source.
func renderPlugin(source, omni string) []byte {
	js, _ := json.Marshal(omni)
	// json.Marshal escapes <, > and & as \u003c…, which is also valid JS.
	return []byte(strings.Replace(source, `"__OMNI_BIN__"`, string(js), 1))
}

func applyPlugin(src []byte, exists, install bool, omni, path string) ([]byte, bool, error) {
	return applyPluginFile(src, exists, install, path, PluginMarker, pluginFor(omni))
}

// applyPluginFile writes body (a plugin that starts with marker) at path,
// or removes it; a file there without marker is never touched.
func applyPluginFile(src []byte, exists, install bool, path, marker string, body []byte) ([]byte, bool, error) {
	ours := exists && bytes.HasPrefix(src, []byte(marker))
	if install {
		if exists && !ours {
			return nil, false, fmt.Errorf("%s exists and was not written by omni; move it away first", path)
		}
		return body, false, nil
	}
	if !ours {
		return src, !exists, nil
	}
	return nil, true, nil
}
