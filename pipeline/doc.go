// Package pipeline turns one tool output into what the model reads. It is a
// leaf: text in, text and plain facts out, standard library only. It knows
// nothing of hosts, stores or events; the ledger's knowledge reaches it
// through the View interface it declares.
//
// Stages, in order (REFERENCE.md §2): the structured/opaque guard (Sniff),
// the floors, then the ledger decision (Decide), which replaces runs of
// lines this reader was already delivered by markers with handles. Every
// cut names a handle computed from the exact bytes it replaced; the caller
// archives those bytes before delivering the marker.
package pipeline
