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
//     keeps recovery fast: 20 ms at 20,000 subjects, 69 ms at 100,000);
//   - file storage, no MaxAge (replay needs the whole log: past MaxAge a
//     consumer silently starts at the first surviving sequence),
//     AllowDirect (batched direct gets: 50 messages in 0.94 ms against
//     2.0 ms one by one), a Duplicates window of 100 ms, the server's
//     minimum (the window is re-read on every start: up to 520 ms after a
//     bulk load), and no compression (large event fields are already zstd);
//   - one batch of events is one message, the message's stream sequence is
//     the batch's events.Seq.
//
// # Lock
//
// nats-server takes no lock on its store directory, and two servers on one
// directory silently lose acknowledged writes (2,166 of 5,000 in one trial;
// the figures here were measured with nats-server v2.15.2,
// docs/JETSTREAM.md). Open therefore takes an exclusive flock on <Dir>/store.lock before it starts the
// server and keeps it until Close; a second Open on the same directory fails
// with ErrLocked. The kernel releases the lock if the process dies.
//
// # Serving
//
// A store opened with Options.Listen also accepts TCP clients on 127.0.0.1
// (TLS with Options.TLS, then token authentication) and reports its
// address (Store.Addr); Store.Conn
// is its own connection. The omni daemon (internal/daemon) serves its
// requests on that connection; this package knows nothing of them.
//
// # Bounded start and damage
//
// Before the server starts, Open verifies the checksums of the block files
// that changed since their last clean scan (blocks.go): a record whose
// sequence field is not its own (which made nats-server 2.15.2 and 2.15.3
// loop and allocate without bound) refuses the store at once with
// ErrDamagedStore and leaves DamagedFile naming the block and offset. The
// start itself runs under Options.StartTimeout and Options.StartMemory;
// past either the store is marked damaged, the lock released and Open
// returns ErrStartStuck (the server's goroutine cannot be stopped, so the
// command ends with that error).
// RepairBlocks moves a damaged block aside and writes back every readable
// record, restoring sequence fields whose checksum proves them, and
// records what it did; ScanBlocks reports damage without changing
// anything. A publish counts towards ErrBroken only when the server kept
// it waiting a second: a caller's spent deadline says nothing about the
// store.
//
// # Concurrency
//
// Store is safe for concurrent use.
package jetstream
