package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Gemini CLI 0.61.0 (its measured behaviour is in docs/HOSTS.md): the npm package's bundle run by node,
// `gemini -p`, against a mock of the Gemini API's streamGenerateContent
// (SSE). What the model read is the functionResponse parts of later
// requests. Gemini names calls itself, so results are matched to steps by
// position: the mock issues one call per reply, in script order.
const (
	geminiSpec = "@google/gemini-cli@0.61.0"
	geminiRel  = "node_modules/@google/gemini-cli/bundle/gemini.js"
)

// gmConversation returns the user text (for the tag) and the function
// responses in order, each as the text the model reads (output or error).
func gmConversation(body []byte) (text string, responses []string, err error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					Name     string                     `json:"name"`
					Response map[string]json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", nil, err
	}
	var tb strings.Builder
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				var s string
				raw, ok := fr.Response["output"]
				if !ok {
					raw, ok = fr.Response["error"]
				}
				if !ok || json.Unmarshal(raw, &s) != nil {
					return "", nil, fmt.Errorf("functionResponse %s without a string output or error: %v", fr.Name, fr.Response)
				}
				responses = append(responses, s)
			} else if c.Role == "user" {
				tb.WriteString(p.Text)
				tb.WriteByte('\n')
			}
		}
	}
	return tb.String(), responses, nil
}

func gmID(name string) string { return name }

// gmScript is the main script without subagent.
func gmScript() []step { return mainScript(false) }

// gmSecondTag marks a second session on the same store, after the main
// one: it is shown the head of big.txt, then big.txt whole, whose other
// lines only the first session read (project scope).
const gmSecondTag = "E2E-SECOND"

var gmSecondScript = []step{
	{"s2head", "shell", fixed("head -n 100 big.txt")},
	{"s2cat", "shell", fixed("cat big.txt")},
}

// gmScriptOf returns the script a conversation plays (nil for none).
func gmScriptOf(text string) []step {
	switch {
	case strings.Contains(text, gmSecondTag):
		return gmSecondScript
	case findTag(text) == tagMain:
		return gmScript()
	}
	return nil
}

// gmResults keys the responses by step of script, by position.
func gmResults(script []step, responses []string) map[string]string {
	out := map[string]string{}
	for i, r := range responses {
		if i < len(script) {
			out[script[i].name] = r
		}
	}
	return out
}

// geminiMock serves the Gemini API: streamGenerateContent plays the
// script; generateContent (the CLI's own checks) and countTokens get
// neutral answers.
func geminiMock(t *testing.T, project string) *mock {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case strings.HasSuffix(r.URL.Path, ":countTokens"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"totalTokens":100}`)
			return
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, js(map[string]any{"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
				"content": map[string]any{"role": "model", "parts": []any{map[string]string{"text": `{"reasoning":"e2e","next_speaker":"user"}`}}}}},
				"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}}))
			return
		case !strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			t.Errorf("gemini mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		text, responses, err := gmConversation(body)
		if err != nil {
			t.Errorf("gemini mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		script := gmScriptOf(text)
		results := gmResults(script, responses)
		var st *step
		if script != nil {
			st = nextStep(script, results, gmID)
		}
		var part map[string]any
		if st == nil {
			part = map[string]any{"text": "E2E done."}
		} else {
			arg := st.arg(results)
			switch st.kind {
			case "read":
				part = map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": filepath.Join(project, arg)}}}
			case "shell":
				part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": arg, "description": "e2e " + st.name}}}
			}
		}
		sse(w, [2]string{"", js(map[string]any{
			"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
				"content": map[string]any{"role": "model", "parts": []any{part}}}},
			"usageMetadata": map[string]int{"promptTokenCount": 1000, "candidatesTokenCount": 10, "totalTokenCount": 1010},
		})})
	})
}

// geminiRun plays the script on Gemini CLI in a fresh sandbox.
func geminiRun(t *testing.T, gemini string, withOmni bool) map[string]string {
	s := newSandbox(t)
	m := geminiMock(t, s.project)
	dir := filepath.Join(s.home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general": map[string]any{"disableAutoUpdate": true}, "privacy": map[string]any{"usageStatisticsEnabled": false}}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(js(settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	if withOmni {
		s.omniInit("--gemini")
	}
	env := []string{"GOOGLE_GEMINI_BASE_URL=" + m.URL, "GEMINI_API_KEY=sk-e2e", "GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true"}
	s.run(runTimeout, env, "node", gemini, "-p", tagMain+": run the script.", "--approval-mode=yolo", "-o", "stream-json", "-m", "gemini-2.5-flash")

	read := gmRead(m, tagMain)
	if withOmni {
		s.checkClaims(read, stepOrder(gmScript()))
		// A second session on the same store: big.txt's lines it was not
		// shown are project scope, the head it was shown session scope.
		// Gemini's frame lines (Output:, Process Group PGID) are not
		// content, so the reply is never only markers, one of them "not
		// shown here": the project fold gives way and its lines are read.
		s.run(runTimeout, env, "node", gemini, "-p", gmSecondTag+": run the script.", "--approval-mode=yolo", "-o", "stream-json", "-m", "gemini-2.5-flash")
		second := gmRead(m, gmSecondTag)
		s.checkClaims(second, stepOrder(gmSecondScript))
		got := second["s2cat"]
		if strings.Contains(got, "not shown here") || !strings.Contains(got, "big line 300") || !strings.Contains(got, "[OMNI: ") {
			t.Errorf("second session: cat big.txt should deliver the lines only the first session read and fold the head it was shown; the model read:\n%s", tail(got, 1500))
		}
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
	}
	return read
}

// gmRead returns what the model read in the longest conversation the
// mock served for a tag's script.
func gmRead(m *mock, tag string) map[string]string {
	var read map[string]string
	for _, r := range m.requests() {
		if !strings.HasSuffix(r.Path, ":streamGenerateContent") {
			continue
		}
		text, res, err := gmConversation(r.Body)
		if err != nil {
			continue
		}
		script := gmScriptOf(text)
		if script == nil || (tag == tagMain) != (findTag(text) == tagMain && !strings.Contains(text, gmSecondTag)) {
			continue
		}
		if len(res) >= len(read) {
			read = gmResults(script, res)
		}
	}
	return read
}

// gmVolatile matches the shell envelope's process group line, which
// changes from run to run.
var gmVolatile = regexp.MustCompile(`(?m)^Process Group PGID: \d+\n?`)

// TestGeminiCLI plays the script on the real Gemini CLI with and without
// omni. A failing command's status is an "Exit Code: N" line in the output.
func TestGeminiCLI(t *testing.T) {
	t.Parallel()
	gemini := cliPath(t, "gemini-cli", geminiSpec, geminiRel)
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return geminiRun(t, gemini, withOmni) })
	checkRead(t, with, without, hostFacts{
		exitText:  func(c int) string { return fmt.Sprintf("Exit Code: %d", c) },
		normalize: func(s string) string { return gmVolatile.ReplaceAllLiteralString(s, "") },
	})
	report(t, "Gemini CLI "+geminiSpec, with, without)
}
