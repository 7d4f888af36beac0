package distill_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/pipeline"
)

// The shared fixtures live next to the repository (../shared).
const (
	dgRealDir = "../../../shared/fixtures/real"
	dgOmniDir = "../../../shared/fixtures/omni"
	dgGolden  = "testdata"
)

// dgFactWords is check.py's FACT_WORDS: fact key -> words that, next to a
// number, state that count.
var dgFactWords = map[string][]string{
	"passed":            {"passed", "passing", "pass"},
	"failed":            {"failed", "failing", "failures", "failure", "fail"},
	"failures":          {"failures", "failure", "failed"},
	"skipped":           {"skipped", "skip", "skips"},
	"errors":            {"errors", "error"},
	"warnings":          {"warnings", "warning"},
	"ignored":           {"ignored"},
	"xfailed":           {"xfailed"},
	"xpassed":           {"xpassed"},
	"todo":              {"todo"},
	"problems":          {"problems", "problem"},
	"tests":             {"tests"},
	"total":             {"total"},
	"expected_failures": {"expected failures"},
}

// dgPairRE caches check.py's two patterns per word.
var dgPairRE = map[string][2]*regexp.Regexp{}

// dgPairs ports check.py's pairs(): every number stated next to word, as
// "12 passed" (the number not preceded by a word character or ".") or
// "passed: 12" / "failures=2" (not followed by a word character or ".").
// Go's regexp has no look-around, so the two guards are checked by hand;
// for a greedy digit run they decide exactly as Python's do.
func dgPairs(text, word string) []int {
	re, ok := dgPairRE[word]
	if !ok {
		w := regexp.QuoteMeta(word)
		re = [2]*regexp.Regexp{
			regexp.MustCompile(`(?i)(\d+)\s+` + w + `\b`),
			regexp.MustCompile(`(?i)\b` + w + `\s*[:=]\s*(\d+)`),
		}
		dgPairRE[word] = re
	}
	var found []int
	wordish := func(r rune) bool { return r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for _, m := range re[0].FindAllStringSubmatchIndex(text, -1) {
		if m[2] > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:m[2]])
			if wordish(r) {
				continue
			}
		}
		found = append(found, dgAtoi(text[m[2]:m[3]]))
	}
	for _, m := range re[1].FindAllStringSubmatchIndex(text, -1) {
		if m[3] < len(text) {
			r, _ := utf8.DecodeRuneInString(text[m[3]:])
			if wordish(r) {
				continue
			}
		}
		found = append(found, dgAtoi(text[m[2]:m[3]]))
	}
	return found
}

func dgAtoi(s string) int {
	n := 0
	for _, c := range s {
		if n > 1<<40 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// dgMeta is a case's meta.json.
type dgMeta struct {
	Command       string         `json:"command"`
	ExitCode      int            `json:"exit_code"`
	MustKeep      []string       `json:"must_keep"`
	MustKeepRegex []string       `json:"must_keep_regex"`
	Facts         map[string]any `json:"facts"`
	Structured    bool           `json:"structured"`
}

// dgViolations ports check.py's check_case for one distilled text.
func dgViolations(meta dgMeta, raw, got string) []string {
	var v []string
	if meta.Structured && got != raw {
		v = append(v, "structured output not byte-identical")
	}
	for _, line := range meta.MustKeep {
		s := strings.TrimSpace(line)
		if s != "" && !strings.Contains(got, s) {
			v = append(v, "missing must_keep: "+dgCut(s, 160))
		}
	}
	for _, rx := range meta.MustKeepRegex {
		re, err := regexp.Compile("(?m)" + rx)
		if err != nil {
			v = append(v, "bad regex "+rx)
			continue
		}
		if !re.MatchString(got) {
			v = append(v, "missing must_keep_regex: "+dgCut(rx, 160))
		}
	}
	keys := make([]string, 0, len(meta.Facts))
	for k := range meta.Facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f, ok := meta.Facts[key].(float64)
		words, known := dgFactWords[key]
		if !ok || f != float64(int(f)) || !known {
			continue
		}
		val := int(f)
		for _, word := range words {
			rawNums := map[int]bool{}
			for _, n := range dgPairs(raw, word) {
				rawNums[n] = true
			}
			for _, n := range dgPairs(got, word) {
				if n != val && !rawNums[n] {
					v = append(v, fmt.Sprintf("contradicted fact %s=%d: distilled text says '%d %s'", key, val, n, word))
				}
			}
		}
	}
	return v
}

func dgCut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// dgUnchanged is the golden of an output that passes unchanged (so the
// goldens do not copy the shared fixtures).
const dgUnchanged = "[golden: the output passes unchanged]\n"

// update rewrites the goldens under testdata/ (go test -update).
var update = flag.Bool("update", false, "rewrite the goldens under testdata/<suite>/<case>/golden.txt")

// dgGoldenCheck compares text with the golden file (or rewrites it under
// -update). An output equal to its raw input is stored as dgUnchanged.
func dgGoldenCheck(t *testing.T, path, raw, text string) {
	t.Helper()
	if text == raw {
		text = dgUnchanged
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden %s (run go test -run %s -update): %v", path, t.Name(), err)
	}
	if string(want) != text {
		t.Errorf("%s: distilled text differs from the golden (run with -update after checking the diff)\n--- got\n%s", path, text)
	}
}

// TestDistillRealFixtures runs Shorten over every case of
// shared/fixtures/real and asserts what check.py asserts: every must_keep
// line present, every must_keep_regex matching, no contradicted fact,
// structured cases byte-identical; plus Shorten's own invariants and the
// goldens under testdata/real/<case>/golden.txt. It reports the total saved share,
// whose target is 45%.
func TestDistillRealFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(dgRealDir, "*", "meta.json"))
	if len(dirs) == 0 {
		sharedtest.Skip(t, "../shared/fixtures/real")
	}
	sort.Strings(dirs)
	tin, tout, bad := 0, 0, 0
	for _, m := range dirs {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		var meta dgMeta
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		rawB, err := os.ReadFile(filepath.Join(dir, "output.txt"))
		if err != nil {
			t.Fatal(err)
		}
		raw := string(rawB)
		req := pipeline.ShortenRequest{Command: meta.Command, Text: raw, ExitCode: meta.ExitCode}
		res := pipeline.Shorten(req)
		t.Run(name, func(t *testing.T) {
			shCheck(t, req, res)
			if v := dgViolations(meta, raw, res.Text); len(v) > 0 {
				bad++
				for _, s := range v {
					t.Error(s)
				}
			}
			dgGoldenCheck(t, filepath.Join(dgGolden, "real", name, "golden.txt"), raw, res.Text)
		})
		tin += len(raw)
		tout += len(res.Text)
		t.Logf("%-28s %7d -> %7d  saved %5.1f%%  distiller=%q reason=%q", name, len(raw), len(res.Text),
			100*(1-float64(len(res.Text))/float64(len(raw))), res.Distiller, res.Reason)
	}
	saved := 100 * (1 - float64(tout)/float64(tin))
	t.Logf("%d cases, %d with violations, bytes %d -> %d (saved %.1f%%)", len(dirs), bad, tin, tout, saved)
	if saved < 45 {
		t.Errorf("saved %.1f%% over the real fixtures, target 45%%", saved)
	}
}

// dgOmniCases maps the upstream fixtures (shared/fixtures/omni) to the
// command and exit code that produced them (from its INDEX.md).
var dgOmniCases = []struct {
	file, cmd string
	exit      int
	keep      []string // lines that must be read (from INDEX.md's "Keep")
	exact     bool     // must pass byte for byte
}{
	{"cargo_test_500.txt", "cargo test", 101, []string{"test result: FAILED. 490 passed; 10 failed; 0 ignored; 0 measured; 0 filtered out; finished in 12.34s",
		"test module::perf::test_cache_hit_ratio ... FAILED", "thread 'module::perf::test_no_allocation_overhead' panicked at src/perf.rs:42:5:"}, false},
	{"cargo_test_pass.txt", "cargo test", 0, nil, true},
	{"cargo_build.txt", "cargo build", 0, nil, true},
	{"cargo_build_errors.txt", "cargo build", 101, nil, true},
	{"cargo_build_large.txt", "cargo build", 0, []string{"Finished"}, false},
	{"build_error.txt", "make", 2, nil, false},
	{"build_success.txt", "make", 0, []string{"Build succeeded in 4.2s", "Build Summary: 8 files compiled"}, false},
	{"heavy_noise.txt", "docker build -t app .", 0, []string{"Successfully built a1b2c3d4e5f6"}, false},
	{"go_test_fail.txt", "go test ./...", 1, nil, true},
	{"go_test_pass.txt", "go test ./...", 0, nil, true},
	{"pytest_fail.txt", "pytest", 1, []string{"3 failed, 42 passed in 3.15s"}, false},
	{"pytest_failures.txt", "pytest", 1, []string{"FAILED tests/test_omni.py::test_failure - assert 1 == 2", "E       assert 1 == 2", "tests/test_omni.py:5: AssertionError"}, false},
	{"pytest_pass.txt", "pytest", 0, []string{"42 passed in 2.35s"}, false},
	{"python_m_pytest.txt", "python -m pytest", 0, nil, false},
	{"bun_test_fail.txt", "bun test", 1, []string{"13 pass", "2 fail"}, false},
	{"bun_test_pass.txt", "bun test", 0, []string{"20 pass", "0 fail", "Ran 4 tests across 4 files"}, false},
	{"jest_fail.txt", "npx jest", 1, nil, true},
	{"jest_pass.txt", "npx jest", 0, nil, false},
	{"vitest_mixed.txt", "npx vitest run", 1, []string{"→ expected 429 to equal 200", "→ TokenExpiredError: jwt expired", "→ expected true to be false",
		"❯ src/auth/__tests__/login.test.ts:55:10", "Test Files  2 failed | 8 passed (10)", "Tests  3 failed | 48 passed (51)"}, false},
	{"vitest_pass.txt", "npx vitest run", 0, nil, true},
	{"playwright_fail.txt", "npx playwright test", 1, []string{"Error: Timed out 5000ms waiting for expect(locator).toBeVisible()",
		"Screenshot comparison failed:", "at tests/login.spec.ts:20:56", "at tests/dashboard.spec.ts:15:23", "2 failed", "22 passed (45.2s)"}, false},
	{"tsc_errors.txt", "npx tsc --noEmit", 2, nil, true},
	{"eslint_errors.txt", "npx eslint .", 1, nil, true},
	{"prettier_check.txt", "npx prettier --check .", 1, nil, true},
	{"prettier_write.txt", "npm run format", 0, nil, false},
	{"npm_install.txt", "npm install", 0, []string{"found 0 vulnerabilities"}, false},
	{"npm_install_full.txt", "npm install", 0, nil, false},
	{"npm_run_build.txt", "npm run build", 0, nil, false},
	{"npm_run_test.txt", "npm test", 1, []string{"→ AssertionError: expected 200, received 500"}, false},
	{"npm_run_verify.txt", "npm run verify", 0, nil, false},
	{"pnpm_install.txt", "pnpm install", 0, nil, true},
	{"yarn_install.txt", "yarn install", 0, nil, false},
	{"yarn_install_full.txt", "yarn install", 0, nil, false},
	{"vite_build.txt", "npx vite build", 0, nil, false},
	{"vite_dev_server.txt", "npx vite", 0, nil, true},
	{"webpack_build.txt", "npx webpack", 0, nil, false},
	{"git_status_dirty.txt", "git status", 0, nil, false},
	{"git_dirty.txt", "git status", 0, []string{"tests/fixtures/"}, false},
	{"git_clean.txt", "git status", 0, nil, true},
	{"git_diff.txt", "git diff", 0, nil, false},
	{"git_diff_multi_file.txt", "git diff", 0, nil, false},
	{"git_log.txt", "git log --oneline", 0, nil, true},
	{"git_add.txt", "git add -v .", 0, nil, true},
	{"docker_build.txt", "docker build -t omni-core:latest .", 0, []string{"omni-core:latest"}, false},
	{"docker_build_error.txt", "docker build .", 1, []string{"Step 4/6 : RUN npm ci --production", "npm ERR! code ERESOLVE",
		"npm ERR! Could not resolve dependency: peer react@\"^17.0.0\" from @mui/material@5.14.0"}, false},
	{"docker_build_layered.txt", "docker build .", 0, nil, false},
	{"docker_build_success.txt", "docker build .", 0, nil, true},
	{"docker_compose.txt", "docker compose up", 0, nil, false},
	{"docker_compose_start.txt", "docker compose start", 0, nil, true},
	{"docker_ps_mixed.txt", "docker ps -a", 0, nil, true},
	{"kubectl_get_pods_mixed.txt", "kubectl get pods", 0, nil, true},
	{"kubectl_pods_mixed.txt", "kubectl get pods", 0, nil, true},
	{"terraform_plan.txt", "terraform plan", 0, nil, true},
	{"terraform_plan_cloud.txt", "terraform plan", 0, nil, true},
	{"terraform_apply.txt", "terraform apply -auto-approve", 0, nil, true},
	{"az_vm_list.json", "az vm list -o json", 0, nil, true},
	{"grafana_dashboard.json", "curl -s http://grafana/api/dashboards/uid/x", 0, nil, true},
	{"nginx_access_log.txt", "tail access.log", 0, nil, true},
	{"psql_error.txt", "psql -U myuser", 2, nil, true},
	{"sql_query.txt", "mysql -e 'SELECT * FROM t'", 0, nil, true},
	{"sql_create.txt", "cat schema.sql", 0, nil, true},
	{"trivy.txt", "trivy image app:latest", 0, nil, true},
	{"trivy_output.txt", "trivy image my-image:latest", 0, nil, true},
	{"semgrep.txt", "semgrep --config auto", 0, nil, true},
	{"cat_plain.txt", "cat lorem.txt", 0, nil, true},
	{"cat_readme.txt", "cat README.md", 0, nil, true},
	{"env_output.txt", "env", 0, nil, true}, // its credentials are the door's (hooks/redact.go): Shorten sees them redacted
	{"find_project_output.txt", "find . -type f", 0, nil, true},
	{"grep_recursive_output.txt", "grep -rn error src/", 0, nil, true},
	{"ls_la_output.txt", "ls -la", 0, nil, true},
}

// TestDistillOmniFixtures runs Shorten over the upstream fixtures with
// the commands that produced them: invariants, the lines INDEX.md says
// must be read, byte-exact passthrough where it says so, no secret left in
// env output, and goldens under testdata/omni/<case>/golden.txt.
func TestDistillOmniFixtures(t *testing.T) {
	if _, err := os.Stat(dgOmniDir); err != nil {
		sharedtest.Skip(t, "../shared/fixtures/omni")
	}
	tin, tout := 0, 0
	for _, c := range dgOmniCases {
		b, err := os.ReadFile(filepath.Join(dgOmniDir, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		raw := string(b)
		req := pipeline.ShortenRequest{Command: c.cmd, Text: raw, ExitCode: c.exit}
		res := pipeline.Shorten(req)
		tin += len(raw)
		tout += len(res.Text)
		t.Run(c.file, func(t *testing.T) {
			shCheck(t, req, res)
			if c.exact && res.Text != raw {
				t.Errorf("must pass byte for byte; got\n%s", res.Text)
			}
			for _, k := range c.keep {
				if !strings.Contains(res.Text, k) {
					t.Errorf("missing %q", k)
				}
			}
			dgGoldenCheck(t, filepath.Join(dgGolden, "omni", strings.TrimSuffix(c.file, filepath.Ext(c.file)), "golden.txt"), raw, res.Text)
		})
	}
	t.Logf("omni fixtures: bytes %d -> %d (saved %.1f%%)", tin, tout, 100*(1-float64(tout)/float64(tin)))
}

// TestDistillShortenCorpus replays every tool output of the shared corpus
// (shared/corpus/*.jsonl) through Shorten and reports the saved share per
// tool kind; it fails if an output loses a failure line (other than by the
// final 50 KB cut, which says so and archives the middle) or breaks an
// invariant. Skipped with -short and when the corpus is absent.
func TestDistillShortenCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus replay skipped with -short")
	}
	files, _ := filepath.Glob("../../../shared/corpus/*.jsonl")
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	type agg struct{ n, in, out, changed int }
	per := map[string]*agg{}
	total := &agg{}
	lost, truncatedLost, dist := 0, 0, map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line == "" {
				continue
			}
			var r struct {
				Tool     string `json:"tool"`
				RawTool  string `json:"raw_tool"`
				Input    string `json:"input"`
				Output   string `json:"output"`
				ExitCode *int   `json:"exit_code"`
				IsError  bool   `json:"is_error"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			req := pipeline.ShortenRequest{Text: r.Output}
			switch r.RawTool {
			case "bash", "Bash", "run":
				req.Tool, req.Command = "Bash", r.Input
			default:
				req.Tool = r.Tool
			}
			if r.ExitCode != nil {
				req.ExitCode = *r.ExitCode
			} else if r.IsError {
				req.ExitCode = 1
			}
			res := pipeline.Shorten(req)
			shCheckSoft(t, req, res, &lost, &truncatedLost)
			if res.Distiller != "" && res.Reason == "" {
				dist[res.Distiller]++
			}
			if res.Collapsed {
				dist["(collapse)"]++
			}
			for _, a := range []*agg{total, per[r.Tool]} {
				if a == nil {
					a = &agg{}
					per[r.Tool] = a
				}
				a.n++
				a.in += len(r.Output)
				a.out += len(res.Text)
				if res.Changed {
					a.changed++
				}
			}
		}
	}
	kinds := make([]string, 0, len(per))
	for k, a := range per {
		if a.in > 200_000 {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return per[kinds[i]].in > per[kinds[j]].in })
	for _, k := range kinds {
		a := per[k]
		t.Logf("%-32s %6d calls %10d -> %10d bytes  saved %5.1f%%  (%d rewritten)", k, a.n, a.in, a.out, 100*(1-float64(a.out)/float64(a.in)), a.changed)
	}
	t.Logf("corpus: %d calls, %d -> %d bytes, saved %.1f%%, %d rewritten", total.n, total.in, total.out,
		100*(1-float64(total.out)/float64(total.in)), total.changed)
	t.Logf("distillations delivered: %v", dist)
	t.Logf("outputs losing a failure line: %d (plus %d only through the final 50 KB cut)", lost, truncatedLost)
	if lost > 0 {
		t.Errorf("%d outputs lost a failure line", lost)
	}
}

// shCheckSoft is shCheck for the corpus: it counts lost failure lines
// instead of stopping, and separates those the final cut dropped.
func shCheckSoft(t *testing.T, req pipeline.ShortenRequest, res pipeline.ShortenResult, lost, truncLost *int) {
	t.Helper()
	if !res.Changed {
		return
	}
	body := req.Text // the door redacted it already
	if res.Redacted == 0 && len(res.Text) > len(req.Text) {
		t.Errorf("output grew without redaction (%s)", dgCut(req.Command, 80))
	}
	outKeys := map[uint64]bool{}
	for _, ln := range pipeline.SplitLines(nil, res.Text) {
		outKeys[ln.Key] = true
	}
	for _, ln := range pipeline.SplitLines(nil, body) {
		if ln.Key != 0 && pipeline.IsFailureLine(body[ln.Start:ln.End]) && !outKeys[ln.Key] {
			if strings.Contains(res.Text, "[OMNI: output truncated, ") {
				*truncLost++
			} else {
				*lost++
				t.Logf("lost failure line %q (command %q)", dgCut(body[ln.Start:ln.End], 120), dgCut(req.Command, 80))
			}
			return
		}
	}
}
