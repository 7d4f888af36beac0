package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Cline CLI 3.0.65 (docs/HOSTS.md "Cline CLI 3.0.65"): the native binary
// of the platform package, `cline -y`, against a mock of the Chat
// Completions API (the openai-compatible provider in the sandbox's
// ~/.cline). The binary needs the whole `cline` package beside it: its
// plugin sandbox (node) imports @cline/shared from there. What the model
// read is the tool messages of later requests: for run_commands and
// read_files, the JSON of an array of {query, result, error, success}.
const (
	clineSpec = "cline@3.0.65"
	clineRel  = "node_modules/@cline/cli-linux-x64/bin/cline"
)

func clID(name string) string { return "call_e2e_" + name }

// clineScript is Cline's own script: Cline cuts every result string over
// hooks.ClineOutputCap characters when it builds a request, so the repeats
// are of src.txt (under the cap; big.txt is over it), and seq 1 12000 shows
// that an output over the cap is left alone. read_files is not shortened
// (hooks.ClineOutputCap and the hooks package say why). No subagent (none
// is offered with -y); the compaction is a run of its own (clinePre).
var clineScript = []step{
	{"read1", "read", fixed("src.txt")},
	{"read2", "read", fixed("src.txt")},
	{"cat1", "shell", fixed("cat src.txt")},
	{"cat2", "shell", fixed("cat src.txt")},
	{"fail1", "shell", fixed("cat src.txt; exit 3")},
	{"fail2", "shell", fixed("cat src.txt; exit 3")},
	{"large1", "shell", fixed(largeCmd)},
	{"large2", "shell", fixed(largeCmd)},
	{"retrieve", "shell", retrieveArg("cat2")},
}

// clineMock serves POST /v1/chat/completions: the script, then the
// submit_and_exit call that ends a `cline -y` run (a plain answer would
// only get another request).
func clineMock(t *testing.T, project string) *mock {
	var mu sync.Mutex
	n := 0
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("cline mock: unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		_, _, results, _, err := ocConversation(body)
		if err != nil {
			t.Errorf("cline mock: malformed request: %v\n%s", err, tail(string(body), 500))
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		n++
		runaway := n > 3*len(clineScript)
		mu.Unlock()
		if runaway {
			t.Errorf("cline mock: %d requests for a script of %d calls", n, len(clineScript))
			http.Error(w, "runaway", 500)
			return
		}
		st := nextStep(clineScript, results, clID)
		if st == nil {
			ocChunks(w, &[3]string{clID("submit"), "submit_and_exit", js(map[string]any{"summary": "E2E script finished.", "verified": true})}, "", 1000)
			return
		}
		arg := st.arg(clineResults(byName(results, clID, clineScript)))
		var name string
		var input any
		switch st.kind {
		case "read":
			name, input = "read_files", map[string]any{"files": []any{map[string]any{"path": filepath.Join(project, arg)}}}
		case "shell":
			name, input = "run_commands", map[string]any{"commands": []string{arg}}
		}
		ocChunks(w, &[3]string{clID(st.name), name, js(input)}, "", 1000)
	})
}

// The compaction run: src.txt's cat twice, then outputs that fill the
// small context window given to the model (clineWindow) until Cline
// compacts, then the cat twice more: the first after the compaction must
// be whole again.
var (
	clinePre = []step{
		{"k1", "shell", fixed("cat src.txt")},
		{"k2", "shell", fixed("cat src.txt")},
		{"fill1", "shell", fixed("seq 1 3000")},
		{"fill2", "shell", fixed("seq 2 3000")},
		{"fill3", "shell", fixed("seq 3 3000")},
		{"fill4", "shell", fixed("seq 4 3000")},
	}
	clineAfter = []step{
		{"k3", "shell", fixed("cat src.txt")},
		{"k4", "shell", fixed("cat src.txt")},
	}
)

// clineWindow is the context window, in tokens, of the compaction run's
// model: Cline 3.0.65 compacts at 90% of it (10,800 measured).
const clineWindow = 12000

// clineCompactMock plays clinePre until a request no longer holds k1's
// result (Cline compacted), then clineAfter.
func clineCompactMock(t *testing.T) *mock {
	var mu sync.Mutex
	issued, compacted, n := map[string]bool{}, false, 0
	return newMock(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		_, _, results, _, err := ocConversation(body)
		if err != nil || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("cline mock: malformed request %s: %v", r.URL.Path, err)
			http.Error(w, "malformed", 400)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		if _, ok := results[clID("k1")]; issued["k1"] && !ok {
			compacted = true
		}
		var st *step
		switch {
		case n > 40:
			t.Errorf("cline mock: %d requests", n)
			http.Error(w, "runaway", 500)
			return
		case !compacted:
			if st = nextStep(clinePre, results, clID); st == nil {
				t.Errorf("cline mock: no compaction after %d calls", len(clinePre))
			}
		default:
			st = nextStep(clineAfter, results, clID)
		}
		if st == nil {
			ocChunks(w, &[3]string{clID("submit"), "submit_and_exit", js(map[string]any{"summary": "E2E script finished.", "verified": true})}, "", 1000)
			return
		}
		issued[st.name] = true
		ocChunks(w, &[3]string{clID(st.name), "run_commands", js(map[string]any{"commands": []string{st.arg(nil)}})}, "", 1000)
	})
}

// clineResults maps each step to the result strings the model read in its
// tool message (one per command or file, joined), or the whole message
// when it is not Cline's array of entries.
func clineResults(read map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range read {
		var es []struct {
			Result string `json:"result"`
		}
		if json.Unmarshal([]byte(v), &es) != nil {
			out[k] = v
			continue
		}
		var b strings.Builder
		for _, e := range es {
			b.WriteString(e.Result)
		}
		out[k] = b.String()
	}
	return out
}

// clineRun plays the script on Cline CLI in a fresh sandbox and returns
// each step's tool message as the model read it; compact plays the
// compaction run instead (with omni).
func clineRun(t *testing.T, cline string, withOmni, compact bool) map[string]string {
	s := newSandbox(t)
	var m *mock
	model := map[string]any{"provider": "openai-compatible", "apiKey": "sk-e2e", "model": "gpt-4.1"}
	args := []string{"-y", tagMain + ": run the script."}
	if compact {
		m = clineCompactMock(t)
		model["contextWindow"] = clineWindow
		args = append([]string{"--compaction", "basic"}, args...)
	} else {
		m = clineMock(t, s.project)
	}
	model["baseUrl"] = m.URL + "/v1"
	settings := filepath.Join(s.home, ".cline", "data", "settings")
	if err := os.MkdirAll(settings, 0o755); err != nil {
		t.Fatal(err)
	}
	// What `cline auth -p openai-compatible -k … -m … -b …` writes.
	// Without updatedAt, 3.0.65 ignores the entry and calls Cline's own
	// service instead.
	prov := map[string]any{"version": 1, "lastUsedProvider": "openai-compatible", "modes": map[string]any{},
		"providers": map[string]any{"openai-compatible": map[string]any{
			"settings":  model,
			"updatedAt": "2026-12-01T00:00:00.000Z", "tokenSource": "manual"}}}
	if err := os.WriteFile(filepath.Join(settings, "providers.json"), []byte(js(prov)), 0o644); err != nil {
		t.Fatal(err)
	}
	if withOmni {
		s.omniInit("--cline")
	}
	// Cline gives its plugin sandbox 4 s to import the plugins, then goes
	// on without them; a loaded machine needs longer.
	s.run(runTimeout, []string{"CLINE_PLUGIN_IMPORT_TIMEOUT_MS=120000"}, cline, args...)
	all := map[string]string{}
	for _, r := range m.requests() {
		_, _, res, _, _ := ocConversation(r.Body)
		for k, v := range res {
			all[k] = v
		}
	}
	script := clineScript
	if compact {
		script = append(append([]step(nil), clinePre...), clineAfter...)
	}
	read := byName(all, clID, script)
	if withOmni {
		s.checkClaims(clineResults(read), stepOrder(script))
		if l := s.omniLog(); l != "" {
			t.Logf("omni.log:\n%s", tail(l, 2000))
		}
		b, _ := os.ReadFile(filepath.Join(s.home, ".cline", "data", "logs", "cline.log"))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "plugin loading failed") || strings.Contains(l, "Invalid plugin") {
				t.Errorf("Cline did not load omni's plugin: %s", tail(l, 1500))
			}
		}
	}
	return read
}

// TestCline plays Cline's script on the real Cline CLI with and without
// omni.
func TestCline(t *testing.T) {
	t.Parallel()
	cline := cliPath(t, "cline", clineSpec, clineRel)
	if _, err := os.Stat(filepath.Join(clisDir(), "cline", "node_modules", "@cline", "shared")); err != nil {
		t.Skipf("%s is installed without @cline/shared, which its plugins need: run e2e/install.sh", clineSpec)
	}
	// The compaction run goes beside the other two.
	var compacted map[string]string
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Run("compaction", func(t *testing.T) { compacted = clineRun(t, cline, true, true) })
	}()
	with, without := runBoth(t, func(t *testing.T, withOmni bool) map[string]string { return clineRun(t, cline, withOmni, false) })
	<-done
	rc := clineResults(compacted)
	for _, k := range []string{"k1", "k3"} {
		if missingLines(rc[k], srcText) > 0 || strings.Contains(rc[k], "[OMNI:") {
			t.Errorf("compaction: %s: want src.txt whole (the first after a start or a compaction), the model read %d chars:\n%s", k, len(rc[k]), tail(rc[k], 400))
		}
	}
	for _, k := range []string{"k2", "k4"} {
		if !handleRe.MatchString(rc[k]) || len(rc[k]) >= len(rc["k1"])/2 {
			t.Errorf("compaction: %s: want the repeat folded, the model read %d chars:\n%s", k, len(rc[k]), tail(rc[k], 400))
		}
	}
	rw, rwo := clineResults(with), clineResults(without)
	// The reads' entries name the file by its path, which differs between
	// the two sandboxes: their result strings are compared.
	for _, name := range []string{"read1", "read2", "fail1", "fail2", "large1", "large2"} {
		if _, ok := with[name]; !ok {
			t.Errorf("%s: the model never read a result (steps read: %v)", name, keys(with))
		} else if rw[name] != rwo[name] {
			t.Errorf("%s: the model read %d chars with omni, %d without; want it untouched:\n%s", name, len(with[name]), len(without[name]), tail(with[name], 600))
		}
	}
	for _, f := range []string{"fail1", "fail2"} {
		if !strings.Contains(with[f], `"error":"Command exited with code 3"`) || !strings.Contains(rw[f], "[Command exited with code 3]") {
			t.Errorf("%s: the model did not read the exit status:\n%s", f, tail(with[f], 400))
		}
	}
	if missingLines(rw["cat1"], srcText) > 0 {
		t.Errorf("cat1: the model read %d chars missing %d lines of src.txt:\n%s", len(rw["cat1"]), missingLines(rw["cat1"], srcText), tail(rw["cat1"], 600))
	}
	if r := rw["cat2"]; !strings.Contains(r, "[OMNI:") || !handleRe.MatchString(r) || len(r) >= len(rw["cat1"])/2 {
		t.Errorf("cat2: want the repeat folded to a marker with a handle; the model read %d chars (%d the first time):\n%s", len(r), len(rw["cat1"]), tail(r, 600))
	}
	if !strings.Contains(with["cat2"], `"success":true`) {
		t.Errorf("cat2: Cline's entry fields are lost:\n%s", tail(with["cat2"], 400))
	}
	if r := rw["retrieve"]; !strings.Contains(r, strings.TrimSuffix(srcText, "\n")) {
		t.Errorf("retrieve: the model did not read src.txt's exact bytes (%d chars):\n%s", len(r), tail(r, 600))
	}
	if !strings.Contains(rwo["large1"], "...[truncated ") {
		t.Errorf("large1: Cline did not cut it; the script wants an output over hooks.ClineOutputCap (%d chars):\n%s", len(rwo["large1"]), tail(rwo["large1"], 300))
	}
	report(t, "Cline CLI "+clineSpec, with, without)
}
