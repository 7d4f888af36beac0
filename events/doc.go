// Package events is omni's vocabulary: the typed events every door appends to
// the log, their stable encoding, and the Log interface a store implements.
//
// # Order
//
// Every append is one batch of events written atomically under one stream
// sequence (Seq, starting at 1). Within a batch, events keep the order the
// writer gave them (Event.Index, from 0). The pair (Seq, Index) is the global
// order; projections fold events in that order and nothing else.
//
// # Durability
//
// Append returns only after the store acknowledged the batch. A batch is
// either wholly visible to readers or not at all, so "archive first, marker
// second" holds across crashes: an Archived event and the Folded event naming
// its handle travel in the same batch, Archived first.
//
// # Stability
//
// The encoding (see Encode) is JSON with fixed field names. Fields may be
// added; a field is never renamed or retyped, and a Kind value is never
// reused for another meaning. Decoders ignore fields they do not know.
//
// This package imports the standard library only.
package events
