package pipeline

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/internal/textline"
)

// The ledger's floors and bars. Each is a named constant with its source;
// changing one changes what folds, so tests pin them.
const (
	// minLedgerInput: output under 264 bytes never folds: a 64-byte marker
	// plus the 150-byte session gain leave no run worth a handle (the
	// reference tool's MIN_LEDGER_INPUT, derived the same way).
	minLedgerInput = 264
	// minWholeOutputFold: output under 1024 bytes whose already-seen bytes
	// are at least 80% of it folds nothing: a fold covering nearly all of a
	// small output leaves the reader nothing beside the marker (on the
	// reference tool's maintainer's machine, 4 of 4 sub-1 KB whole-output
	// folds were retrieved within 3-9 s, against a 0.85% base retrieve rate).
	minWholeOutputFold = 1024
	// coverageNum/coverageDen: the 80% of minWholeOutputFold
	// (seen*5 >= payload*4).
	coverageNum, coverageDen = 4, 5
	// MinSessionGain: a session run folds only if its bytes are at least the
	// rendered marker's bytes plus 150 (the reference tool's
	// MIN_LEDGER_RUN_GAIN), so a fold always saves at least 150 bytes net.
	MinSessionGain = 150
	// ProjectGainMult: the project bar is 3x the session gain, 450 bytes,
	// because the reader has no choice about paying a retrieval (the
	// reference tool's PROJECT_FLOOR_MULT).
	ProjectGainMult = 3
	// maxBlockBytes: no archived block is larger than 64 KiB; a longer run
	// is cut at line boundaries into blocks of at most this size, and a
	// single longer line never folds (the reference tool's MAX_REWIND_BYTES:
	// capping archived blocks at 64 KB took its 30-day archive from 83.1 MB
	// to 13.3 MB while still covering 3,604 of 3,657 rows).
	maxBlockBytes = 65536
)

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
	// recorded as delivered).
	Failed bool
	// NoFold forces delivery unchanged (e.g. the archive cannot be written,
	// or the command is omni's own recovery command) with this reason.
	NoFold string
	// Floor, when above 0, replaces the 264-byte floor (minLedgerInput):
	// an output under Floor bytes never folds (reason "floor:<Floor>").
	// It is a what-if setting (omni bench --fold-floor); 0 keeps the
	// floor's derived value.
	Floor int
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
	// (a failing run, Request.Failed), "floor:264" (under 264
	// bytes), "floor:1024" (a small output mostly seen already),
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
	reasonFloor264   = "floor:264"
	reasonFloor1024  = "floor:1024"
	reasonStructured = "structured:" // followed by the Kind
	reasonNoRun      = "no-run"      // nothing repeated, or no run cleared its bar
)

type lineInfo struct {
	seen     Seen
	eligible bool // may fold: non-blank, seen, not a failure line
	blank    bool
}

// Decide runs the guard and the ledger over one text for one reader. It is
// pure: the same Request and View answers give byte-identical Decisions.
// Rules: structured payloads never fold; output
// under 264 bytes (minLedgerInput) never folds; under 1024 bytes
// (minWholeOutputFold) with 80% seen nothing folds; runs are maximal stretches of lines of one scope and one
// first source, blank lines inside a run travel with it, failure lines
// never fold and split runs; a run folds only if it clears its bar; a
// project fold never reaches a reader that holds nothing yet, and an output
// is never only markers when one of them is project scope (the project
// folds are dropped and their lines delivered, so they become shown); a
// block the reader retrieved is delivered whole once, by the first delivery
// that holds its lines, on every path.
func Decide(req Request, v View) Decision {
	text := req.Text
	lines := SplitLines(make([]Line, 0, 64), text)
	d := Decision{Text: text, RawLines: len(lines), DeliveredLines: len(lines)}
	info := make([]lineInfo, len(lines))
	owedKeys, legacy := payDebts(v.Debts(), lines, &d)
	seenBytes := 0
	for i, ln := range lines {
		if ln.Key == 0 {
			info[i].blank = true
			continue
		}
		s := v.Lookup(ln.Key)
		info[i].seen = s
		if s.Scope == ScopeSession {
			d.RepeatBytes += ln.End - ln.Start
		}
		if _, owed := owedKeys[ln.Key]; owed {
			continue
		}
		if s.Scope != ScopeNone && !req.Failed && !IsFailureLine(text[ln.Start:ln.End]) && !isRedactionNotice(text[ln.Start:ln.End]) {
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
	case req.Failed:
		return unchanged(reasonFailed)
	case req.Floor > 0 && len(text) < req.Floor:
		return unchanged("floor:" + strconv.Itoa(req.Floor))
	case req.Floor <= 0 && len(text) < minLedgerInput:
		return unchanged(reasonFloor264)
	}
	if k := Sniff(text); k != KindNone {
		return unchanged(reasonStructured + string(k))
	}
	if len(text) < minWholeOutputFold && seenBytes*coverageDen >= len(text)*coverageNum {
		return unchanged(reasonFloor1024)
	}
	if seenBytes == 0 {
		return unchanged(reasonNoRun)
	}

	folds := planFolds(req, v, lines, info, legacy, &d)
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
func planFolds(req Request, v View, lines []Line, info []lineInfo, legacy map[string]bool, d *Decision) []Fold {
	text := req.Text
	n := len(lines)
	var folds []Fold
	same := func(i int, s Seen) bool { return info[i].eligible && info[i].seen == s }
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
			if f, ok := planBlock(req, v, lines, blk[0], blk[1], s, legacy, d); ok {
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
			if !info[k].blank {
				covered++
			}
		}
	}
	if !project {
		return folds
	}
	for k := range info {
		if !info[k].blank {
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
func planBlock(req Request, v View, lines []Line, a, b int, s Seen, legacy map[string]bool, d *Decision) (Fold, bool) {
	text := req.Text
	block := text[lines[a].Start:lines[b-1].End]
	count := b - a
	whole := a == 0 && b == len(lines)
	var kind MarkerKind
	from := ""
	differs := s.Source != "" && s.Source != req.Source
	if differs {
		from = sourceForMarker(s.Source)
	}
	gain := MinSessionGain
	switch {
	case s.Scope == ScopeProject:
		// A project fold never replaces the whole output, and never reaches a
		// reader that holds nothing yet: a fresh subagent or session would be
		// handed markers for text it has never seen (the reference tool
		// allowed both until its fixes for fajarhide/omni#575 and #581: a
		// subagent's first command came back as one line claiming 40
		// identical lines of an earlier session).
		if whole || v.Empty() {
			return Fold{}, false
		}
		kind = MarkerProject
		gain = MinSessionGain * ProjectGainMult
	case whole:
		kind = MarkerWhole
	case s.Source != "" && !differs:
		kind, from = MarkerRerun, ""
	default:
		kind = MarkerRun
	}
	// Weigh the exact marker with the example handle (same length as a real one).
	lastEnd := textline.Ending(text[lines[b-1].Start:lines[b-1].End])
	marker := renderMarker(kind, count, ExampleHandle, from)
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
	if len(block) < cost+gain {
		return Fold{}, false
	}
	h := HandleOf(block)
	if legacy[h] {
		d.Paid = append(d.Paid, h)
		return Fold{}, false
	}
	marker = renderMarker(kind, count, h, from)
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
