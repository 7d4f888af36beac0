package e2e

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The script every host plays (where the host has the feature): the same
// file read twice, the same command run twice, a failing command twice
// whose output was already shown, a large output twice, a subagent running
// the command again, a retrieve of the fold's handle through the CLI, and,
// after a compaction, the command twice more.
//
// Tags in the prompts tell the mocks which script a conversation plays.
const (
	tagMain  = "E2E-MAIN"
	tagSub   = "E2E-SUB"
	tagAfter = "E2E-AFTER"
	tagMCP   = "E2E-MCP"
)

// step is one scripted tool call. kind is "read" (arg: a file name in the
// project), "shell" (arg: a command) or "agent" (arg: the subagent's
// prompt). arg may depend on what the model read so far (by step name).
type step struct {
	name string
	kind string
	arg  func(read map[string]string) string
}

func fixed(s string) func(map[string]string) string {
	return func(map[string]string) string { return s }
}

// retrieveArg runs `omni retrieve` on the handle of the fold in step from,
// or a harmless echo when there is none (the run without omni).
func retrieveArg(from string) func(map[string]string) string {
	return func(read map[string]string) string {
		if m := handleRe.FindStringSubmatch(read[from]); m != nil {
			return "omni retrieve " + m[1]
		}
		return "echo no-handle"
	}
}

// failCmd fails with exitFail after printing a file already shown.
const (
	failCmd  = "cat big.txt; exit 3"
	exitFail = 3
	largeCmd = "seq 1 12000" // 58,893 chars: over every host's own cap
)

// mainScript is the main conversation's script; withSub adds the subagent
// step (hosts that have subagents).
func mainScript(withSub bool) []step {
	s := []step{
		{"read1", "read", fixed("src.txt")},
		{"read2", "read", fixed("src.txt")},
		{"cat1", "shell", fixed("cat big.txt")},
		{"cat2", "shell", fixed("cat big.txt")},
		{"fail1", "shell", fixed(failCmd)},
		{"fail2", "shell", fixed(failCmd)},
		{"large1", "shell", fixed(largeCmd)},
		{"large2", "shell", fixed(largeCmd)},
	}
	if withSub {
		s = append(s, step{"sub", "agent", fixed(tagSub + ": run the scripted command and report.")})
	}
	return append(s, step{"retrieve", "shell", retrieveArg("cat2")})
}

// subScript is the subagent's: the command the parent already read.
var subScript = []step{{"subcat", "shell", fixed("cat big.txt")}}

// afterScript runs after a compaction: the file the session read (and
// saw folded) before it, twice. (Not big.txt: the retrieve of its handle
// owes the reader one whole delivery, which would hide a missing reset.)
var afterScript = []step{
	{"read3", "read", fixed("src.txt")},
	{"read4", "read", fixed("src.txt")},
}

// mcpScript plays omni's MCP tools (kinds "mcp_run", arg a command, and
// "mcp_retrieve", arg a handle): a command run twice through omni_run, a
// failing one, the fold's handle through omni_retrieve, then a file shown
// by the host's own shell and run again through omni_run (the hooks and
// omni_run share the session's reader).
var mcpScript = []step{
	{"mrun1", "mcp_run", fixed("cat big.txt")},
	{"mrun2", "mcp_run", fixed("cat big.txt")},
	{"mfail", "mcp_run", fixed(failCmd)},
	{"mretrieve", "mcp_retrieve", func(read map[string]string) string {
		if m := handleRe.FindStringSubmatch(read["mrun2"]); m != nil {
			return m[1]
		}
		return "0000000000000001"
	}},
	{"bashsrc", "shell", fixed("cat src.txt")},
	{"mrunsrc", "mcp_run", fixed("cat src.txt")},
}

// scriptFor returns the script a tag plays.
func scriptFor(tag string, withSub bool) []step {
	switch tag {
	case tagSub:
		return subScript
	case tagAfter:
		return afterScript
	case tagMCP:
		return mcpScript
	}
	return mainScript(withSub)
}

// findTag returns the last script tag in text ("" for none).
func findTag(text string) string {
	best, at := "", -1
	for _, tag := range []string{tagMain, tagSub, tagAfter, tagMCP} {
		if i := strings.LastIndex(text, tag); i > at {
			best, at = tag, i
		}
	}
	return best
}

// nextStep returns the first step of script whose call has no result yet
// (results are keyed by call id), or nil when the script is done.
func nextStep(script []step, results map[string]string, id func(string) string) *step {
	for i := range script {
		if _, ok := results[id(script[i].name)]; !ok {
			return &script[i]
		}
	}
	return nil
}

// byName maps call-id-keyed results to step names.
func byName(results map[string]string, id func(string) string, scripts ...[]step) map[string]string {
	out := map[string]string{}
	for _, sc := range scripts {
		for _, s := range sc {
			if r, ok := results[id(s.name)]; ok {
				out[s.name] = r
			}
		}
	}
	return out
}

// The script's files: distinct lines, deterministic.
var (
	srcText = lines("src", 120)
	bigText = lines("big", 300)
)

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		h := sha256.Sum256([]byte(fmt.Sprint(prefix, i)))
		fmt.Fprintf(&b, "%s line %03d: config_value_%d = %x\n", prefix, i, i, h[:8])
	}
	return b.String()
}

func writeScriptFiles(t *testing.T, dir string) {
	t.Helper()
	for name, text := range map[string]string{"src.txt": srcText, "big.txt": bigText} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// missingLines counts the lines of want that do not appear in got.
func missingLines(got, want string) int {
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		if !strings.Contains(got, l) {
			n++
		}
	}
	return n
}

// hostFacts are what the shared assertions need to know about a host.
type hostFacts struct {
	// exitText is how the model reads a command's exit status N; "" when
	// the host never shows it.
	exitText func(code int) string
	// sub and compaction: the host has them in this suite.
	sub, compaction bool
	// readFrame lists text the host wraps every read in, which a folded
	// read must keep.
	readFrame []string
	// normalize removes what differs between two runs of the same call
	// (Codex's chunk id and wall time); nil keeps the text.
	normalize func(string) string
}

// checkRead asserts what the model read with omni registered (read) against
// what it read on the same script without omni (base).
func checkRead(t *testing.T, read, base map[string]string, h hostFacts) {
	t.Helper()
	need := func(name string) string {
		t.Helper()
		r, ok := read[name]
		if !ok {
			t.Errorf("%s: the model never read a result (steps read: %v)", name, keys(read))
		}
		return r
	}
	whole := func(name, want string) {
		t.Helper()
		if r := need(name); missingLines(r, want) > 0 {
			t.Errorf("%s: the model read %d chars missing %d lines of the output; want it whole:\n%s", name, len(r), missingLines(r, want), tail(r, 600))
		}
	}
	folded := func(name, first string) {
		t.Helper()
		r := need(name)
		if !strings.Contains(r, "[OMNI:") || !handleRe.MatchString(r) {
			t.Errorf("%s: want a marker with a handle (the repeat folded), the model read %d chars:\n%s", name, len(r), tail(r, 600))
		}
		if len(r) >= len(read[first])/2 {
			t.Errorf("%s: the repeat is %d chars against %d the first time; want it folded", name, len(r), len(read[first]))
		}
	}
	whole("read1", srcText)
	folded("read2", "read1")
	for _, f := range h.readFrame {
		for _, name := range []string{"read1", "read2"} {
			if !strings.Contains(read[name], f) {
				t.Errorf("%s: the host's frame %q is lost:\n%s", name, f, tail(read[name], 400))
			}
		}
	}
	whole("cat1", bigText)
	folded("cat2", "cat1")
	for _, f := range []string{"fail1", "fail2"} {
		norm := h.normalize
		if norm == nil {
			norm = func(s string) string { return s }
		}
		if norm(need(f)) != norm(base[f]) {
			t.Errorf("%s: a failing command's output was changed: the model read %d chars with omni, %d without:\n%s", f, len(read[f]), len(base[f]), tail(read[f], 600))
		}
		if h.exitText != nil {
			if want := h.exitText(exitFail); !strings.Contains(read[f], want) {
				t.Errorf("%s: the model did not read the exit status %q:\n%s", f, want, tail(read[f], 400))
			}
		}
		if strings.Contains(read[f], "[OMNI:") {
			t.Errorf("%s: a failing command's output holds a marker:\n%s", f, tail(read[f], 400))
		}
	}
	if h.sub {
		whole("subcat", bigText)
	}
	// Hosts drop the output's final newline.
	if r := need("retrieve"); !strings.Contains(r, strings.TrimSuffix(bigText, "\n")) {
		t.Errorf("retrieve: the model did not read big.txt's exact bytes (%d chars):\n%s", len(r), tail(r, 600))
	}
	if h.compaction {
		whole("read3", srcText)
		folded("read4", "read3")
	}
}

// readChars sums the characters of tool output the model read, over every
// step but the retrieve (absent from the run without omni).
func readChars(read map[string]string) int {
	n := 0
	for k, v := range read {
		if k != "retrieve" {
			n += len(v)
		}
	}
	return n
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// report logs the with/without figure of one host.
func report(t *testing.T, host string, with, without map[string]string) {
	w, wo := readChars(with), readChars(without)
	if wo == 0 {
		return
	}
	t.Logf("%s: the model read %d chars of tool output with omni, %d without (%+.0f%%)", host, w, wo, 100*float64(w-wo)/float64(wo))
	for _, k := range keys(without) {
		t.Logf("  %-8s %7d %7d", k, len(with[k]), len(without[k]))
	}
}

// runBoth plays a host's script twice at once, with and without omni, and
// returns what the model read in each.
func runBoth(t *testing.T, play func(t *testing.T, withOmni bool) map[string]string) (with, without map[string]string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Run("without", func(t *testing.T) { without = play(t, false) })
	}()
	t.Run("with", func(t *testing.T) { with = play(t, true) })
	<-done
	return with, without
}

// markerRe finds a marker that claims its lines were already shown to this
// reader, and its handle.
var markerRe = regexp.MustCompile(`\[OMNI:[^\]]*already shown[^\]]*omni retrieve ([0-9a-f]{16})[^\]]*\]`)

// checkClaims asserts that every "already shown" marker the model read
// names lines the model did read whole, in this run, before: the bytes
// behind each handle (fetched with the CLI from the run's store) must each
// appear, line by line, in an earlier tool result. A host that cuts an
// output after the hook saw it would make such a claim false.
func (s *sandbox) checkClaims(read map[string]string, order []string) {
	t := s.t
	t.Helper()
	for i, name := range order {
		for _, m := range markerRe.FindAllStringSubmatch(read[name], -1) {
			got := s.run(time.Minute, nil, filepath.Join(binDir, "omni"), "retrieve", m[1])
			var earlier strings.Builder
			for _, prev := range order[:i] {
				earlier.WriteString(read[prev])
			}
			if n := missingLines(earlier.String(), got); n > 0 {
				t.Errorf("%s: marker %q claims %d lines the model never read before", name, m[0], n)
			}
		}
	}
}

// stepOrder lists the steps of scripts in the order they run.
func stepOrder(scripts ...[]step) []string {
	var out []string
	for _, sc := range scripts {
		for _, s := range sc {
			out = append(out, s.name)
		}
	}
	return out
}
