// Package textline is the line vocabulary the pipeline and its distillers
// share: a text's lines with their endings (Line, SplitLines, CountLines),
// a line's identity (KeyOf, the key the ledger's shown-sets hold) and
// whether a line states a failure (IsFailureLine, the one failure
// vocabulary: no stage may fold or drop such a line).
//
// It imports the standard library only. Packages outside pipeline reach
// it through pipeline's SplitLines, CountLines and IsFailureLine.
package textline
