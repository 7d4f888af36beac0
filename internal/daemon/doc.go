// Package daemon is the omni daemon: one process per $OMNI_HOME owns the
// event store and answers hook clients and commands over loopback NATS.
//
// # Files in the home
//
//	store/              the JetStream store, guarded by store/store.lock (flock)
//	store/checkpoint.bin the projections' checkpoint (every 5,000 batches and
//	                    at shutdown), tagged with the build that wrote it
//	store/base-SEQ.bin  the base snapshot omni gc saved below a cut
//	store/busy.json     a long command holds the store (MarkBusy)
//	daemon.addr         {"addr","token","pid","protocol","version"}, mode 0600,
//	                    written atomically once every method is served,
//	                    removed first on exit
//	daemon.log          stdout and stderr of spawned daemons (appended)
//	omni.log            one line per problem (Logf)
//
// # Methods
//
// One table (methods.go) lists every method: the daemon serves exactly
// those on "omni.rpc.v<wire.Protocol>.<method>" (and ping and stop also
// unversioned, so a client of any protocol can detect and stop any
// daemon), Service.Handle dispatches on them, and the Client sends only
// those. Requests and replies are typed (RetrieveRequest, ReplayReply,
// ...) and JSON on the wire, except the hook request and the hook and
// retrieve replies, which are bytes. A handler's error crosses the wire as
// its message and a code (wire.CodeHeader), so errors.Is finds this
// package's sentinels (ErrUnknownHandle, ErrNotInLog, ErrNoBase, ...) in
// what the Client returns, whether the request ran in the daemon or
// in-process.
//
// # Pieces
//
//   - Service: the methods over one open store (an Engine started from the
//     checkpoint), used by the daemon and in-process alike.
//   - Run: the daemon's lifecycle (lock, serve, daemon.addr, idle exit, exit
//     when the home disappears or the store breaks, clean shutdown).
//   - Client: typed methods; spawns a daemon when none answers; runs a
//     method in-process under the store lock when no daemon can be reached
//     or Config.InProcess is set.
//   - The wire subpackage: the protocol and the only client transport,
//     linked alone by the thin hook client (cmd/omni-hook).
package daemon
