// Package jetstream is the events.Log adapter for NATS JetStream, and the
// only package in omni that imports NATS.
//
// # Store
//
// Open embeds a nats-server with JetStream in the calling process (or, with
// Options.URL, connects to an existing NATS deployment) and returns a *Store
// that implements events.Log on one stream:
//
//   - stream "EVENTS", one subject "omni.events" (a bounded subject count
//     keeps recovery fast, JETSTREAM.md §4.2 and §9.3);
//   - file storage, no MaxAge (replay needs the whole log, §7 and §9.4),
//     AllowDirect (batched direct gets, §4.3 and §10), a Duplicates window of
//     100 ms, the server's minimum (a longer window is re-read on every start,
//     §4.2), and no compression (large event fields are already zstd);
//   - one batch of events is one message, the message's stream sequence is
//     the batch's events.Seq.
//
// # Lock
//
// nats-server takes no lock on its store directory, and two servers on one
// directory silently lose acknowledged writes (JETSTREAM.md §6, §9.1). Open
// therefore takes an exclusive flock on <Dir>/store.lock before it starts the
// server and keeps it until Close; a second Open on the same directory fails
// with ErrLocked. The kernel releases the lock if the process dies.
//
// # Serving
//
// A store opened with Options.Listen also accepts TCP clients on 127.0.0.1
// (token authentication) and reports its address (Store.Addr); Store.Conn
// is its own connection. The omni daemon (internal/daemon) serves its
// requests on that connection; this package knows nothing of them.
//
// # Concurrency
//
// Store is safe for concurrent use.
package jetstream
