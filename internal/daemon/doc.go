// Package daemon is the omni daemon: one process per $OMNI_HOME owns the
// event store and answers hook clients and commands over loopback NATS.
//
// # Files in the home
//
//	store/              the JetStream store, guarded by store/store.lock (flock)
//	store/checkpoint.bin the projections' checkpoint (every 5,000 batches and
//	                    at shutdown), tagged with the build that wrote it;
//	                    a cluster's stream has its own, checkpoint-HASH.bin
//	store/base-SEQ.bin  the base snapshot omni gc saved below a cut
//	store/busy.json     a long command holds the store (MarkBusy)
//	store/damaged.json  the store was refused as damaged (jetstream.Marker);
//	                    requests fail at once until 'omni gc --repair'
//	store/blocks.ok     block files last scanned clean (jetstream)
//	store/recovered-T.json what a block recovery kept and dropped
//	daemon.addr         {"addr","token","pid","protocol","version","cert",
//	                    "build","exe","exe_stamp"}, mode 0600, written
//	                    atomically once every method is served, removed first
//	                    on exit, written again when it goes missing
//	daemon.backoff      a recent call found the daemon hung or refusing its
//	                    token: hooks fail open at once until it expires (10 s)
//	                    or a daemon becomes ready
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
// # Trust and health
//
// The home, the store and daemon.addr must be this user's and writable by
// no one else (CheckHome: repaired when ours, else refused, and clients
// fail open). The daemon listens over TLS with a key made at its start; a
// client pins the certificate from daemon.addr and sends its token only
// after the handshake (wire.Dial), so a process squatting a stale port
// gets nothing. A call that takes its whole deadline or whose token is
// refused starts a back-off and a replacement daemon (ReplaceEnv), which
// probes the suspect and, when it is verified ours (it holds the store
// lock, LockHolder), kills it if hung or stops it otherwise
// (ResolveSuspect). A daemon of another build (wire.Addr.Stale,
// wire.BuildID) is asked to stop at the next call. A request with under
// MinTimeLeft of deadline is answered ErrTooLate without touching the
// store. Probe is omni doctor's two-second look at the daemon.
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
