package hosts

// What several hosts' protocols share: where a tool's input names its
// command or path, why a text may not fold, and the JSON every reply is
// written in.

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/shellcmd"
)

// MaxPayload is the largest hook payload omni reads, in bytes: 16 MiB
// (hooks.MaxInput is this). A file a host persisted is read back only up
// to it.
const MaxPayload = 16 << 20

// NoFoldReason returns why a text must pass unchanged ("" if it may fold):
// omni's own recovery commands (omni retrieve, omni diff: their output is
// the answer), the explicit opt-out (an OMNI_PASSTHROUGH= assignment before
// the command, or envPassthrough), and text the JSON decoder could not carry
// exactly (lone surrogate escapes decode to U+FFFD).
func NoFoldReason(cmd string, envPassthrough bool, text string, raw json.RawMessage) string {
	if envPassthrough {
		return string(events.ReasonPassthrough)
	}
	if cmd != "" {
		words := shellcmd.LeadingWords(cmd, 8)
		i := 0
		for i < len(words) && shellcmd.IsAssignment(words[i]) {
			if strings.HasPrefix(words[i], "OMNI_PASSTHROUGH=") {
				return string(events.ReasonPassthrough)
			}
			i++
		}
		if i+1 < len(words) && shellcmd.Base(words[i]) == "omni" && (words[i+1] == "retrieve" || words[i+1] == "diff") {
			return string(events.ReasonOwnRecovery)
		}
	}
	if strings.ContainsRune(text, utf8.RuneError) && (!utf8.Valid(raw) || bytes.Contains(raw, []byte(`\ud`)) || bytes.Contains(raw, []byte(`\uD`))) {
		return string(events.ReasonLossyJSON)
	}
	return ""
}

// lineSourceOr returns ls, or fallback when ls is "".
func lineSourceOr(ls, fallback string) string {
	if ls != "" {
		return ls
	}
	return fallback
}

// sourceOf returns the command (Bash) or file path (Read and others) of a
// tool_input, or "".
func sourceOf(tool string, input json.RawMessage) string {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		FilePathJS   string `json:"filePath"`
		AbsolutePath string `json:"absolute_path"`
		Path         string `json:"path"`
		Pattern      string `json:"pattern"`
		URL          string `json:"url"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case in.Command != "":
		return in.Command
	case in.FilePath != "":
		return in.FilePath
	case in.FilePathJS != "":
		return in.FilePathJS
	case in.AbsolutePath != "":
		return in.AbsolutePath
	case in.Pattern != "":
		return in.Pattern
	case in.URL != "":
		return in.URL
	}
	return in.Path
}

// joinOutErr is how the model reads a Bash result: stdout, then stderr on a
// new line when both are present.
func joinOutErr(out, err string) string {
	if err == "" {
		return out
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		return out + "\n" + err
	}
	return out + err
}

// Marshal is the JSON of every reply: v encoded without HTML escaping and
// without a trailing newline. Errors: encoding/json's.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// isOmniExec reports whether a shell command runs `omni exec` (its output
// was already decided and recorded by that door, so the hook leaves it
// alone). Leading assignments are skipped; the program token must be omni.
func isOmniExec(cmd string) bool {
	words := shellcmd.LeadingWords(cmd, 8)
	i := 0
	for i < len(words) && shellcmd.IsAssignment(words[i]) {
		i++
	}
	return i+1 < len(words) && shellcmd.Base(words[i]) == "omni" && words[i+1] == "exec"
}

func marshal(v any) (json.RawMessage, error) { return Marshal(v) }
