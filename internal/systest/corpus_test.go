package systest

// The corpus oracle: replays every real session of ../shared/corpus through
// the bench (the Claude Code hook path) and proves, independently of the
// ledger, that what omni delivered is honest: every marker expands to the
// raw lines it replaced, and the properties a)–g) of TestCorpusOracle hold.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/linediff"
	"github.com/omnictx/omni/pipeline"
)

// readBenchOut reads an --out file.
func readBenchOut(t *testing.T, path string) []bench.OutLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []bench.OutLine
	br := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var o bench.OutLine
			if jerr := json.Unmarshal(line, &o); jerr != nil {
				t.Fatalf("%s:%d: %v", path, n, jerr)
			}
			out = append(out, o)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// omniMarkerLineRe is a delivered line that may be a marker (ending included).
var omniMarkerLineRe = regexp.MustCompile(`^\[OMNI: .*omni retrieve ([0-9a-f]{16})\]\r?\n?$`)

// markerScope is what a marker claims about the lines behind it.
type markerScope int

const (
	claimSession markerScope = iota + 1 // "already shown", "identical to ... already shown", "identical to an earlier run"
	claimProject                        // "not shown here", "none shown here"
)

var (
	reRun          = regexp.MustCompile(`^\[OMNI: (\d+) lines already shown( from .*)?, omni retrieve [0-9a-f]{16}\]$`)
	reWhole        = regexp.MustCompile(`^\[OMNI: identical to the (\d+) lines already shown( from .*)?, omni retrieve [0-9a-f]{16}\]$`)
	reRerun        = regexp.MustCompile(`^\[OMNI: (\d+) lines identical to an earlier run, omni retrieve [0-9a-f]{16}\]$`)
	reProject      = regexp.MustCompile(`^\[OMNI: (\d+) lines not shown here( from .*)?, omni retrieve [0-9a-f]{16}\]$`)
	reAll          = regexp.MustCompile(`^\[OMNI: all (\d+) lines already shown, omni retrieve [0-9a-f]{16}\]$`)
	reShortened    = regexp.MustCompile(`^\[OMNI: output shortened to \d+ lines, all shown before; the \d+ lines: omni retrieve ([0-9a-f]{16})\]$`)
	reProjectWhole = regexp.MustCompile(`^\[OMNI: identical to (\d+) lines from an earlier session( from .*)?, none shown here, omni retrieve [0-9a-f]{16}\]$`)
)

// parseOmniMarker returns the claim and line count of a marker text (no line
// ending); ok is false for a text that is none of the five forms. The kind is
// decided by the text right after "[OMNI: ", so a from-clause cannot change it.
func parseOmniMarker(text string) (scope markerScope, kind string, n int, ok bool) {
	for _, c := range []struct {
		re    *regexp.Regexp
		scope markerScope
		kind  string
	}{
		{reWhole, claimSession, "whole"},
		{reAll, claimSession, "whole"},
		{reProjectWhole, claimProject, "project-whole"},
		{reRerun, claimSession, "rerun"},
		{reRun, claimSession, "run"},
		{reProject, claimProject, "project"},
	} {
		if m := c.re.FindStringSubmatch(text); m != nil {
			n, err := strconv.Atoi(m[1])
			return c.scope, c.kind, n, err == nil
		}
	}
	return 0, "", 0, false
}

// splitLinesKeep splits s after every '\n', keeping the endings; the pieces
// concatenate to s. It is internal/linediff's, not pipeline's, so the
// oracle does not share the code it checks.
func splitLinesKeep(s string) []string { return linediff.SplitKeepEnds(s) }

// lineEnding is a line's ending: "\r\n", "\n" or "".
func lineEnding(l string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"):
		return "\n"
	}
	return ""
}

// lineIdentity is the ledger's line identity: the line trimmed of ASCII
// whitespace ("" for a blank line).
func lineIdentity(l string) string { return strings.Trim(l, " \t\r\n\v\f") }

// quoteShort shortens s for a failure message.
func quoteShort(s string) string {
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return strconv.Quote(s)
}

// oracleProps names the checked properties, in report order.
var oracleProps = []string{
	"a:expands-to-raw", "b:already-shown-to-reader", "c:shown-in-project", "c':not-shown-to-reader",
	"d:failure-lines-kept", "e:structured-unchanged", "f:read-line-count", "g:no-growth",
}

// corpusOracle checks bench calls in corpus order. It keeps its own record of
// deliveries: per reader the identities of the lines it read since its
// session's last compaction, per project those any reader read.
type corpusOracle struct {
	retrieve func(handle string) (string, error)

	calls, markers, folded, readCalls, structured int
	checked                                       map[string]int // lines (or calls) checked per property
	violations                                    map[string]int
	first                                         []string
	byKind                                        map[string]int

	shownSets
}

func newCorpusOracle(retrieve func(string) (string, error)) *corpusOracle {
	return &corpusOracle{retrieve: retrieve, checked: map[string]int{}, violations: map[string]int{}, byKind: map[string]int{},
		shownSets: newShownSets()}
}

func (s *corpusOracle) fail(o *bench.OutLine, prop, format string, args ...any) {
	s.violations[prop]++
	if len(s.first) < 15 {
		s.first = append(s.first, fmt.Sprintf("%s agent=%s seq=%d (%s %s) [%s] %s", o.Session, o.Agent, o.Seq, o.HostTool, o.Event,
			prop, fmt.Sprintf(format, args...)))
	}
}

// check proves properties a-g for one call, then records what its reader
// read.
func (st *corpusOracle) check(o *bench.OutLine) {
	st.calls++
	rset, pset := st.setsFor(o)
	raw, del := o.Raw, o.Delivered

	// g: no call grows.
	st.checked["g:no-growth"]++
	if len(del) > len(raw) {
		st.fail(o, "g:no-growth", "delivered %d B > raw %d B", len(del), len(raw))
	}
	// e: structured payloads pass unchanged.
	if k := pipeline.Sniff(raw); k != pipeline.KindNone {
		st.structured++
		st.checked["e:structured-unchanged"]++
		if del != raw {
			st.fail(o, "e:structured-unchanged", "kind %s changed: %s", k, quoteShort(del))
		}
	}
	rawLines, delLines := splitLinesKeep(raw), splitLinesKeep(del)
	// f: Read keeps its line count.
	if o.HostTool == "Read" {
		st.readCalls++
		st.checked["f:read-line-count"]++
		// A whole Read re-read may be one marker line (the host numbers
		// every line it shows, so fillers would each cost a line).
		if len(delLines) != len(rawLines) && !(len(delLines) == 1 && strings.HasPrefix(delLines[0], "[OMNI: ")) {
			st.fail(o, "f:read-line-count", "%d lines delivered, %d raw", len(delLines), len(rawLines))
		}
	}

	// a: walk delivered against raw, expanding the markers omni issued (the
	// handles field, in text order); a marker-looking line that is the raw
	// line at that position is raw text, not a marker.
	var survivors []string
	var rebuilt strings.Builder
	rawPos, hi, ok := 0, 0, true
	st.checked["a:expands-to-raw"]++
	for k := 0; k < len(delLines) && ok; k++ {
		l := delLines[k]
		rawLine := ""
		if rawPos < len(raw) {
			rawLine = firstLineOf(raw[rawPos:])
		}
		m := omniMarkerLineRe.FindStringSubmatch(l)
		if m == nil || hi >= len(o.Handles) || m[1] != o.Handles[hi] || l == rawLine {
			if l != rawLine {
				st.fail(o, "a:expands-to-raw", "delivered line %d is neither the raw line there nor an issued marker: %s (raw: %s)", k+1, quoteShort(l), quoteShort(rawLine))
				ok = false
				break
			}
			survivors = append(survivors, l)
			rebuilt.WriteString(l)
			rawPos += len(l)
			continue
		}
		h := m[1]
		hi++
		st.markers++
		block, err := st.retrieve(h)
		if err != nil {
			st.fail(o, "a:expands-to-raw", "retrieve %s: %v", h, err)
			ok = false
			break
		}
		if block == "" || !strings.HasPrefix(raw[rawPos:], block) {
			st.fail(o, "a:expands-to-raw", "block %s (%s) is not the raw text at byte %d (%s)", h, quoteShort(block), rawPos, quoteShort(raw[rawPos:]))
			ok = false
			break
		}
		blines := splitLinesKeep(block)
		text := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		scope, kind, n, pok := parseOmniMarker(text)
		st.byKind[kind]++
		if !pok {
			st.fail(o, "a:expands-to-raw", "marker text is none of the five forms: %s", quoteShort(l))
		} else if n != len(blines) {
			st.fail(o, "a:expands-to-raw", "marker says %d lines, block %s has %d", n, h, len(blines))
		}
		// A whole Read re-read is one marker line with no fillers: the host
		// numbers every line it shows, so a filler would cost a line each.
		if o.HostTool == "Read" && !(k == 0 && len(delLines) == 1) {
			if lineEnding(l) != lineEnding(blines[0]) {
				st.fail(o, "a:expands-to-raw", "Read marker ending %q, first replaced line's %q", lineEnding(l), lineEnding(blines[0]))
			}
			for j := 1; j < len(blines) && ok; j++ {
				want := pipeline.Filler + lineEnding(blines[j])
				if k+j >= len(delLines) || delLines[k+j] != want {
					got := "<end>"
					if k+j < len(delLines) {
						got = delLines[k+j]
					}
					st.fail(o, "a:expands-to-raw", "filler %d of %d after marker %s: got %s, want %q", j, len(blines)-1, h, quoteShort(got), want)
					ok = false
				}
			}
			k += len(blines) - 1
		} else if lineEnding(l) != lineEnding(blines[len(blines)-1]) {
			st.fail(o, "a:expands-to-raw", "marker ending %q, last replaced line's %q", lineEnding(l), lineEnding(blines[len(blines)-1]))
		}
		rebuilt.WriteString(block)
		rawPos += len(block)
		st.folded += len(blines)

		// b, c: the claim behind the marker.
		for _, bl := range blines {
			id := lineIdentity(bl)
			if id == "" {
				continue
			}
			checkClaim(o, rset, pset, scope, kind, h, bl, id, claimProps{"b:already-shown-to-reader", "c:shown-in-project", "c':not-shown-to-reader"}, st.checked, st.fail)
		}
	}
	if ok {
		if hi != len(o.Handles) {
			st.fail(o, "a:expands-to-raw", "%d handles issued, %d markers found in delivered", len(o.Handles), hi)
		} else if rebuilt.String() != raw {
			st.fail(o, "a:expands-to-raw", "expansion is %d B, raw %d B (first difference at byte %d)", rebuilt.Len(), len(raw), firstDiffAt(rebuilt.String(), raw))
		}
	} else {
		// A call that could not be walked: count every delivered line as
		// surviving so the later properties still see something sensible.
		survivors = delLines
	}

	// d: no failure line is folded.
	want := map[string]int{}
	for _, l := range rawLines {
		if pipeline.IsFailureLine(l) {
			want[l]++
		}
	}
	if len(want) > 0 {
		have := map[string]int{}
		for _, l := range survivors {
			have[l]++
		}
		for l, n := range want {
			st.checked["d:failure-lines-kept"] += n
			if have[l] < n {
				st.fail(o, "d:failure-lines-kept", "failure line raw %d time(s), delivered %d: %s", n, have[l], quoteShort(l))
			}
		}
	}

	// Record what this reader read: the surviving lines (output over the
	// host's cap was not shown to the model, and is not recorded).
	record(o, rset, pset, survivors, "")
}

// TestCorpusOracle checks every call of a ledger-only bench of the whole
// corpus: a) markers expand to raw byte for byte; b) lines behind an
// "already shown"/"identical" marker were delivered to the same reader since
// its last compaction; c) lines behind a "not shown here" marker were
// delivered in the same project (c': and not to this reader, or the marker
// would say "already shown"); d) no failure line is folded; e) structured
// payloads are unchanged; f) Read keeps its line count; g) no call grows.
func TestCorpusOracle(t *testing.T) {
	t.Parallel()
	br := ledgerPass(t)
	sharedStoreMu.Lock()
	defer sharedStoreMu.Unlock()
	outs := readBenchOut(t, br.out)
	if len(outs) != br.rep.All.Calls {
		t.Fatalf("--out has %d lines, the bench reported %d calls", len(outs), br.rep.All.Calls)
	}
	ctx := context.Background()
	t0 := time.Now()
	svc, closeFn, err := daemon.OpenLocal(ctx, daemon.Config{Home: br.home}, 5*time.Second)
	if err != nil {
		t.Fatalf("open bench store: %v", err)
	}
	defer closeFn()
	t.Logf("opened the bench store in %s", time.Since(t0).Round(time.Millisecond))

	blocks := map[string]string{}
	st := newCorpusOracle(func(h string) (string, error) {
		if b, ok := blocks[h]; ok {
			return b, nil
		}
		req, _ := json.Marshal(daemon.RetrieveRequest{Handle: h})
		b, err := svc.Handle(ctx, "retrieve", req)
		if err != nil {
			return "", err
		}
		blocks[h] = string(b)
		return string(b), nil
	})
	t1 := time.Now()
	for i := range outs {
		st.check(&outs[i])
	}
	t.Logf("oracle over %d calls in %s (%d distinct blocks retrieved)", st.calls, time.Since(t1).Round(time.Millisecond), len(blocks))
	t.Logf("markers checked %d (folded lines %d) by kind %v; Read calls %d; structured payloads %d", st.markers, st.folded, st.byKind, st.readCalls, st.structured)
	for _, p := range oracleProps {
		t.Logf("  %-26s checked %7d  violations %d", p, st.checked[p], st.violations[p])
	}
	if st.markers == 0 {
		t.Errorf("no marker in %d calls: the corpus run folded nothing", st.calls)
	}
	if len(st.first) > 0 {
		t.Errorf("%d violation(s); first ones:\n  %s", violationCount(st.violations), strings.Join(st.first, "\n  "))
	}
}

// firstLineOf returns the first line of s, ending included.
func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

func firstDiffAt(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func violationCount(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// determinismFiles is how many corpus files (in glob order) the second,
// in-memory run of TestCorpusBenchDeterministic replays: the bench replays
// its files in order with a fixed clock, so a run over the first files
// renders the first rows of a run over all of them. The first four are the
// Claude Code sessions and three mas-* sets (about 40% of the corpus bytes);
// the whole corpus is rerun byte for byte by TestCorpusReplayVerify.
const determinismFiles = 4

// TestCorpusBenchDeterministic: a second bench run, on an in-memory log, of
// the first corpus files renders byte for byte the first rows of the shared
// ledger-only pass (on the JetStream store): the same calls render the same
// output, whatever the store.
func TestCorpusBenchDeterministic(t *testing.T) {
	t.Parallel()
	files := corpusFiles(t)
	files = files[:min(len(files), determinismFiles)]
	// The second run goes first, so it overlaps the shared one (made by
	// whichever parallel test asks first) on a second core.
	second := corpusBench(files, t.TempDir(), true, true)
	first := ledgerPass(t)
	if second.err != nil {
		t.Fatalf("second bench: %v", second.err)
	}
	t.Logf("second bench: %d files, %d calls in %s", len(files), second.rep.All.Calls, second.dur.Round(time.Millisecond))
	a, err := os.ReadFile(first.out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second.out)
	if err != nil {
		t.Fatal(err)
	}
	if second.rep.All.Calls == 0 {
		t.Fatalf("the second bench replayed no call")
	}
	// The first rows of the shared pass: as many lines as the second run
	// wrote (each row ends in a newline).
	n := bytes.Count(b, []byte("\n"))
	cut := 0
	for i := 0; i < n && cut < len(a); i++ {
		if j := bytes.IndexByte(a[cut:], '\n'); j >= 0 {
			cut += j + 1
		} else {
			cut = len(a)
		}
	}
	a = a[:cut]
	if bytes.Equal(a, b) {
		t.Logf("--out rows byte-identical: %d B, %d of the shared pass's %d calls", len(b), second.rep.All.Calls, first.rep.All.Calls)
		return
	}
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < min(len(la), len(lb)); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			var o bench.OutLine
			_ = json.Unmarshal(la[i], &o)
			at := firstDiffAt(string(la[i]), string(lb[i]))
			lo := max(0, at-60)
			t.Fatalf("--out differs at line %d (session %s agent %s seq %d), byte %d of the line:\n run 1: %s\n run 2: %s",
				i+1, o.Session, o.Agent, o.Seq, at, quoteShort(string(la[i][lo:min(len(la[i]), at+100)])), quoteShort(string(lb[i][lo:min(len(lb[i]), at+100)])))
		}
	}
	t.Fatalf("--out files differ in length: %d lines (%d B) vs %d lines (%d B)", len(la), len(a), len(lb), len(b))
}

// TestCorpusReplayVerify: `omni replay --verify` over the bench store reruns
// every invocation byte-identically, and compares one per corpus call.
func TestCorpusReplayVerify(t *testing.T) {
	t.Parallel()
	br := ledgerPass(t)
	sharedStoreMu.Lock()
	defer sharedStoreMu.Unlock()
	ctx := context.Background()
	svc, closeFn, err := daemon.OpenLocal(ctx, daemon.Config{Home: br.home}, 5*time.Second)
	if err != nil {
		t.Fatalf("open bench store: %v", err)
	}
	defer closeFn()
	t0 := time.Now()
	rep, err := svc.Replay(ctx, daemon.ReplayRequest{Verify: true})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	sum := rep.Summary
	t.Logf("verify in %s: %d batches, %d invocations, %d compared, %d identical", time.Since(t0).Round(time.Millisecond),
		sum.Batches, sum.Invocations, sum.Compared, sum.Identical)
	t.Logf("withheld (input held credentials): %d", sum.Withheld)
	if sum.Identical != sum.Compared {
		t.Errorf("%d of %d compared invocations differ on replay; first sequences: %v", sum.Compared-sum.Identical, sum.Compared, sum.Mismatches)
	}
	// Invocations whose input held credentials are stored without it
	// (withheld) and cannot be rerun; every other one is compared.
	if sum.Compared+sum.Withheld != br.rep.All.Calls {
		t.Errorf("verify compared %d invocations (+%d withheld), the corpus has %d calls", sum.Compared, sum.Withheld, br.rep.All.Calls)
	}
}

// TestCorpusOracleCatches proves the oracle is not vacuous: on small
// hand-made call sequences it reports exactly the broken property (it needs
// no corpus).
func TestCorpusOracleCatches(t *testing.T) {
	t.Parallel()
	const h1, h2, h3, h4 = "1111111111111111", "2222222222222222", "3333333333333333", "4444444444444444"
	// Lines long enough that a marker is shorter than the lines it stands for.
	pad := strings.Repeat(" the quick brown fox jumps over the lazy dog", 2)
	a1, b2, g3 := "alpha one"+pad+"\n", "beta two"+pad+"\n", "  gamma three"+pad+"\n"
	blk := a1 + b2 + g3
	fail := "error: boom happened here" + pad + "\n" + a1
	blocks := map[string]string{h1: blk, h2: a1 + b2, h3: fail}
	retrieve := func(h string) (string, error) {
		if b, ok := blocks[h]; ok {
			return b, nil
		}
		return "", hooks.ErrUnknownHandle
	}
	shown := func(n int, h string) string {
		return fmt.Sprintf("[OMNI: %d lines already shown, omni retrieve %s]\n", n, h)
	}
	notHere := func(n int, h string) string {
		return fmt.Sprintf("[OMNI: %d lines not shown here, omni retrieve %s]\n", n, h)
	}
	call := func(session, agent, project, raw, del string, handles ...string) bench.OutLine {
		return bench.OutLine{Session: session, Agent: agent, Project: project, HostTool: "Bash", Event: "PostToolUse", Raw: raw, Delivered: del, Handles: handles}
	}
	first := call("p/1", "main", "p", blk, blk)
	with := func(o bench.OutLine, f func(*bench.OutLine)) bench.OutLine { f(&o); return o }
	read := func(o bench.OutLine) bench.OutLine { o.HostTool = "Read"; return o }
	jsonRaw := `{"name": "omni", "tags": ["a", "b"], "n": 3}` + "\n"
	if pipeline.Sniff(jsonRaw) == pipeline.KindNone {
		t.Fatalf("Sniff(%q) is KindNone; pick another structured sample", jsonRaw)
	}
	for _, c := range []struct {
		name  string
		calls []bench.OutLine
		want  []string // the properties that must fire; every other must not
	}{
		{"clean session fold", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1)}, nil},
		{"raw text that looks like the marker", []bench.OutLine{first,
			call("p/1", "main", "p", shown(3, h1)+blk+"tail\n", shown(3, h1)+shown(3, h1)+"tail\n", h1)}, nil},
		{"clean project fold", []bench.OutLine{first, call("p/2", "main", "p", "x\n"+blk+"tail\n", "x\n"+notHere(3, h1)+"tail\n", h1)}, nil},
		{"clean Read fold", []bench.OutLine{read(first), read(call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"⋮\n⋮\ntail\n", h1))}, nil},
		{"another agent's lines", []bench.OutLine{first, call("p/1", "sub-1", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1)},
			[]string{"b:already-shown-to-reader"}},
		{"lines from before a compaction", []bench.OutLine{first,
			with(call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1), func(o *bench.OutLine) { o.Epoch = 1 })},
			[]string{"b:already-shown-to-reader"}},
		{"a subagent compacted with its session", []bench.OutLine{call("p/1", "sub-1", "p", blk, blk),
			call("p/1", "main", "p", "z\n", "z\n"),
			with(call("p/1", "sub-1", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1), func(o *bench.OutLine) { o.Epoch = 1 })},
			[]string{"b:already-shown-to-reader"}},
		{"lines over the host cap were never shown", []bench.OutLine{with(first, func(o *bench.OutLine) { o.Reason = "host-cap" }),
			call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1)},
			[]string{"b:already-shown-to-reader"}},
		{"folded lines are not delivered", []bench.OutLine{call("p/1", "main", "p", "x\n"+blk, "x\n"+shown(3, h1), h1),
			call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1)},
			[]string{"b:already-shown-to-reader", "b:already-shown-to-reader"}},
		{"another project", []bench.OutLine{first, call("q/2", "main", "q", "x\n"+blk+"tail\n", "x\n"+notHere(3, h1)+"tail\n", h1)},
			[]string{"c:shown-in-project"}},
		{"not shown here, but it was", []bench.OutLine{first, call("p/1", "main", "p", "x\n"+blk+"tail\n", "x\n"+notHere(3, h1)+"tail\n", h1)},
			[]string{"c':not-shown-to-reader"}},
		{"an altered surviving line", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tall\n", h1)},
			[]string{"a:expands-to-raw"}},
		{"a block shorter than the run", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(3, h2)+"tail\n", h2)},
			[]string{"a:expands-to-raw", "a:expands-to-raw"}},
		{"a marker omni did not issue", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n")},
			[]string{"a:expands-to-raw"}},
		{"an issued marker missing", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", blk+"tail\n", h1)},
			[]string{"a:expands-to-raw"}},
		{"an unknown handle", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(3, h4)+"tail\n", h4)},
			[]string{"a:expands-to-raw"}},
		{"a wrong line count", []bench.OutLine{first, call("p/1", "main", "p", blk+"tail\n", shown(4, h1)+"tail\n", h1)},
			[]string{"a:expands-to-raw"}},
		{"a folded failure line", []bench.OutLine{call("p/1", "main", "p", fail, fail),
			call("p/1", "main", "p", fail+"tail\n", shown(2, h3)+"tail\n", h3)},
			[]string{"d:failure-lines-kept"}},
		{"a changed structured payload", []bench.OutLine{call("p/1", "main", "p", jsonRaw, strings.Replace(jsonRaw, " ", "", 1))},
			[]string{"e:structured-unchanged", "a:expands-to-raw"}},
		{"a Read that loses lines", []bench.OutLine{read(first), read(call("p/1", "main", "p", blk+"tail\n", shown(3, h1)+"tail\n", h1))},
			[]string{"f:read-line-count", "a:expands-to-raw"}},
		{"a call that grows", []bench.OutLine{call("p/1", "main", "p", blk, blk+"more\n")},
			[]string{"g:no-growth", "a:expands-to-raw"}},
	} {
		or := newCorpusOracle(retrieve)
		for i := range c.calls {
			c.calls[i].Seq = i
			or.check(&c.calls[i])
		}
		want := map[string]int{}
		for _, p := range c.want {
			want[p]++
		}
		for _, p := range oracleProps {
			if got := or.violations[p]; (got > 0) != (want[p] > 0) || (want[p] > 1 && got < want[p]) {
				t.Errorf("%s: property %s: %d violation(s), want %d\n  %s", c.name, p, got, want[p], strings.Join(or.first, "\n  "))
			}
		}
	}
}

// TestCorpusBenchExplainsItself: the per-family, per-door and per-reason rows
// each partition the run: their calls, raw and delivered
// bytes add up to the totals.
func TestCorpusBenchExplainsItself(t *testing.T) {
	t.Parallel()
	r := ledgerPass(t).rep
	for name, m := range map[string]map[string]*bench.Bucket{"family": r.ByFamily, "door": r.ByDoor, "reason": r.ByReason} {
		var calls int
		var raw, del int64
		for _, b := range m {
			calls += b.Calls
			raw += b.RawBytes
			del += b.DeliveredBytes
		}
		if calls != r.All.Calls || raw != r.All.RawBytes || del != r.All.DeliveredBytes {
			t.Errorf("by %s: %d calls, %d B raw, %d B delivered; totals %d, %d, %d", name, calls, raw, del, r.All.Calls, r.All.RawBytes, r.All.DeliveredBytes)
		}
	}
	if r.ByFamily["none"] == nil || r.ByReason["ledger:failed"] == nil {
		t.Errorf("expected rows missing: families %d, reasons %d", len(r.ByFamily), len(r.ByReason))
	}
}
