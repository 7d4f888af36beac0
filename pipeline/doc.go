// Package pipeline turns one tool output into what the model reads. It is a
// leaf: text in, text and plain facts out, importing the standard library,
// internal/shellcmd and its own rooms only (pipeline/distill, the
// distillers and the collapse fallback; pipeline/internal/textline, the
// line vocabulary). It knows nothing of hosts, stores or events; the
// ledger's knowledge reaches it through the View interface it declares.
//
// A first-seen output goes through Shorten (redaction, the guard, the
// command's distiller, collapse, the final cut). Then, for every output,
// the structured/opaque guard (Sniff), the floors and the ledger decision
// (Decide) replace runs of lines this reader was already delivered by
// markers with handles. Every
// cut names a handle computed from the exact bytes it replaced; the caller
// archives those bytes before delivering the marker.
package pipeline
