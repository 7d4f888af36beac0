package pipeline

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// The ledger's floors and bars. Each is a named constant with its source;
// changing one changes what folds, so tests pin them. A what-if run may
// weigh other values through Request.Bars.
const (
	// MinRunBytes: a run of lines under 128 bytes never folds, and so an
	// output under 128 bytes never reaches the ledger (Decision.Reason
	// "floor:128"). The floor is measured on each run, not on the output:
	// a small run inside a large output and a large run inside a small
	// one are weighed alike. On the shared corpus (513 sessions) the
	// earlier floors (264 bytes per output, a 150-byte gain, and nothing
	// folded in an output under 1,024 bytes that was 80% seen already)
	// left 585 KB of seen lines unfolded; this floor with MinSessionGain
	// saves 713 KB more than they did (omni bench: 13.0% to 15.9% of
	// 24.2 MB, that change alone). The ledger's own bars (the marker's
	// cost plus MinSessionGain) keep a fold from costing the reader more
	// than it saves.
	MinRunBytes = 128
	// MinSessionGain: a session run folds only if its bytes are at least the
	// rendered marker's bytes plus 64, so a fold always saves at least 64
	// bytes net (about 16 tokens: a marker that saves less than a short
	// line is not worth a handle).
	MinSessionGain = 64
	// ProjectGainMult: the project bar is 2x the session gain, 128 bytes,
	// because the reader has no choice about paying a retrieval for lines
	// it was never shown. On the shared corpus, 2x instead of 3x saves
	// 91 KB more (+0.4 points of 24.2 MB); 1x would save 62 KB beyond that,
	// with each project marker then worth only as much as a session one.
	ProjectGainMult = 2
	// maxBlockBytes: no archived block is larger than 64 KiB; a longer run
	// is cut at line boundaries into blocks of at most this size, and a
	// single longer line never folds (capping archived blocks at 64 KB
	// took a 30-day archive from 83.1 MB to 13.3 MB while still covering
	// 3,604 of 3,657 rows of the measured history).
	maxBlockBytes = 65536
)

// Bars are the floors Decide weighs a run against. DefaultBars holds the
// constants above; a what-if run (a bench flag) may pass others through
// Request.Bars. Every field is in bytes.
type Bars struct {
	// MinRun: a run under this many bytes never folds (MinRunBytes).
	MinRun int
	// SessionGain: the net bytes a session fold must save (MinSessionGain).
	SessionGain int
	// ProjectGain: the net bytes a project fold must save
	// (MinSessionGain * ProjectGainMult).
	ProjectGain int
}

// DefaultBars are the bars Decide uses when Request.Bars is nil.
var DefaultBars = Bars{MinRun: MinRunBytes, SessionGain: MinSessionGain, ProjectGain: MinSessionGain * ProjectGainMult}

// Scope is what the ledger knows about a line for the deciding reader.
type Scope uint8

// The scopes of a line.
const (
	// ScopeNone: not delivered before (or delivered more than 30 days ago).
	ScopeNone Scope = iota
	// ScopeSession: delivered to this reader since its last compaction.
	ScopeSession
	// ScopeProject: delivered in this project, not to this reader.
	ScopeProject
)

// Seen is the ledger's answer for one line key.
type Seen struct {
	Scope Scope
	// Source is the command or path whose output first delivered the line
	// in that scope ("" when unknown).
	Source string
}

// View is what Decide needs from the ledger, for one reader in one project
// at the time of the decision. Implementations must answer consistently for
// the duration of one Decide call.
type View interface {
	// Lookup returns the scope and first source of a non-blank line key.
	Lookup(key uint64) Seen
	// Debts lists the handles the reader retrieved and is owed one whole
	// delivery of (one verbatim delivery per retrieve, not an exemption:
	// the repeat after it folds again), in a fixed order.
	Debts() []Debt
	// Empty reports whether the reader holds no delivered lines at all (a
	// fresh subagent or session, or the first delivery after a compaction).
	Empty() bool
}

// Debt is one whole delivery a reader is owed after retrieving Handle.
type Debt struct {
	Handle string
	// Keys are the line keys (KeyOf) of the block's non-blank lines. A
	// delivery whose text holds all of them carries those lines unfolded and
	// pays the debt, whatever fold it would otherwise make. Nil when unknown:
	// then only a fold of a block with exactly this handle pays it.
	Keys []uint64
}

// Request is one text to decide on.
type Request struct {
	// Text is what the host would show the model.
	Text string
	// Source is the command line (Bash) or path (Read) that produced Text.
	Source string
	// Read selects the line-count-preserving rendering: a marker line
	// followed by one Filler line per further replaced line.
	Read bool
	// Failed marks the failure path: the text passes unchanged (but is still
	// recorded as delivered), unless FoldFailing is set too.
	Failed bool
	// FoldFailing lets a failing run (Failed) fold like any other output
	// except its failure lines, which never fold: set by a door that ran
	// the command itself (exec, and the PreToolUse rewrite through it), so
	// what the reader reads is omni's delivery, not the host's failure
	// text.
	FoldFailing bool
	// Original is the tool's text before the first-seen stages (Shorten)
	// changed it into Text; "" when they did not. When every line of Text
	// was shown to this reader already, the whole output folds into one
	// MarkerShortened whose handle returns Original: expanding a marker
	// gives back what the tool printed, never omni's short form.
	Original string
	// Bars overrides DefaultBars (a what-if run); nil for the defaults.
	Bars *Bars
	// NoFold forces delivery unchanged (e.g. the archive cannot be written,
	// or the command is omni's own recovery command) with this reason.
	NoFold string
	// Floor, when above 0, replaces the 264-byte floor (minLedgerInput):
	// an output under Floor bytes never folds (reason "floor:<Floor>").
	// It is a what-if setting (omni bench --fold-floor); 0 keeps the
	// floor's derived value.
	Floor int
	// memo is what Shorten read of Text (ShortenResult.Reuse), or nil.
	memo *textMemo
}

// Fold is one run the decision replaced.
type Fold struct {
	// FirstLine and Lines locate the replaced lines (0-based index, count).
	FirstLine, Lines int
	// Bytes is the size of the replaced bytes (line endings included).
	Bytes int
	Scope Scope
	Kind  MarkerKind
	// Handle names Block; the caller must archive Block under it before the
	// marker is delivered.
	Handle string
	// Block is the exact replaced bytes (a substring of Request.Text).
	Block string
	// Marker is the text that replaced Block, fillers and ending included.
	Marker string
	// From is the from-clause source ("" if the marker has none); Source the
	// first delivering source of the run.
	From, Source string
}

// Decision is the outcome of Decide.
type Decision struct {
	// Text is what the model reads: Request.Text when nothing folded.
	Text string
	// Folds lists the folds in text order.
	Folds []Fold
	// Delivered lists the keys of the delivered non-blank lines (each key
	// once, in order). Folded lines are not in it.
	Delivered []uint64
	// Reason says why nothing folded ("" when something did): "failed"
	// (a failing run, Request.Failed without FoldFailing), "floor:128"
	// (under MinRunBytes: no run can clear the floor),
	// "structured:KIND" (Sniff found a structured or opaque payload of that
	// Kind), "no-run" (nothing repeated, or no run cleared its bar), or
	// Request.NoFold when it was set.
	Reason string
	// RepeatBytes counts bytes of non-blank lines already delivered to this
	// reader (session scope), failure lines included: the available repetition.
	RepeatBytes int
	// Paid lists handles whose owed whole delivery this decision paid.
	Paid []string
	// RawLines and DeliveredLines count the lines of Request.Text and Text.
	RawLines, DeliveredLines int
}

// Reasons a decision folded nothing.
const (
	reasonFailed     = "failed"
	reasonFloor      = "floor:128"
	reasonStructured = "structured:" // followed by the Kind
	reasonNoRun      = "no-run"      // nothing repeated, or no run cleared its bar
)

type lineInfo struct {
	seen     Seen
	eligible bool // may fold: non-blank, seen, not a failure line
	blank    bool
	omni     bool // one of omni's own marker lines (a cut, a collapse): not content
}

// Decide runs the guard and the ledger over one text for one reader. It is
// pure: the same Request and View answers give byte-identical Decisions.
// Rules: structured payloads never fold; a run under MinRunBytes never
// folds (so neither does a shorter output); runs are maximal stretches of
// lines of one scope, whatever call first delivered each line (one marker
// per run), blank lines inside a run travel with it, failure lines never
// fold and split runs; a run folds only if it clears its bar; a
// project fold never reaches a reader that holds nothing yet, and an output
// is never only markers when one of them is project scope (the project
// folds are dropped and their lines delivered, so they become shown); a
// block the reader retrieved is delivered whole once, by the first delivery
// that holds its lines, on every path.
func Decide(req Request, v View) Decision {
	text := req.Text
	memo := req.memo
	if memo != nil && memo.text != text {
		memo = nil
	}
	var lines []Line
	if memo != nil && memo.lines != nil {
		lines = memo.lines
	} else {
		lines = SplitLines(make([]Line, 0, 64), text)
	}
	d := Decision{Text: text, RawLines: len(lines), DeliveredLines: len(lines)}
	info := make([]lineInfo, len(lines))
	bars := req.bars()
	// A commit listing's judge reads its commit lines; any other output's
	// is IsFailureLine, whose verdicts Shorten may have read already.
	plain := !isCommitListing(req.Source)
	judge := IsFailureLine
	if !plain {
		judge = failureJudge(req.Source, text, lines)
	}
	states := func(i int) bool {
		if plain && memo != nil && memo.failure != nil {
			return memo.failure[i]
		}
		return judge(text[lines[i].Start:lines[i].End])
	}
	owedKeys, legacy := payDebts(v.Debts(), lines, &d)
	seenBytes := 0
	for i, ln := range lines {
		if ln.Key == 0 {
			info[i].blank = true
			continue
		}
		s := v.Lookup(ln.Key)
		info[i].seen = s
		info[i].omni = isOmniMarker(text[ln.Start:ln.End])
		if s.Scope == ScopeSession {
			d.RepeatBytes += ln.End - ln.Start
		}
		if _, owed := owedKeys[ln.Key]; owed {
			continue
		}
		if s.Scope != ScopeNone && (!req.Failed || req.FoldFailing) && !states(i) &&
			!isRedactionNotice(text[ln.Start:ln.End]) && !info[i].omni {
			info[i].eligible = true
			seenBytes += ln.End - ln.Start
		}
	}
	unchanged := func(reason string) Decision {
		d.Reason = reason
		d.Delivered = distinctKeys(lines, nil)
		return d
	}
	switch {
	case req.NoFold != "":
		return unchanged(req.NoFold)
	case req.Failed && !req.FoldFailing:
		return unchanged(reasonFailed)
	case req.Floor > 0 && len(text) < req.Floor:
		return unchanged("floor:" + strconv.Itoa(req.Floor))
	case len(text) < bars.MinRun:
		return unchanged(reasonFloor)
	}
	k := KindNone
	if memo != nil {
		k = memo.kind
	} else {
		k = Sniff(text)
	}
	if k != KindNone {
		return unchanged(reasonStructured + string(k))
	}
	if seenBytes == 0 {
		return unchanged(reasonNoRun)
	}
	if f, ok := shortenedWhole(req, bars, v, lines, info, owedKeys); ok {
		d.Text = f.Marker
		d.Folds = []Fold{f}
		d.Delivered = []uint64{}
		d.DeliveredLines = CountLines(f.Marker)
		return d
	}

	folds := planFolds(req, bars, v, lines, info, legacy, &d)
	if len(folds) == 0 {
		return unchanged(reasonNoRun)
	}
	folded := make([]bool, len(lines))
	for _, f := range folds {
		for i := f.FirstLine; i < f.FirstLine+f.Lines; i++ {
			folded[i] = true
		}
	}
	var b strings.Builder
	b.Grow(len(text))
	fi := 0
	for i := 0; i < len(lines); {
		if fi < len(folds) && folds[fi].FirstLine == i {
			b.WriteString(folds[fi].Marker)
			i += folds[fi].Lines
			fi++
			continue
		}
		b.WriteString(text[lines[i].Start:lines[i].End])
		i++
	}
	d.Text = b.String()
	d.Folds = folds
	d.Delivered = distinctKeys(lines, folded)
	d.DeliveredLines = 0
	for _, f := range folds {
		d.DeliveredLines += CountLines(f.Marker)
	}
	for i := range lines {
		if !folded[i] {
			d.DeliveredLines++
		}
	}
	return d
}

// payDebts settles the debts whose block lines the text holds, all of
// them: those lines are delivered unfolded and the handles go to d.Paid.
// It returns the keys now exempt from folding and the debts recorded
// without keys (paid only by a fold of exactly their handle, planBlock).
func payDebts(debts []Debt, lines []Line, d *Decision) (owed map[uint64]struct{}, legacy map[string]bool) {
	if len(debts) == 0 {
		return nil, nil
	}
	held := make(map[uint64]struct{}, len(lines))
	for _, ln := range lines {
		if ln.Key != 0 {
			held[ln.Key] = struct{}{}
		}
	}
	for _, db := range debts {
		if len(db.Keys) == 0 {
			if legacy == nil {
				legacy = map[string]bool{}
			}
			legacy[db.Handle] = true
			continue
		}
		all := true
		for _, k := range db.Keys {
			if _, ok := held[k]; !ok {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if owed == nil {
			owed = map[uint64]struct{}{}
		}
		for _, k := range db.Keys {
			owed[k] = struct{}{}
		}
		d.Paid = append(d.Paid, db.Handle)
	}
	return owed, legacy
}

// planFolds finds the runs, cuts them into blocks, and keeps the blocks
// that clear their bars.
func planFolds(req Request, bars Bars, v View, lines []Line, info []lineInfo, legacy map[string]bool, d *Decision) []Fold {
	text := req.Text
	n := len(lines)
	var folds []Fold
	// A run is one scope, whatever call first delivered each of its lines:
	// splitting it by source would print one marker per earlier call.
	same := func(i int, s Seen) bool { return info[i].eligible && info[i].seen.Scope == s.Scope }
	for i := 0; i < n; {
		if !info[i].eligible {
			i++
			continue
		}
		s := info[i].seen
		j := i + 1
		for j < n {
			if same(j, s) {
				j++
				continue
			}
			if info[j].blank {
				m := j
				for m < n && info[m].blank {
					m++
				}
				if m < n && same(m, s) {
					j = m
					continue
				}
				if m == n { // trailing blank lines of the output travel with the run
					j = m
				}
			}
			break
		}
		start := i
		if allBlank(info[:start]) { // leading blank lines of the output too
			start = 0
		}
		for _, blk := range cutBlocks(lines, start, j) {
			if f, ok := planBlock(req, bars, v, lines, blk[0], blk[1], s, legacy, d); ok {
				folds = append(folds, f)
			}
		}
		_ = text
		i = j
	}
	return dropProjectIfOnlyMarkers(folds, info)
}

// dropProjectIfOnlyMarkers enforces "never the whole reply" on the output
// as a whole: when the folds
// leave no non-blank line of the text and one of them is project scope, the
// project folds are dropped, so their lines are delivered (and become shown
// to this reader) beside the session markers. A reader handed only markers,
// one of them for lines it never saw, could get those lines only by a
// retrieve, and would be handed the same markers on every repeat.
func dropProjectIfOnlyMarkers(folds []Fold, info []lineInfo) []Fold {
	project := false
	covered := 0
	for _, f := range folds {
		if f.Scope == ScopeProject {
			project = true
		}
		for k := f.FirstLine; k < f.FirstLine+f.Lines; k++ {
			if !info[k].blank && !info[k].omni {
				covered++
			}
		}
	}
	if !project {
		return folds
	}
	// omni's own marker lines (a cut's, a collapse's) are not content: a
	// project marker beside them alone is still only markers.
	for k := range info {
		if !info[k].blank && !info[k].omni {
			covered--
		}
	}
	if covered < 0 {
		return folds // a content line survives
	}
	kept := folds[:0]
	for _, f := range folds {
		if f.Scope != ScopeProject {
			kept = append(kept, f)
		}
	}
	return kept
}

func allBlank(info []lineInfo) bool {
	for _, x := range info {
		if !x.blank {
			return false
		}
	}
	return true
}

// cutBlocks cuts lines [start, end) into consecutive blocks of at most
// maxBlockBytes each; a line longer than that stands alone and is skipped.
func cutBlocks(lines []Line, start, end int) [][2]int {
	var out [][2]int
	bs, size := start, 0
	for k := start; k < end; k++ {
		l := lines[k].End - lines[k].Start
		if l > maxBlockBytes {
			if k > bs {
				out = append(out, [2]int{bs, k})
			}
			bs, size = k+1, 0
			continue
		}
		if size+l > maxBlockBytes {
			out = append(out, [2]int{bs, k})
			bs, size = k, 0
		}
		size += l
	}
	if end > bs {
		out = append(out, [2]int{bs, end})
	}
	return out
}

// planBlock decides one block [a, b) of one scope and source.
func planBlock(req Request, bars Bars, v View, lines []Line, a, b int, s Seen, legacy map[string]bool, d *Decision) (Fold, bool) {
	text := req.Text
	block := text[lines[a].Start:lines[b-1].End]
	count := b - a
	whole := a == 0 && b == len(lines)
	var kind MarkerKind
	gain := bars.SessionGain
	switch {
	case s.Scope == ScopeProject:
		// A project fold never replaces the whole output, and never reaches a
		// reader that holds nothing yet: a fresh subagent or session would be
		// handed markers for text it has never seen (a subagent's first
		// command would come back as one line claiming lines of an earlier
		// session).
		if whole || v.Empty() {
			return Fold{}, false
		}
		kind = MarkerProject
		gain = bars.ProjectGain
	case whole:
		kind = MarkerWhole
	default:
		kind = MarkerRun
	}
	// No from-clause: the marker says whether its lines were shown to this
	// reader and how to get them back; which call delivered them first is
	// omni explain's answer, not the reader's cost on every fold.
	from := ""
	// Weigh the exact marker with the example handle (same length as a real one).
	lastEnd := textline.Ending(text[lines[b-1].Start:lines[b-1].End])
	render := func(h string) string {
		if kind == MarkerWhole {
			return renderWhole(count, h, req.Read)
		}
		return renderMarker(kind, count, h, from)
	}
	marker := render(ExampleHandle)
	cost := len(marker) + len(lastEnd)
	// A Read fold keeps every later line at its number with one filler per
	// further replaced line; a fold of the whole output has no later line,
	// so it is the marker alone (Claude Code numbers the lines itself from
	// file.startLine, so each filler is a numbered line the model reads).
	fill := req.Read && !whole
	if fill {
		cost = len(marker) + len(textline.Ending(text[lines[a].Start:lines[a].End]))
		for k := a + 1; k < b; k++ {
			cost += len(Filler) + len(textline.Ending(text[lines[k].Start:lines[k].End]))
		}
	}
	if len(block) < cost+gain || len(block) < bars.MinRun {
		return Fold{}, false
	}
	h := HandleOf(block)
	if legacy[h] {
		d.Paid = append(d.Paid, h)
		return Fold{}, false
	}
	marker = render(h)
	var mb strings.Builder
	mb.Grow(cost)
	mb.WriteString(marker)
	if fill {
		mb.WriteString(textline.Ending(text[lines[a].Start:lines[a].End]))
		for k := a + 1; k < b; k++ {
			mb.WriteString(Filler)
			mb.WriteString(textline.Ending(text[lines[k].Start:lines[k].End]))
		}
	} else {
		mb.WriteString(lastEnd)
	}
	scope := s.Scope
	return Fold{FirstLine: a, Lines: count, Bytes: len(block), Scope: scope, Kind: kind, Handle: h,
		Block: block, Marker: mb.String(), From: from, Source: s.Source}, true
}

// shortenedWhole folds a shortened output (Request.Original set) whose
// every non-blank line, omni's own cut markers included, this reader was
// shown already (session scope), none a failure line or owed: one
// MarkerShortened whose block is the tool's text, so its handle returns
// what the tool printed. It must clear the session bar against the short
// form it replaces.
func shortenedWhole(req Request, bars Bars, v View, lines []Line, info []lineInfo, owed map[uint64]struct{}) (Fold, bool) {
	if req.Original == "" || req.Original == req.Text || req.Read || (req.Failed && !req.FoldFailing) {
		return Fold{}, false
	}
	text := req.Text
	for i, ln := range lines {
		if info[i].blank {
			continue
		}
		if info[i].seen.Scope != ScopeSession {
			return Fold{}, false
		}
		if _, o := owed[ln.Key]; o {
			return Fold{}, false
		}
		if !info[i].eligible && !info[i].omni {
			return Fold{}, false // a failure line or a redaction notice
		}
	}
	m := CountLines(req.Original)
	lastEnd := textline.Ending(text[lines[len(lines)-1].Start:lines[len(lines)-1].End])
	cost := len(renderShortened(len(lines), m, ExampleHandle)) + len(lastEnd)
	if len(text) < cost+bars.SessionGain || len(text) < bars.MinRun {
		return Fold{}, false
	}
	h := HandleOf(req.Original)
	marker := renderShortened(len(lines), m, h) + lastEnd
	return Fold{FirstLine: 0, Lines: len(lines), Bytes: len(text), Scope: ScopeSession, Kind: MarkerShortened,
		Handle: h, Block: req.Original, Marker: marker, Source: info[firstNonBlank(info)].seen.Source}, true
}

func firstNonBlank(info []lineInfo) int {
	for i, x := range info {
		if !x.blank {
			return i
		}
	}
	return 0
}

// isOmniMarker reports whether a line is one of omni's own marker lines
// ("[OMNI: ...]", a cut, a collapse or a distiller's note): it is not the
// tool's content, so it never folds into a run (its handle, if any, still
// returns its bytes).
func isOmniMarker(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "[OMNI: ") && strings.HasSuffix(t, "]")
}

// bars returns the bars this request is weighed against.
func (r Request) bars() Bars {
	if r.Bars != nil {
		return *r.Bars
	}
	return DefaultBars
}

// distinctKeys returns the keys of non-blank lines not marked folded, each
// once, in order.
func distinctKeys(lines []Line, folded []bool) []uint64 {
	out := make([]uint64, 0, len(lines))
	seen := make(map[uint64]struct{}, len(lines))
	for i, l := range lines {
		if l.Key == 0 || (folded != nil && folded[i]) {
			continue
		}
		if _, ok := seen[l.Key]; ok {
			continue
		}
		seen[l.Key] = struct{}{}
		out = append(out, l.Key)
	}
	return out
}
