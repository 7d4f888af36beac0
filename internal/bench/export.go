package bench

// omni log --corpus: a recorded stream as corpus records.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/redact"
)

// ExportSummary counts what Export wrote and what it could not.
type ExportSummary struct {
	// Calls written; Sessions among them.
	Calls    int `json:"calls"`
	Sessions int `json:"sessions"`
	// Withheld names the calls whose input was not stored (credentials,
	// omni forget): not exported (at most 100; WithheldCount counts all).
	Withheld      []Skipped `json:"withheld,omitempty"`
	WithheldCount int       `json:"withheld_count"`
	// Unreadable names the invocations whose stored input could not be read
	// back as a call (at most 100).
	Unreadable      []Skipped `json:"unreadable,omitempty"`
	UnreadableCount int       `json:"unreadable_count"`
	// Redacted counts calls recorded with --keep-secrets (or by bench
	// --ledger-only) whose text the export ran through the redaction
	// stage: the file holds no credential the log kept.
	Redacted int `json:"redacted"`
}

// Export writes every call of a recorded stream (src, in log order) to w
// as one corpus record per line (the format of ../shared/corpus: session,
// agent, seq, tool, input, output, exit_code, raw_tool, is_error,
// compaction_epoch; with masked and masked_grew where the recording masked
// credentials), so bench --corpus of the file reruns the stream:
//
//   - the corpus identity bench recorded (origin) is kept; otherwise the
//     session is the project (its path with '/' as '_') and the host's
//     session id ("project/session": bench takes the project from it),
//     the agent the subagent id or "main", seq the reader's call count,
//     tool the host tool, compaction_epoch the session's compactions so far;
//   - a Read is written with the host's line numbers from its startLine,
//     as Claude Code's transcript shows it (bench strips them again); a
//     failing call's text is the host's failure text ("Exit code N" line
//     included for a call the PreToolUse rewrite ran through omni exec);
//   - masked values stay masked: the log holds redacted text, and an input
//     recorded unredacted (--keep-secrets) is redacted here.
//
// Outputs of tools other than Bash and Read replay as Bash outputs (the
// corpus has those two host shapes). Errors: the source's, w's.
func Export(ctx context.Context, src StoreSource, w io.Writer) (ExportSummary, error) {
	var sum ExportSummary
	bw := bufio.NewWriterSize(w, 1<<20)
	seqOf, epochOf := map[string]int{}, map[string]int{}
	sessions := map[string]bool{}
	err := src.Batches(ctx, func(batch []events.Event, _ events.Seq) error {
		if !hooks.HasInvocation(batch) {
			return nil
		}
		rec, err := hooks.RecordedOf(batch)
		if err != nil {
			sum.UnreadableCount++
			if len(sum.Unreadable) < 100 {
				sum.Unreadable = append(sum.Unreadable, Skipped{Seq: batch[0].Seq, Reason: err.Error()})
			}
			return nil
		}
		if rec.Withheld != "" {
			sum.WithheldCount++
			if len(sum.Withheld) < 100 {
				sum.Withheld = append(sum.Withheld, Skipped{Seq: rec.Seq, Reader: rec.Reader.String(), Reason: rec.Withheld})
			}
			return nil
		}
		c := callFromRecorded(rec, seqOf, epochOf)
		if !c.isCall {
			return nil
		}
		r := c.rec
		if _, ok := rec.Origin()[OriginSeq]; !ok {
			r.Session = corpusSession(rec.Project, r.Session)
		}
		r.Output, r.Input = exportText(c, rec)
		r.Masked, _ = strconv.Atoi(rec.Params[string(events.ParamRedacted)])
		r.MaskedGrew = rec.Params[string(events.ParamRedactedGrew)] == "1"
		if rec.Params[string(events.ParamKeepSecrets)] == "1" {
			var n, m int
			r.Output, n = redact.Text(r.Output)
			r.Input, m = redact.Text(r.Input)
			if n+m > 0 {
				sum.Redacted++
			}
		}
		if r.RawTool != "Read" {
			r.RawTool = "Bash"
		}
		if !r.IsError && r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
		r.Source = "omni log --corpus"
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		bw.Write(b)
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
		sum.Calls++
		sessions[r.Session] = true
		return nil
	})
	if err != nil {
		return sum, err
	}
	sum.Sessions = len(sessions)
	return sum, bw.Flush()
}

// corpusSession names a session the way bench reads it: the project
// before the first '/' (bench's project), then the host's session id.
func corpusSession(project, session string) string {
	p := strings.Trim(strings.ReplaceAll(project, "/", "_"), "_")
	if p == "" {
		p = "-"
	}
	if strings.HasPrefix(session, p+"/") {
		return session
	}
	return p + "/" + session
}

// exportText returns a call's output as the corpus holds it and its
// input (the command or the path).
func exportText(c storeCall, rec hooks.Recorded) (output, input string) {
	input = c.rec.Input
	if c.payload == nil {
		return c.hostRaw, input
	}
	tr, _ := c.payload["tool_response"].(map[string]any)
	switch {
	case c.event == "PostToolUseFailure":
		return c.hostRaw, input
	case c.hostTool == "Read":
		f, _ := tr["file"].(map[string]any)
		content, _ := f["content"].(string)
		start, _ := f["startLine"].(float64)
		if content == "" || !strings.HasSuffix(content, "\n") || start < 1 {
			return content, input
		}
		var b strings.Builder
		n := int(start)
		for line := range strings.SplitAfterSeq(content, "\n") {
			if line == "" {
				break // after the final newline
			}
			fmt.Fprintf(&b, "%6d→%s", n, line)
			n++
		}
		return b.String(), input
	case c.hostTool == "Bash":
		if s, ok := c.payload["tool_response"].(string); ok {
			return s, input // the older failure shape
		}
		out, _ := tr["stdout"].(string)
		errText, _ := tr["stderr"].(string)
		if errText == "" {
			return out, input
		}
		if out != "" && !strings.HasSuffix(out, "\n") {
			return out + "\n" + errText, input
		}
		return out + errText, input
	}
	if c.hostRaw != "" {
		return c.hostRaw, input
	}
	b, _ := json.Marshal(c.payload["tool_response"])
	return string(b), input
}
