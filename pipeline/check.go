package pipeline

import (
	"fmt"
	"strings"
)

// CheckShortened reports the first invariant a Shorten result breaks, or
// nil. The invariants every result keeps, for any request:
//   - unchanged means byte-identical;
//   - every output line is an input line (the input arrives redacted by
//     the door) or a marker: nothing is invented;
//   - the output grows only when something was redacted;
//   - every block is named by its handle in the text, fits the archive's
//     16 MiB block limit, and its handle is HandleOf its bytes;
//   - every line of the input that states a failure (IsFailureLine) is
//     delivered, unless the final cut says it dropped the middle.
//
// The distillers' tests and the fuzzers run it on every result they make.
func CheckShortened(req ShortenRequest, res ShortenResult) error {
	raw := req.Text
	if !res.Changed {
		if res.Text != raw {
			return fmt.Errorf("Changed=false but Text differs")
		}
		return nil
	}
	if res.Redacted == 0 && len(res.Text) > len(raw) {
		return fmt.Errorf("output grew without redaction: %d > %d bytes", len(res.Text), len(raw))
	}
	in := map[uint64]bool{}
	for _, ln := range SplitLines(nil, raw) {
		in[ln.Key] = true
	}
	truncated := strings.Contains(res.Text, "[OMNI: output truncated, ")
	outKeys := map[uint64]bool{}
	for _, ln := range SplitLines(nil, res.Text) {
		s := res.Text[ln.Start:ln.End]
		outKeys[ln.Key] = true
		if isShortenMarker(s) {
			continue
		}
		if !in[ln.Key] && !truncated { // a byte-form cut may split a line
			return fmt.Errorf("output line is not an input line: %q", s)
		}
	}
	for _, b := range res.Blocks {
		if b.Handle != HandleOf(b.Bytes) {
			return fmt.Errorf("block handle %s is not HandleOf its bytes", b.Handle)
		}
		if len(b.Bytes) > maxArchiveBytes {
			return fmt.Errorf("block of %d bytes over the %d byte limit", len(b.Bytes), maxArchiveBytes)
		}
		if !strings.Contains(res.Text, "omni retrieve "+b.Handle) {
			return fmt.Errorf("block %s is not named in the text", b.Handle)
		}
	}
	if !truncated {
		for _, ln := range SplitLines(nil, raw) {
			s := raw[ln.Start:ln.End]
			if ln.Key != 0 && IsFailureLine(s) && !outKeys[ln.Key] {
				return fmt.Errorf("failure line lost: %q", s)
			}
		}
	}
	return nil
}

// isShortenMarker reports whether a line is one of Shorten's markers: an
// omni marker ("[OMNI: …]"), a collapse marker or the redaction marker.
func isShortenMarker(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "[OMNI") {
		return true
	}
	if !strings.HasPrefix(t, "[") {
		return false
	}
	if len(t) < 2 || t[1] < '0' || t[1] > '9' {
		return false
	}
	return strings.Contains(t, " similar lines collapsed] (pattern: ") || strings.Contains(t, " log lines collapsed: ") ||
		strings.Contains(t, " lines collapsed] (pattern: ") && strings.Contains(t, " similar blocks of ")
}
