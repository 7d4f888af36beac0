package pipeline

import "github.com/omnictx/omni/pipeline/internal/textline"

// Line is one line of a text: the byte range [Start, End) of the text,
// line ending included (End-Start is its size in bytes), and its identity
// Key (0 for a blank line). It is textline.Line, the type the distillers
// share.
type Line = textline.Line

// SplitLines splits text after every '\n', keeping each line's ending
// ("\n", "\r\n", or none for a last line without a final newline), so that
// concatenating the lines gives text back byte for byte. The empty text has
// no lines. The result is appended to dst (which may be nil) and returned.
func SplitLines(dst []Line, text string) []Line { return textline.SplitLines(dst, text) }

// CountLines returns how many lines SplitLines would return for text (a
// final line without a newline counts; "" has none), without allocating.
func CountLines(text string) int { return textline.CountLines(text) }

// IsFailureLine reports whether one line of output states a failure; see
// textline.IsFailureLine for the vocabulary. Pure, allocation-free, never
// panics.
func IsFailureLine(line string) bool { return textline.IsFailureLine(line) }
