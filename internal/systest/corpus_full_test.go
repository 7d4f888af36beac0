package systest

// The full-pipeline corpus oracle: replays every real session of
// ../shared/corpus through the bench WITHOUT --ledger-only, so the
// first-seen stages (redaction, distillers, collapse, the final cut) run
// before the ledger, and proves for every call of that run: retrieve exact, no false claim, no failure line lost,
// no growth except redaction, structured payloads unchanged unless redacted.
//
// The ledger-only oracle (corpus_test.go) can expand every marker back to
// the raw output; here the ledger folds the SHORTENED text, so the walk is
// in two steps: expanding the ledger's markers gives the first-seen text S
// that Shorten delivered; S is then checked against the raw output through
// its own markers (redaction, the final cut's truncation, the rewind marker
// whose archived bytes must be the raw output, redacted at most).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/bench"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/pipeline"
	"github.com/omnictx/omni/redact"
)

// The markers of the first-seen stages (pipeline/shorten.go), matched on a
// line without its ending.
var (
	fullRewindRe       = regexp.MustCompile(`^\[OMNI: (\d+) (lines|bytes) omitted, omni retrieve ([0-9a-f]{16}) for full output\]$`)
	fullRewindUnarchRe = regexp.MustCompile(`^\[OMNI: (\d+) (lines|bytes) omitted, full output not archived: (\d+) bytes over the (\d+) byte rewind cap\]$`)
	fullTruncLineRe    = regexp.MustCompile(`^\[OMNI: output truncated, (\d+) of (\d+) lines kept, (\d+) dropped from the middle(?:, omni retrieve ([0-9a-f]{16}))?\]$`)
	fullTruncByteRe    = regexp.MustCompile(`\n\[OMNI: output truncated, (\d+) of (\d+) bytes kept(?:, omni retrieve ([0-9a-f]{16}))?\]\n`)
	fullRedactionRe    = regexp.MustCompile(`^\[OMNI: (\d+) sensitive value\(s\) redacted\]$`)
	fullAnyHandleRe    = regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)
)

// fullProps names the checked properties, in report order.
var fullProps = []string{
	"a:ledger-marker-resolves", "a:rewind-is-raw", "a:truncation-resolves", "a:first-seen-text-explained", "a:every-handle-resolves",
	"b:already-shown-to-reader", "b':shown-in-project", "b'':not-shown-to-reader",
	"c:failure-lines-kept", "d:no-growth-except-redaction", "e:structured-unchanged", "f:read-line-count",
}

// fullOracle checks full-pipeline bench calls in corpus order, with its own
// record of what each reader and each project received.
type fullOracle struct {
	retrieve func(handle string) (string, error)

	calls      int
	checked    map[string]int
	violations map[string]int
	first      []string
	// What was seen, for the report.
	ledgerMarkers, rewindMarkers, truncMarkers, redactionMarkers, unarchivedRewinds int
	byKind                                                                          map[string]int
	shortened, redactedCalls, silentRedactions, structured, readCalls               int
	claimsOnOmniLines                                                               int // claimed lines that are first-seen markers the reader was shown
	novelLines                                                                      int // non-marker lines of a shortened text that are no raw line (collapse counts, distiller headers)
	novelSamples                                                                    []string
	resolved                                                                        map[string]bool

	shownSets
}

func newFullOracle(retrieve func(string) (string, error)) *fullOracle {
	return &fullOracle{retrieve: retrieve, checked: map[string]int{}, violations: map[string]int{}, byKind: map[string]int{},
		resolved: map[string]bool{}, shownSets: newShownSets()}
}

func (s *fullOracle) fail(o *bench.OutLine, prop, format string, args ...any) {
	s.violations[prop]++
	if len(s.first) < 20 {
		s.first = append(s.first, fmt.Sprintf("%s agent=%s seq=%d (%s %s, input %s) [%s] %s", o.Session, o.Agent, o.Seq, o.HostTool, o.Event,
			quoteShort(o.Input), prop, fmt.Sprintf(format, args...)))
	}
}

// fullLineText is a line without its ending.
func fullLineText(l string) string { return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r") }

// fullRedactedMatch reports whether got is line raw with only [REDACTED]
// standing for parts of it: the text around each [REDACTED] occurs in raw
// in order, anchored at both ends.
func fullRedactedMatch(got, raw string) bool {
	if !strings.Contains(got, redact.Marker) {
		return got == raw
	}
	parts := strings.Split(got, redact.Marker)
	if !strings.HasPrefix(raw, parts[0]) {
		return false
	}
	rest := raw[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, last)
}

// fullOnlyRedacted reports whether got equals raw except on lines of got that
// contain [REDACTED] and match their raw line around it; a line that is
// only [REDACTED] may stand for a private key body (the raw lines up to the
// -----END line). It returns the first differing line of got otherwise.
func fullOnlyRedacted(got, raw string) (bool, string) {
	if got == raw {
		return true, ""
	}
	g, r := splitLinesKeep(got), splitLinesKeep(raw)
	i, j := 0, 0
	for i < len(r) || j < len(g) {
		switch {
		case i < len(r) && j < len(g) && g[j] == r[i]:
			i++
			j++
		case i < len(r) && j < len(g) && strings.Contains(g[j], redact.Marker) && fullRedactedMatch(fullLineText(g[j]), fullLineText(r[i])):
			keyBody := strings.TrimSpace(g[j]) == redact.Marker
			i++
			j++
			if keyBody {
				for i < len(r) && !strings.Contains(r[i], "-----END ") && (j >= len(g) || r[i] != g[j]) {
					i++
				}
			}
		default:
			at := "<end>"
			if j < len(g) {
				at = g[j]
			}
			return false, at
		}
	}
	return true, ""
}

// resolve retrieves a handle, reporting a failure under prop; resolved
// remembers every handle tried, so the catch-all pass of property a does not
// report a failing handle twice.
func (s *fullOracle) resolve(o *bench.OutLine, prop, h string) (string, bool) {
	b, err := s.retrieve(h)
	s.resolved[h] = true
	if err != nil {
		s.fail(o, prop, "omni retrieve %s: %v", h, err)
		return "", false
	}
	return b, true
}

// check proves the properties for one call, then records what its reader
// read.
func (st *fullOracle) check(o *bench.OutLine) {
	st.calls++
	rset, pset := st.setsFor(o)
	raw, del := o.Raw, o.Delivered
	delLines := splitLinesKeep(del)

	// d: no growth except redaction.
	st.checked["d:no-growth-except-redaction"]++
	// A structured payload is redacted in place with no marker line, so it
	// still parses (a redacted JSON document stays JSON): there, growth is
	// allowed when every change
	// is a [REDACTED] value.
	if len(del) > len(raw) && !strings.Contains(del, "sensitive value(s) redacted") {
		if ok, _ := fullOnlyRedacted(del, raw); !(ok && pipeline.Sniff(raw) != pipeline.KindNone) {
			st.fail(o, "d:no-growth-except-redaction", "delivered %d B > raw %d B with no redaction marker: %s", len(del), len(raw), quoteShort(del))
		}
	}
	if o.HostTool == "Read" {
		st.readCalls++
		st.checked["f:read-line-count"]++
		// A whole Read re-read may be one marker line (the host numbers
		// every line it shows, so fillers would each cost a line).
		if n, m := len(delLines), len(splitLinesKeep(raw)); n != m && !(n == 1 && strings.HasPrefix(delLines[0], "[OMNI: ")) {
			st.fail(o, "f:read-line-count", "%d lines delivered, %d raw", n, m)
		}
	}

	// A rerun whose short form this reader read already is one
	// MarkerShortened line: its handle must return what the tool printed
	// (at most redacted), never omni's short form; the reader reads
	// nothing new.
	if m := reShortened.FindStringSubmatch(fullLineText(del)); m != nil && len(delLines) == 1 && len(o.Handles) == 1 && o.Handles[0] == m[1] {
		st.checked["a:ledger-marker-resolves"]++
		st.ledgerMarkers++
		st.byKind["shortened"]++
		if block, ok := st.resolve(o, "a:ledger-marker-resolves", m[1]); ok && block != raw {
			if red, _ := fullOnlyRedacted(block, raw); !red {
				st.fail(o, "a:ledger-marker-resolves", "shortened rerun %s does not return the tool's bytes: %s", m[1], quoteShort(block))
			}
		}
		record(o, rset, pset, nil, pipeline.Filler)
		return
	}

	// Step 1: expand the ledger's markers (the handles field, in text
	// order) into S, the text the first-seen stages produced. survivors are
	// the delivered lines that are not ledger markers or fillers: what the
	// reader actually read.
	var S strings.Builder
	var survivors []string
	hi := 0
	walkOK := true
	for k := 0; k < len(delLines); k++ {
		l := delLines[k]
		m := omniMarkerLineRe.FindStringSubmatch(l)
		if m == nil || hi >= len(o.Handles) || m[1] != o.Handles[hi] {
			survivors = append(survivors, l)
			S.WriteString(l)
			continue
		}
		scope, kind, n, pok := parseOmniMarker(fullLineText(l))
		if !pok {
			survivors = append(survivors, l)
			S.WriteString(l)
			continue
		}
		h := m[1]
		hi++
		st.ledgerMarkers++
		st.byKind[kind]++
		st.checked["a:ledger-marker-resolves"]++
		block, ok := st.resolve(o, "a:ledger-marker-resolves", h)
		if !ok || block == "" {
			if ok {
				st.fail(o, "a:ledger-marker-resolves", "handle %s resolves to nothing", h)
			}
			walkOK = false
			S.WriteString(l)
			continue
		}
		blines := splitLinesKeep(block)
		if n != len(blines) {
			st.fail(o, "a:ledger-marker-resolves", "marker says %d lines, block %s has %d", n, h, len(blines))
		}
		// A whole Read re-read is one marker line with no fillers: the host
		// numbers every line it shows, so a filler would cost a line each.
		if o.HostTool == "Read" && !(k == 0 && len(delLines) == 1) {
			for j := 1; j < len(blines); j++ {
				want := pipeline.Filler + lineEnding(blines[j])
				if k+j >= len(delLines) || delLines[k+j] != want {
					st.fail(o, "a:ledger-marker-resolves", "Read: filler %d of %d after marker %s missing", j, len(blines)-1, h)
					walkOK = false
					break
				}
			}
			k += len(blines) - 1
		}
		S.WriteString(block)
		// b: the claim behind the marker, line by line, against what this
		// reader (session claims) or this project (project claims) read.
		for _, bl := range blines {
			id := lineIdentity(bl)
			if id == "" {
				continue
			}
			if strings.HasPrefix(id, "[OMNI: ") && !strings.Contains(raw, id) {
				st.claimsOnOmniLines++
			}
			checkClaim(o, rset, pset, scope, kind, h, bl, id, claimProps{"b:already-shown-to-reader", "b':shown-in-project", "b'':not-shown-to-reader"}, st.checked, st.fail)
		}
	}
	if hi != len(o.Handles) {
		st.fail(o, "a:ledger-marker-resolves", "%d ledger handles issued, %d of their markers found in delivered", len(o.Handles), hi)
		walkOK = false
	}

	// Step 2: explain S from raw through the first-seen markers.
	s := S.String()
	var middles []string // truncated middles (for c)
	redacted := 0
	if walkOK && s != raw {
		st.shortened++
		st.checked["a:first-seen-text-explained"]++
		t := s
		// The redaction marker is the first line.
		if first := firstLineOf(t); fullRedactionRe.MatchString(fullLineText(first)) && !strings.HasPrefix(raw, first) {
			redacted, _ = strconv.Atoi(fullRedactionRe.FindStringSubmatch(fullLineText(first))[1])
			st.redactionMarkers++
			t = t[len(first):]
		}
		// The final cut: expand its middle.
		if loc := fullTruncByteRe.FindStringSubmatchIndex(t); loc != nil && !strings.Contains(raw, t[loc[0]+1:loc[1]-1]) {
			st.truncMarkers++
			st.checked["a:truncation-resolves"]++
			kept, total := fullAtoiSub(t, loc, 1), fullAtoiSub(t, loc, 2)
			if loc[6] < 0 {
				st.fail(o, "a:truncation-resolves", "byte-form cut without a handle: %s", quoteShort(t[loc[0]:loc[1]]))
				walkOK = false
			} else if mid, ok := st.resolve(o, "a:truncation-resolves", t[loc[6]:loc[7]]); ok {
				middles = append(middles, mid)
				t = t[:loc[0]] + mid + t[loc[1]:]
				if len(t) != total || total-len(mid) != kept {
					st.fail(o, "a:truncation-resolves", "byte-form cut says %d of %d bytes kept; expansion is %d B with a %d B middle", kept, total, len(t), len(mid))
				}
			} else {
				walkOK = false
			}
		} else {
			tl := splitLinesKeep(t)
			pos := 0
			for _, l := range tl {
				mm := fullTruncLineRe.FindStringSubmatch(fullLineText(l))
				if mm == nil || strings.Contains(raw, fullLineText(l)) {
					pos += len(l)
					continue
				}
				st.truncMarkers++
				st.checked["a:truncation-resolves"]++
				if mm[4] == "" {
					st.fail(o, "a:truncation-resolves", "line-form cut without a handle: %s", quoteShort(l))
					walkOK = false
					break
				}
				mid, ok := st.resolve(o, "a:truncation-resolves", mm[4])
				if !ok {
					walkOK = false
					break
				}
				middles = append(middles, mid)
				t = t[:pos] + mid + t[pos+len(l):]
				kept, _ := strconv.Atoi(mm[1])
				total, _ := strconv.Atoi(mm[2])
				dropped, _ := strconv.Atoi(mm[3])
				if n := len(splitLinesKeep(t)); n != total || kept+dropped != total || strings.Count(mid, "\n") != dropped {
					st.fail(o, "a:truncation-resolves", "line-form cut says %d of %d kept, %d dropped; expansion has %d lines, middle %d", kept, total, dropped, n, strings.Count(mid, "\n"))
				}
				break
			}
		}
		// The rewind marker: its archived bytes are the raw output, at most
		// redacted; the rest of t is the shortened text.
		if walkOK {
			tl := splitLinesKeep(t)
			rw := -1
			for i := len(tl) - 1; i >= 0; i-- {
				lt := fullLineText(tl[i])
				if (fullRewindRe.MatchString(lt) || fullRewindUnarchRe.MatchString(lt)) && !strings.Contains(raw, lt) {
					rw = i
					break
				}
			}
			switch {
			case rw < 0:
				// No rewind: t is raw, redacted at most.
				if ok, at := fullOnlyRedacted(t, raw); !ok {
					st.fail(o, "a:first-seen-text-explained", "changed without a rewind marker, and not by redaction only; first differing line %s", quoteShort(at))
				} else if t != raw && redacted == 0 && pipeline.Sniff(raw) == pipeline.KindNone && o.HostTool != "Read" {
					// (A Read and a structured payload are redacted in place with
					// no marker line: line numbers and syntax must hold.)
					st.fail(o, "a:first-seen-text-explained", "redacted without a redaction marker")
				}
			case fullRewindUnarchRe.MatchString(fullLineText(tl[rw])):
				st.unarchivedRewinds++
				st.rewindMarkers++
			default:
				st.rewindMarkers++
				st.checked["a:rewind-is-raw"]++
				mm := fullRewindRe.FindStringSubmatch(fullLineText(tl[rw]))
				body, ok := st.resolve(o, "a:rewind-is-raw", mm[3])
				if ok {
					want := raw
					if o.Event == "rewrite:exec" || o.Event == "rewrite:pipe" {
						// Under the rewrite the runner's output went through omni's
						// filter: the archive is that output; the "Exit code N"
						// line above it is the host's own header.
						if first, rest, cut := strings.Cut(raw, "\n"); cut && strings.HasPrefix(first, "Exit code ") {
							want = rest
						}
					}
					if same, at := fullOnlyRedacted(body, want); !same {
						st.fail(o, "a:rewind-is-raw", "archived block %s is not the raw output (redacted at most); first differing line %s", mm[3], quoteShort(at))
					} else if body != want && redacted == 0 {
						st.fail(o, "a:rewind-is-raw", "archived block %s is redacted but the reply has no redaction marker", mm[3])
					}
					n, _ := strconv.Atoi(mm[1])
					if mm[2] == "lines" && (n <= 0 || n > len(splitLinesKeep(body))) {
						st.fail(o, "a:rewind-is-raw", "marker says %d lines omitted, the archived output has %d", n, len(splitLinesKeep(body)))
					}
					// Lines of the shortened text that are no line of the raw
					// output (collapse counts, distiller summaries): reported,
					// not judged here.
					ids := map[string]bool{}
					for _, bl := range splitLinesKeep(body) {
						ids[lineIdentity(bl)] = true
					}
					for i, l := range tl {
						id := lineIdentity(l)
						if i == rw || id == "" || ids[id] || strings.HasPrefix(id, "[OMNI: ") {
							continue
						}
						st.novelLines++
						if len(st.novelSamples) < 8 {
							st.novelSamples = append(st.novelSamples, fmt.Sprintf("%s seq=%d (%s): %s", o.Session, o.Seq, quoteShort(o.Input), quoteShort(l)))
						}
					}
				}
			}
		}
	}
	if redacted > 0 || (strings.Contains(del, redact.Marker) && !strings.Contains(raw, redact.Marker)) {
		st.redactedCalls++
		if redacted == 0 && !strings.Contains(del, "sensitive value(s) redacted") {
			st.silentRedactions++ // a structured payload redacted in place, no marker by design
		}
	}

	// a: every handle of a new marker in delivered or in S resolves.
	for _, txt := range []string{del, s} {
		for _, m := range fullAnyHandleRe.FindAllStringSubmatch(txt, -1) {
			h := m[1]
			if st.resolved[h] || strings.Contains(raw, m[0]) {
				continue
			}
			st.checked["a:every-handle-resolves"]++
			st.resolve(o, "a:every-handle-resolves", h)
		}
	}

	// c: no failure line lost. Every distinct failure line of raw is a
	// surviving delivered line (redacted at most), or sits in the middle a
	// truncation marker names.
	var redSurvivors []string
	have := map[string]bool{}
	for _, l := range survivors {
		id := lineIdentity(l)
		have[id] = true
		if strings.Contains(id, redact.Marker) {
			redSurvivors = append(redSurvivors, id)
		}
	}
	want := map[string]bool{}
	for _, l := range splitLinesKeep(raw) {
		if pipeline.IsFailureLine(l) {
			want[lineIdentity(l)] = true
		}
	}
	for id := range want {
		st.checked["c:failure-lines-kept"]++
		if have[id] {
			continue
		}
		found := false
		for _, r := range redSurvivors {
			if fullRedactedMatch(r, id) {
				found = true
				break
			}
		}
		for _, mid := range middles {
			if !found && strings.Contains(mid, id) {
				found = true
			}
		}
		if !found {
			st.fail(o, "c:failure-lines-kept", "failure line of raw not delivered: %s", quoteShort(id))
		}
	}

	// e: structured payloads pass unchanged, or redacted in place (still
	// parseable when the raw output was a JSON document).
	if k := pipeline.Sniff(raw); k != pipeline.KindNone {
		st.structured++
		st.checked["e:structured-unchanged"]++
		if del != raw {
			d := del
			if k == pipeline.KindYAML || k == pipeline.KindCSV || k == pipeline.KindTSV {
				// A table or YAML document the masks made longer says so in
				// a first line (output never grows without saying why).
				if first, rest, ok := strings.Cut(d, "\n"); ok && fullRedactionRe.MatchString(first) && len(d) > len(raw) {
					d = rest
				}
			}
			if ok, at := fullOnlyRedacted(d, raw); !ok {
				st.fail(o, "e:structured-unchanged", "kind %s changed beyond redaction; first differing line %s", k, quoteShort(at))
			} else if json.Valid([]byte(raw)) && !json.Valid([]byte(del)) {
				st.fail(o, "e:structured-unchanged", "kind %s: redaction broke the JSON document", k)
			}
		}
	}

	// Record what this reader read: the surviving lines, the first-seen
	// markers among them included (the reader was shown those lines, and
	// the ledger records them as delivered too); ledger markers and
	// fillers are not lines of any output. Output over the host's cap was
	// not shown to the model.
	record(o, rset, pset, survivors, pipeline.Filler)
}

func fullAtoiSub(s string, loc []int, g int) int {
	if loc[2*g] < 0 {
		return -1
	}
	n, _ := strconv.Atoi(s[loc[2*g]:loc[2*g+1]])
	return n
}

// TestCorpusFullPipelineOracle replays the whole corpus through the full
// pipeline (`omni bench --corpus ../shared/corpus/*.jsonl` without
// --ledger-only) and checks every call:
// a) every handle omni issued resolves; a rewind marker's archived bytes are
// the raw output (redacted at most); expanding the ledger's markers and the
// final cut's middle explains the delivered text from the raw output;
// b) lines behind an "already shown"/"identical" marker were delivered to
// the same reader since its last compaction (the primed b properties: the claims
// of the project markers); c) every failure line of raw is delivered, or sits in a
// truncated middle; d) no call grows unless something was redacted; e)
// structured payloads are unchanged unless redacted; f) Read keeps its line
// count.
func TestCorpusFullPipelineOracle(t *testing.T) {
	t.Parallel()
	fp := fullPass(t) // skips under -short or without the corpus
	home, out, rep := fp.home, fp.out, fp.rep
	ctx := context.Background()
	if rep.LedgerOnly {
		t.Fatalf("bench ran ledger-only")
	}
	if rep.HookFailures > 0 {
		t.Errorf("%d hook errors during the bench (see %s/omni.log)", rep.HookFailures, home)
	}
	outs := readBenchOut(t, out)
	if len(outs) != rep.All.Calls {
		t.Fatalf("--out has %d lines, the bench reported %d calls", len(outs), rep.All.Calls)
	}

	// The totals, as `omni bench` prints them.
	t.Logf("full pipeline: raw %d B, delivered %d B, saved %d B (%.1f%%); ledger session folds %d B, project folds %d B, first-seen stages %d B",
		rep.All.RawBytes, rep.All.DeliveredBytes, rep.All.BytesSaved, rep.SavedPct, rep.SessionFoldSaved, rep.ProjectFoldSaved,
		rep.All.BytesSaved-rep.SessionFoldSaved-rep.ProjectFoldSaved)
	for _, k := range slices.Sorted(maps.Keys(rep.ByTool)) {
		b := rep.ByTool[k]
		t.Logf("  tool %-12s %6d calls %11d B raw %11d B delivered %5.1f%% saved", k, b.Calls, b.RawBytes, b.DeliveredBytes, testPct(b.BytesSaved, b.RawBytes))
	}
	for _, k := range slices.Sorted(maps.Keys(rep.BySource)) {
		b := rep.BySource[k]
		t.Logf("  source %-28s %6d calls %11d B raw %5.1f%% saved", k, b.Calls, b.RawBytes, testPct(b.BytesSaved, b.RawBytes))
	}

	t1 := time.Now()
	svc, closeFn, err := daemon.OpenLocal(ctx, daemon.Config{Home: home}, 5*time.Second)
	if err != nil {
		t.Fatalf("open bench store: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			closeFn()
		}
	}()
	t.Logf("opened the bench store in %s", time.Since(t1).Round(time.Millisecond))

	// Handles are content hashes: one retrieval each, answers and errors
	// cached.
	type answer struct {
		b   string
		err error
	}
	cache := map[string]answer{}
	st := newFullOracle(func(h string) (string, error) {
		if a, ok := cache[h]; ok {
			return a.b, a.err
		}
		req, _ := json.Marshal(daemon.RetrieveRequest{Handle: h})
		b, err := svc.Handle(ctx, "retrieve", req)
		cache[h] = answer{string(b), err}
		return string(b), err
	})
	t2 := time.Now()
	for i := range outs {
		st.check(&outs[i])
	}
	if err := closeFn(); err != nil {
		t.Errorf("close bench store: %v", err)
	}
	closed = true
	t.Logf("oracle over %d calls in %s (%d distinct handles retrieved)", st.calls, time.Since(t2).Round(time.Millisecond), len(cache))
	t.Logf("shortened by the first-seen stages: %d calls (rewind markers %d, %d of them unarchived; truncation markers %d; redaction markers %d; calls with redactions %d, %d of them in place without a marker)",
		st.shortened, st.rewindMarkers, st.unarchivedRewinds, st.truncMarkers, st.redactionMarkers, st.redactedCalls, st.silentRedactions)
	kinds := make([]string, 0, len(st.byKind))
	for k := range st.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var kb strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&kb, " %s=%d", k, st.byKind[k])
	}
	t.Logf("ledger markers %d (by kind:%s); claimed lines that were first-seen markers shown earlier %d; Read calls %d; structured payloads %d",
		st.ledgerMarkers, kb.String(), st.claimsOnOmniLines, st.readCalls, st.structured)
	t.Logf("lines of shortened texts that are no raw line (collapse counts, summaries; reported, not judged): %d", st.novelLines)
	for _, s := range st.novelSamples {
		t.Logf("    e.g. %s", s)
	}
	for _, p := range fullProps {
		t.Logf("  %-30s checked %7d  violations %d", p, st.checked[p], st.violations[p])
	}
	if st.ledgerMarkers == 0 {
		t.Errorf("no ledger marker in %d calls: the corpus run folded nothing", st.calls)
	}
	if st.shortened == 0 {
		t.Errorf("no call was shortened by the first-seen stages: the full pipeline did not run")
	}
	if len(st.first) > 0 {
		t.Errorf("%d violation(s); first ones:\n  %s", violationCount(st.violations), strings.Join(st.first, "\n  "))
	}
}

// TestCorpusFullOracleCatches proves the full-pipeline oracle is not
// vacuous: on hand-made calls it reports exactly the broken property (it
// needs no corpus).
func TestCorpusFullOracleCatches(t *testing.T) {
	t.Parallel()
	const hr, hx, hm, hl, hs, hf = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc", "dddddddddddddddd", "1111111111111111", "2222222222222222"
	pad := strings.Repeat(" the quick brown fox jumps over the lazy dog", 2)
	var rb strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&rb, "ok  \tpkg/p%02d\t0.01s%s\n", i, pad)
	}
	raw := rb.String() + "--- FAIL: TestX (0.00s)\n    x_test.go:9: want 1, got 2\nFAIL\tpkg/x\t0.02s\n"
	short := "--- FAIL: TestX (0.00s)\n    x_test.go:9: want 1, got 2\nFAIL\tpkg/x\t0.02s\n"
	rewind := func(h string) string { return "[OMNI: 12 lines omitted, omni retrieve " + h + " for full output]\n" }
	secretRaw := "API_TOKEN=abcdef0123456789abcdef\n" + raw
	secretRed := "API_TOKEN=[REDACTED]\n" + raw
	trRaw := "line 1" + pad + "\nline 2" + pad + "\nline 3" + pad + "\nline 4" + pad + "\n"
	failL := "error: boom happened here" + pad + "\n"
	blocks := map[string]string{hr: raw, hx: raw[:40], hs: secretRed, hf: failL, hm: "line 2" + pad + "\nline 3" + pad + "\n", hl: "alpha one" + pad + "\n"}
	retrieve := func(h string) (string, error) {
		if b, ok := blocks[h]; ok {
			return b, nil
		}
		return "", fmt.Errorf("no archived content for this handle")
	}
	call := func(session, raw, del string, handles ...string) bench.OutLine {
		return bench.OutLine{Session: session, Agent: "main", Project: "p", HostTool: "Bash", Event: "PostToolUse", Raw: raw, Delivered: del, Handles: handles}
	}
	shownL := "[OMNI: 1 lines already shown, omni retrieve " + hl + "]\n"
	lraw := "alpha one" + pad + "\ntail\n"
	jsonRaw := `{"name": "omni", "tags": ["a", "b"], "n": 3}` + "\n"
	for _, c := range []struct {
		name  string
		calls []bench.OutLine
		want  []string
	}{
		{"clean rewind", []bench.OutLine{call("p/1", raw, short+rewind(hr))}, nil},
		{"clean redacted rewind", []bench.OutLine{call("p/1", secretRaw, "[OMNI: 1 sensitive value(s) redacted]\n"+short+rewind(hs))}, nil},
		{"a redacted rewind without its marker", []bench.OutLine{call("p/1", secretRaw, short+rewind(hs))}, []string{"a:rewind-is-raw"}},
		{"a rewind naming another output", []bench.OutLine{call("p/1", secretRaw, "[OMNI: 1 sensitive value(s) redacted]\n"+short+rewind(hr))}, []string{"a:rewind-is-raw"}},
		{"clean line-form cut", []bench.OutLine{call("p/1", trRaw, "line 1"+pad+"\n[OMNI: output truncated, 2 of 4 lines kept, 2 dropped from the middle, omni retrieve "+hm+"]\nline 4"+pad+"\n")}, nil},
		{"a cut that miscounts", []bench.OutLine{call("p/1", trRaw, "line 1"+pad+"\n[OMNI: output truncated, 3 of 4 lines kept, 1 dropped from the middle, omni retrieve "+hm+"]\nline 4"+pad+"\n")},
			[]string{"a:truncation-resolves"}},
		{"a rewind block that is not raw", []bench.OutLine{call("p/1", raw, short+rewind(hx))}, []string{"a:rewind-is-raw"}},
		{"an unknown rewind handle", []bench.OutLine{call("p/1", raw, short+"[OMNI: 12 lines omitted, omni retrieve eeeeeeeeeeeeeeee for full output]\n")},
			[]string{"a:rewind-is-raw"}},
		{"a change with no marker", []bench.OutLine{call("p/1", raw, short)}, []string{"a:first-seen-text-explained"}},
		{"a redaction with its marker", []bench.OutLine{call("p/1", secretRaw, "[OMNI: 1 sensitive value(s) redacted]\n"+secretRed)}, nil},
		{"a redaction without its marker", []bench.OutLine{call("p/1", secretRaw, secretRed)}, []string{"a:first-seen-text-explained"}},
		{"a failure line distilled away", []bench.OutLine{call("p/1", raw, "FAIL\tpkg/x\t0.02s\n"+rewind(hr))}, []string{"c:failure-lines-kept"}},
		{"growth without redaction", []bench.OutLine{call("p/1", "x\n", "x\ny\n")}, []string{"d:no-growth-except-redaction", "a:first-seen-text-explained"}},
		{"a changed structured payload", []bench.OutLine{call("p/1", jsonRaw, strings.Replace(jsonRaw, " ", "", 1))},
			[]string{"e:structured-unchanged", "a:first-seen-text-explained"}},
		{"a clean session fold", []bench.OutLine{call("p/1", lraw, lraw), call("p/1", lraw, shownL+"tail\n", hl)}, nil},
		{"a fold of lines another reader saw", []bench.OutLine{call("p/1", lraw, lraw),
			fullWith(call("p/1", lraw, shownL+"tail\n", hl), func(o *bench.OutLine) { o.Agent = "sub-1" })}, []string{"b:already-shown-to-reader"}},
		{"a fold after a compaction", []bench.OutLine{call("p/1", lraw, lraw),
			fullWith(call("p/1", lraw, shownL+"tail\n", hl), func(o *bench.OutLine) { o.Epoch = 1 })}, []string{"b:already-shown-to-reader"}},
		{"a folded failure line", []bench.OutLine{call("p/1", failL+"tail\n", failL+"tail\n"),
			call("p/1", failL+"tail\n", "[OMNI: 1 lines already shown, omni retrieve "+hf+"]\ntail\n", hf)}, []string{"c:failure-lines-kept"}},
		{"a fold whose handle was not issued", []bench.OutLine{call("p/1", lraw, lraw), call("p/1", lraw, shownL+"tail\n")},
			[]string{"a:first-seen-text-explained"}},
	} {
		or := newFullOracle(retrieve)
		for i := range c.calls {
			c.calls[i].Seq = i
			or.check(&c.calls[i])
		}
		want := map[string]bool{}
		for _, p := range c.want {
			want[p] = true
		}
		for _, p := range fullProps {
			if got := or.violations[p]; (got > 0) != want[p] {
				t.Errorf("%s: property %s: %d violation(s), want them %v\n  %s", c.name, p, got, want[p], strings.Join(or.first, "\n  "))
			}
		}
	}
}

func fullWith(o bench.OutLine, f func(*bench.OutLine)) bench.OutLine { f(&o); return o }

// testPct is 100·a/b, 0 when b is 0.
func testPct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
