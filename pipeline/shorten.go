package pipeline

import (
	"strconv"
	"strings"

	"github.com/omnictx/omni/pipeline/distill"
)

// ShortenRequest is one first-seen tool output to shorten. The
// caller fills it from the host payload or from `omni exec`/`omni distill`.
type ShortenRequest struct {
	// Command is the shell command line that produced Text, exactly as the
	// agent wrote it ("" for host tools such as Read or Grep). The distiller
	// is chosen from it, never from the content alone.
	Command string
	// Tool is the host tool name: "Bash" (or "" for a command run through
	// `omni exec`), "Read", "Grep", "Glob", "Edit", "Write", ... Read, Grep
	// and Glob results are recognised by this field only.
	Tool string
	// Path is the file path of a Read ("" otherwise). It is informational.
	Path string
	// Text is the output the model would read: for Bash, stdout with stderr
	// interleaved or appended as the host shows it.
	Text string
	// ExitCode is the command's exit status: 0 is success, anything else a
	// failing run, which is distilled only when the distiller recognised the
	// runner's own verdict and every failure line survives.
	ExitCode int
	// RedactedValues is the number of credential values the door's
	// redaction stage (package redact, run on everything omni receives
	// before it is recorded) replaced in Text: the redaction marker's n.
	// Shorten redacts nothing itself; 0 when nothing was replaced or the
	// user kept secrets (--keep-secrets).
	RedactedValues int
	// DoorGrew reports that the door's masks made Text longer than the
	// output arrived (a value shorter than "[REDACTED]").
	// A table or YAML document then gets the redaction marker line, as it
	// does when Shorten's own redaction made it longer.
	DoorGrew bool
	// Owed reports that the reader retrieved a block whose lines Text holds
	// and is owed them whole once: only redaction (and the structured
	// guard) runs; nothing is distilled, collapsed or cut (reason "owed").
	Owed bool
}

// Block is bytes a marker in ShortenResult.Text names by Handle (HandleOf
// Bytes, 16 hex characters). The caller must archive every Block under its
// Handle BEFORE it delivers the text (archive first: a handle must never
// name bytes that were not stored).
// No Block is larger than 16 MiB (maxArchiveBytes).
type Block struct {
	// Handle is HandleOf(Bytes).
	Handle string
	// Bytes is the exact archived text.
	Bytes string
}

// ShortenResult is what Shorten decided for one output. A caller may keep
// a result and hand it out again for an equal request (the hooks Engine
// does): nothing may write into its Blocks, and Decide only reads what
// Reuse hands it.
type ShortenResult struct {
	// Text is what the model reads; it equals ShortenRequest.Text byte for
	// byte when Changed is false.
	Text string
	// Blocks are the texts the markers in Text name: the whole (redacted)
	// raw output behind a rewind marker, and the middle dropped by the final
	// cut. Archive them before delivering Text.
	Blocks []Block
	// Distiller is the name of the distiller that ran ("" when none did),
	// e.g. "go-test", "pytest", "git-diff". It is set even when the
	// distiller's result was not used (see Reason).
	Distiller string
	// Redacted counts the credential values replaced by [REDACTED].
	Redacted int
	// Collapsed reports that the collapse fallback shaped Text.
	Collapsed bool
	// Reason says why the output (or its redacted form) passed without a
	// distillation: "empty", "tool:<name>", "read", "structured:<kind>",
	// "own-recovery", "has-marker", "chain", "filtered", "enumeration",
	// "verbatim", "no-distiller", "unrecognised", "failed:unverified",
	// "fidelity" or "not-smaller". It is "" when a distillation or collapse
	// was delivered.
	Reason string
	// Changed reports that Text differs from ShortenRequest.Text.
	Changed bool
	// memo is what Shorten read of ShortenRequest.Text, for Decide.
	memo *textMemo
}

// textMemo is what Shorten read of the text it was given: its kind
// (Sniff), its lines (SplitLines, nil when not split) and whether each
// states a failure (IsFailureLine, nil when not read). Decide reads them
// instead of computing them again when it decides that same text.
type textMemo struct {
	text    string
	kind    Kind
	lines   []Line
	failure []bool
}

// Reuse returns req carrying what Shorten read of its input (the text's
// kind, its lines, its failure lines) when req.Text is that input, as it
// is when Shorten left the text unchanged: Decide then does not compute
// them again. Any other req is returned as it is. The Decision is the
// same either way.
func (r ShortenResult) Reuse(req Request) Request {
	if r.memo != nil && req.Text == r.memo.text {
		req.memo = r.memo
	}
	return req
}

// maxArchiveBytes bounds a block Shorten archives (the raw behind a rewind
// marker, the middle of the final cut): 16 MiB, the largest input omni reads
// (MaxInput in hooks). A smaller cap (64 KiB, say) would print "not
// archived" markers; omni archives whatever it cuts, because rule 2 ("a handle wherever the bytes can be archived") beats
// archive size. Ledger folds keep maxBlockBytes.
const maxArchiveBytes = 16 << 20

// The size thresholds of Shorten. The three "is it smaller enough" tests are
// kept apart as named predicates, since three percentages (95%, 90%,
// strictly smaller) are easy to confuse: distillerEarnsKeep, routeKeepsRaw
// and markerPaysForItself.
const (
	// guardrailPct: a distillation earns its keep only if it is under 95% of
	// its input; otherwise the collapse fallback is tried (a cut under
	// 5% is not worth the risk of a rewrite).
	guardrailPct = 95
	// routePassthroughPct: a result of 90% of its input or more is not worth
	// a rewrite and the raw output is delivered, unless something was
	// redacted: a 10% cut is not worth a rewrite.
	routePassthroughPct = 90
	// maxOutputBytes is the final safety cut: a delivered text longer than
	// 50,000 bytes keeps its head and tail and loses its middle.
	maxOutputBytes = 50_000
	// tailBudgetFraction: the final cut reserves 1/5 of maxOutputBytes for
	// the tail, where build and test runs put their verdict.
	tailBudgetFraction = 5
)

// distillerEarnsKeep reports whether a distilled text of out bytes is
// clearly smaller than its input of in bytes: out < in*95/100. When it is
// not, Shorten tries the collapse fallback.
func distillerEarnsKeep(out, in int) bool {
	return int64(out)*100 < int64(in)*guardrailPct
}

// routeKeepsRaw reports whether a shortened text of out bytes is too close
// to its input of in bytes to be worth delivering: out >= in*90/100. Shorten
// then delivers the raw output, unless something was redacted.
func routeKeepsRaw(out, in int) bool {
	return int64(out)*100 >= int64(in)*routePassthroughPct
}

// markerPaysForItself reports whether a shortened text of final bytes plus
// its rewind marker of marker bytes is strictly smaller than the raw output
// of raw bytes: the cut must survive the cost of the text announcing it.
// If not, the raw output is delivered.
func markerPaysForItself(final, marker, raw int) bool {
	return final+marker < raw
}

// Shorten runs the first-seen stages over one output, in this order (the
// one copy of them; every door calls it):
//
//  1. the redaction count: the door redacted Text already (RedactedValues);
//  2. the structured/opaque guard (Sniff, which includes the any-JSON-line
//     rule): such payloads pass byte for byte, or redacted without a
//     marker line so they still parse;
//  3. tool arms: Read passes whole (line numbers must hold), Grep and Glob
//     are enumerations, Edit/Write-like tools are never touched;
//  4. the command: omni's own recovery commands, chains with more than one
//     producer, reshaping filters (`| grep`, `| sort`, ...) and
//     enumerations (ls, find, git --stat, kubectl get, ...) pass whole;
//  5. the command's distiller; a result that drops a failure line, or a
//     failing run whose verdict the distiller did not recognise, is not used;
//  6. the collapse fallback when the distillation is not under 95% of its
//     input (of the raw output, or of the distillation, whichever is
//     shorter);
//  7. the route: when what the model would read (the shortened text plus
//     its rewind marker) is 90% of the input or more → the raw output,
//     redacted if need be;
//  8. the rewind marker naming the archived raw output (archive first),
//     only when it and the shortened text are smaller than the raw output;
//  9. the redaction marker as the first line;
//  10. the final cut at 50,000 bytes, maxOutputBytes (not for Read).
//
// Shorten is pure and deterministic, never panics, and is safe for
// concurrent use. It does not apply the host's own limits (Claude Code's
// 30,000-character Bash cap): the caller decides whether a rewrite reaches
// the host at all.
func Shorten(req ShortenRequest) ShortenResult {
	raw := req.Text
	res := ShortenResult{Text: raw}
	if strings.TrimSpace(raw) == "" {
		res.Reason = "empty"
		return res
	}
	tool := normTool(req.Tool)
	if untouchedTool(tool) {
		res.Reason = "tool:" + tool
		return res
	}

	// 1. Redaction ran at the door: Text is already redacted.
	body := raw
	res.Redacted = max(0, req.RedactedValues)
	// deliver returns the result for an output that passes whole (redacted
	// if anything was redacted), with its reason.
	deliver := func(reason string) ShortenResult {
		res.Reason = reason
		if res.Redacted == 0 {
			res.Text = raw
			return res
		}
		res.Text = redactionMarker(res.Redacted) + "\n" + body
		res.Changed = true
		return res
	}

	// 2. Structured and opaque payloads.
	k := Sniff(body)
	res.memo = &textMemo{text: body, kind: k}
	if k != KindNone {
		// It passes as it is, redacted values included: a marker line would
		// break the payload's syntax, and the values read [REDACTED].
		res.Reason = "structured:" + string(k)
		// A table or YAML document that the door's masks made longer than
		// the output arrived (DoorGrew) gets the marker line after all:
		// output never grows without saying why, and a line above rows is
		// still read as rows.
		if res.Redacted > 0 && req.DoorGrew && (k == KindCSV || k == KindTSV || k == KindYAML) {
			res.Text = redactionMarker(res.Redacted) + "\n" + body
			res.Changed = true
		}
		return res
	}

	// The reader asked for bytes this output holds: they arrive whole.
	if req.Owed {
		if tool == "Read" {
			res.Reason = "owed"
			if res.Redacted > 0 {
				res.Text, res.Changed = body, true
			}
			return res
		}
		return deliver("owed")
	}

	// 3. Tool arms.
	switch tool {
	case "Read":
		// In place, with no marker line: a line above the file would move
		// every line number the host renders from startLine.
		res.Reason = "read"
		if res.Redacted > 0 {
			res.Text, res.Changed = body, body != raw
		}
		return res
	case "Grep", "Glob":
		return finalCut(deliver("enumeration"), tool)
	}

	// 4. The command.
	ci := distill.Analyze(req.Command)
	switch {
	case ci.OwnRecovery:
		return deliver("own-recovery")
	case hasOmniMarker(body):
		return deliver("has-marker")
	case ci.Chain:
		return finalCut(deliver("chain"), tool)
	case ci.Filter == distill.FilterReshape:
		return finalCut(deliver("filtered"), tool)
	case ci.Verbatim:
		return finalCut(deliver("verbatim"), tool)
	case ci.Enumeration:
		return finalCut(deliver("enumeration"), tool)
	}

	lines := SplitLines(make([]Line, 0, 64), body)
	res.memo.lines = lines
	candidate, kept := body, len(lines)
	reason := ""
	distilledVerbose := false

	// 5. The distiller.
	if d := distill.Pick(ci); d != nil {
		res.Distiller = d.Name()
		out, k, ok := d.Run(body, lines, req.ExitCode, ci.Args)
		switch {
		case !ok && req.ExitCode != 0:
			reason = "failed:unverified"
		case !ok:
			reason = "unrecognised"
		case !distill.FailuresPreserved(body, lines, out):
			if req.ExitCode != 0 {
				reason = "failed:unverified"
			} else {
				reason = "fidelity"
			}
		default:
			candidate, kept = out, k
			distilledVerbose = distill.AskedVerbose(ci.Args)
		}
	} else {
		reason = "no-distiller"
	}

	// 6. Collapse fallback: over the raw output, and over a distillation
	// that did not earn its keep; the shorter wins. A recognised run of a
	// command that asked for verbose output (-v, --verbose) keeps what its
	// distiller kept: the per-test lines were asked for.
	if !distilledVerbose && !distillerEarnsKeep(len(candidate), len(body)) {
		res.memo.failure = failureLines(body, lines)
		if c, folded, ok := distill.CollapseClassed(body, lines, res.memo.failure); ok && len(c) < len(candidate) {
			distilled, distilledKept := candidate, kept
			candidate, kept = c, len(lines)-folded
			res.Collapsed = true
			if distilled != body {
				dl := SplitLines(make([]Line, 0, 64), distilled)
				if c2, folded2, ok := distill.Collapse(distilled, dl); ok && len(c2) < len(candidate) {
					candidate, kept = c2, distilledKept-folded2
				}
			}
		} else if candidate != body {
			dl := SplitLines(make([]Line, 0, 64), candidate)
			if c2, folded2, ok := distill.Collapse(candidate, dl); ok {
				candidate, kept = c2, kept-folded2
				res.Collapsed = true
			}
		}
	} else if !distilledVerbose && candidate != body {
		// A distillation that earned its keep can still hold a cycle of
		// build or progress blocks (a docker build's steps): the block
		// collapse runs over it and over the raw output (not the line
		// rules: the lines a distiller kept one by one were chosen), and
		// the shortest wins.
		dl := SplitLines(make([]Line, 0, 64), candidate)
		if c2, folded2, ok := distill.CollapseBlocks(candidate, dl); ok && len(c2) < len(candidate) {
			candidate, kept = c2, kept-folded2
			res.Collapsed = true
		}
		if c2, folded2, ok := distill.CollapseBlocks(body, lines); ok && len(c2) < len(candidate) {
			candidate, kept = c2, len(lines)-folded2
			res.Collapsed = true
		}
	}

	// 7. Route, on what the model would read: the shortened text and its
	// rewind marker.
	same := candidate == body
	// The marker is weighed with the example handle (same length as a real
	// one); the real handle is computed only for a delivered cut.
	marker := rewindMarker(body, len(lines), kept, len(candidate), ExampleHandle)
	if !strings.HasSuffix(candidate, "\n") {
		candidate += "\n"
	}
	delivered := len(candidate) + len(marker) + 1
	if same || routeKeepsRaw(delivered, len(body)) {
		if reason == "" {
			reason = "not-smaller"
		}
		res.Collapsed = false
		return finalCut(deliver(reason), tool)
	}

	// 8. Rewind marker: archive the whole (redacted) raw output first.
	if !markerPaysForItself(len(candidate), len(marker)+1, len(body)) {
		res.Collapsed = false
		return finalCut(deliver("not-smaller"), tool)
	}
	if len(body) <= maxArchiveBytes {
		h := HandleOf(body)
		marker = rewindMarker(body, len(lines), kept, len(candidate), h)
		res.Blocks = append(res.Blocks, Block{Handle: h, Bytes: body})
	}
	text := candidate + marker + "\n"

	// 9. Redaction marker.
	if res.Redacted > 0 {
		text = redactionMarker(res.Redacted) + "\n" + text
	}
	res.Text, res.Changed, res.Reason = text, true, ""
	return finalCut(res, tool)
}

// failureLines returns IsFailureLine of each line of text.
func failureLines(text string, lines []Line) []bool {
	fail := make([]bool, len(lines))
	for i, ln := range lines {
		fail[i] = ln.Key != 0 && IsFailureLine(text[ln.Start:ln.End])
	}
	return fail
}

// normTool normalises a host tool name: "" and any case of "bash" are
// "Bash"; other names keep their spelling.
func normTool(t string) string {
	if t == "" || strings.EqualFold(t, "bash") {
		return "Bash"
	}
	switch strings.ToLower(t) {
	case "read":
		return "Read"
	case "grep":
		return "Grep"
	case "glob":
		return "Glob"
	}
	return t
}

// untouchedTool reports the tools whose result is never rewritten: edits and
// writes echo what the agent wrote, so there is nothing to shorten.
func untouchedTool(t string) bool {
	switch t {
	case "Edit", "Write", "MultiEdit", "NotebookEdit", "Create", "Move", "Delete", "Replace", "TodoWrite":
		return true
	}
	return false
}

// redactionMarker is the first line of a redacted reply: "[OMNI: N
// sensitive value(s) redacted]".
func redactionMarker(n int) string {
	return "[OMNI: " + strconv.Itoa(n) + " sensitive value(s) redacted]"
}

// isRedactionNotice reports whether line (its newline and surrounding
// spaces aside) is a redaction marker, "[OMNI: N sensitive value(s)
// redacted]". Such a line says something about this output, not content
// the reader was shown, so the ledger never folds it ("already shown" would
// claim content behind it).
func isRedactionNotice(line string) bool {
	t := strings.TrimSpace(line)
	const pre, suf = "[OMNI: ", " sensitive value(s) redacted]"
	if !strings.HasPrefix(t, pre) || !strings.HasSuffix(t, suf) || len(t) <= len(pre)+len(suf) {
		return false
	}
	for _, c := range t[len(pre) : len(t)-len(suf)] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// HasMarker reports whether some line of text starts with an omni marker
// ("[OMNI: " or "[OMNI "): a text omni already shortened.
func HasMarker(text string) bool { return hasOmniMarker(text) }

// hasOmniMarker reports whether some line starts with an omni marker
// ("[OMNI: " or "[OMNI "): output of `omni exec` or `omni distill` coming
// back through a hook must not be shortened twice (distilling it again
// would count its savings twice).
func hasOmniMarker(text string) bool {
	for rest := text; rest != ""; {
		i := strings.Index(rest, "[OMNI")
		if i < 0 {
			return false
		}
		if i == 0 || rest[i-1] == '\n' {
			return true
		}
		rest = rest[i+5:]
	}
	return false
}

// rewindMarker renders the rewind marker ("[OMNI: N lines omitted, omni
// retrieve H for full output]", or "N bytes omitted" when the line count
// did not drop) for a body of
// total lines of which kept survive verbatim in a shortened text of outLen
// bytes, naming handle h. A body over maxArchiveBytes is not archived and its
// marker says so instead of naming a handle.
func rewindMarker(body string, total, kept, outLen int, h string) string {
	lost := strconv.Itoa(total-kept) + " lines"
	if total-kept <= 0 {
		lost = strconv.Itoa(max(len(body)-outLen, 0)) + " bytes"
	}
	if len(body) > maxArchiveBytes {
		return "[OMNI: " + lost + " omitted, full output not archived: " + strconv.Itoa(len(body)) +
			" bytes over the " + strconv.Itoa(maxArchiveBytes) + " byte rewind cap]"
	}
	return "[OMNI: " + lost + " omitted, omni retrieve " + h + " for full output]"
}

// finalCut applies the final safety cut at maxOutputBytes to res.Text
// ("[OMNI: output truncated, K of N lines kept, D dropped from the middle,
// omni retrieve H]", or "K of N bytes kept"): the head and a tail of a
// fifth of the budget survive, the middle is archived as a Block (when it fits maxArchiveBytes)
// and replaced by one marker line. Line form when whole lines fit both
// ends, else byte form, which also keeps a tail slice (a byte form that kept only the head would
// lose one long line's tail, where an error often is). A Read result is never cut (its line numbers must hold).
func finalCut(res ShortenResult, tool string) ShortenResult {
	t := res.Text
	if len(t) <= maxOutputBytes || tool == "Read" {
		return res
	}
	tailBudget := maxOutputBytes / tailBudgetFraction
	headBudget := maxOutputBytes - tailBudget - 160 // room for the marker
	// Line form: whole lines from the head and from the tail.
	headEnd := 0
	for headEnd < len(t) {
		i := strings.IndexByte(t[headEnd:], '\n')
		if i < 0 || headEnd+i+1 > headBudget {
			break
		}
		headEnd += i + 1
	}
	tailStart := len(t)
	for tailStart > 0 {
		// The line that ends at tailStart starts after the previous "\n".
		start := strings.LastIndexByte(t[:tailStart-1], '\n') + 1
		if len(t)-start > tailBudget || start < headEnd {
			break
		}
		tailStart = start
	}
	var text string
	var middle string
	if headEnd > 0 && tailStart < len(t) && tailStart > headEnd {
		middle = t[headEnd:tailStart]
		total := strings.Count(t, "\n")
		if !strings.HasSuffix(t, "\n") {
			total++
		}
		dropped := strings.Count(middle, "\n")
		handle := ""
		if len(middle) <= maxArchiveBytes {
			handle = HandleOf(middle)
			res.Blocks = append(res.Blocks, Block{Handle: handle, Bytes: middle})
		}
		m := "[OMNI: output truncated, " + strconv.Itoa(total-dropped) + " of " + strconv.Itoa(total) +
			" lines kept, " + strconv.Itoa(dropped) + " dropped from the middle"
		if handle != "" {
			m += ", omni retrieve " + handle
		}
		text = t[:headEnd] + m + "]\n" + t[tailStart:]
	} else {
		// Byte form: cut at UTF-8 boundaries.
		h := utf8Floor(t, headBudget)
		s := utf8Ceil(t, len(t)-tailBudget)
		middle = t[h:s]
		handle := ""
		if len(middle) <= maxArchiveBytes {
			handle = HandleOf(middle)
			res.Blocks = append(res.Blocks, Block{Handle: handle, Bytes: middle})
		}
		m := "\n[OMNI: output truncated, " + strconv.Itoa(len(t)-len(middle)) + " of " + strconv.Itoa(len(t)) + " bytes kept"
		if handle != "" {
			m += ", omni retrieve " + handle
		}
		text = t[:h] + m + "]\n" + t[s:]
	}
	res.Text, res.Changed = text, true
	return res
}

// utf8Floor returns the largest index <= i that starts a UTF-8 sequence.
func utf8Floor(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// utf8Ceil returns the smallest index >= i that starts a UTF-8 sequence.
func utf8Ceil(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}
