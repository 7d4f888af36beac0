// Package hooks turns host hook payloads and exec/pipe outputs into
// decisions, events and replies. It owns the Engine: the in-memory
// projections (ledger, stats, session) kept current by folding every batch
// it appends, and the one pipeline call site behind every door (hook, exec,
// pipe, bench), so the doors cannot drift apart (with two copies of the stages,
// a fix lands in one only).
//
// An invocation is decided under the Engine's lock against the state of all
// earlier batches, then appended as one batch (Invoked, Archived..., Folded...,
// Emitted), then folded. The order of appends is the order of decisions, so
// `omni replay` can rebuild the state before any batch and rerun its
// decision byte for byte.
//
// Each host's protocol (how its payload is read, what its failure signal
// is, the reply it applies) is in hooks/hosts, one file per host; the
// Engine names the host and hands the payload to its protocol.
// PostToolUseFailure is recorded and never answered; compaction events
// empty the session's shown-sets. Anything else is recorded or ignored and
// gets no reply.
//
// No file is read under the Engine's lock: what a host keeps outside its
// payload (hosts.Prepare), the redaction and the project's lookup
// (readHook) come before it.
package hooks
