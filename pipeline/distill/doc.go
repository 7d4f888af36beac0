// Package distill holds the distillers: per-tool filters that keep a
// run's verdicts and failures and drop its ceremony (progress, passing
// tests, download meters), and the collapse fallback that folds runs of
// near-identical lines into one counted line.
//
// Analyze reads a command line (with internal/shellcmd) far enough to know
// who produces the output and whether it may be shortened at all (chains,
// reshaping filters, enumerations and verbatim outputs pass whole); Pick
// chooses the command's Distiller, from the command only, never from the
// content; Distiller.Run selects lines; FailuresPreserved is the fidelity
// check every result must pass; Collapse is the fallback.
//
// A distiller only selects input lines (and may insert marker lines); it
// never rewrites a line, never drops a failure line, and one that does not
// recognise the runner's own verdict returns not-ok so the raw bytes pass.
// Everything here is pure and deterministic; pipeline.Shorten is the one
// caller, and the package imports the standard library, internal/shellcmd
// and pipeline/internal/textline only.
package distill
