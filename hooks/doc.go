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
// Claude Code is the main host (docs/HOSTS.md): PostToolUse for Bash, Read,
// Grep, Glob and WebFetch is rewritten by echoing tool_response with only the
// text changed (hosts.go answers Codex, Gemini CLI and OpenCode in theirs);
// PostToolUseFailure is recorded and never answered; compaction events
// empty the session's shown-sets. Anything else is recorded or ignored and
// gets no reply.
package hooks
