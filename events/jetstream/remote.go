package jetstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/natsurl"
)

// Remote configures a store on an existing NATS deployment (Options.URL):
// a cluster shared by several machines, each running its own daemon.
type Remote struct {
	// Creds is a NATS .creds file (a user JWT and its nkey seed), "" for
	// none.
	Creds string
	// CA is a PEM file of the certificate authorities that sign the
	// servers' certificates (TLS), "" for the system's.
	CA string
	// Cert and Key are the client certificate and its key, PEM files, for
	// servers that verify clients (mutual TLS): both or neither.
	Cert, Key string
	// Stream is the stream's name, "" for StreamName. Letters, digits, "-"
	// and "_" only.
	Stream string
	// Replicas is the replication of a stream Open creates (an existing
	// stream is kept as it is): 0 asks for three and takes one when the
	// deployment cannot place three (a single server, or a cluster of
	// two); 1 to 5 ask for exactly that many.
	Replicas int
	// Machine is this machine's name ("host/id"); when it has a token
	// (MachineToken) the store publishes on the machine's own subject
	// (TeamSubject), which a cluster's authorization can bind to this
	// machine's user, and every reader checks the batches of machine
	// subjects against the machine their events name. "" publishes on
	// the stream's unattested subject.
	Machine string
	// OnReject, when not nil, is told of every batch rejected as forged
	// (ErrForged): its sequence, the subject it was published on and the
	// machine its event claims.
	OnReject func(seq events.Seq, subject, machine string)
}

// remoteState is what a store reached through Options.URL holds beyond
// the log's connection.
type remoteState struct {
	// urls are the configured servers, credentials removed (for reports).
	urls string
	// front and frontSrv are the local server without JetStream that
	// serves Conn and Addr when Options.Listen is set (nil otherwise).
	front    *nats.Conn
	frontSrv *server.Server
	// gate is the back-off that makes operations fail at once while the
	// cluster does not answer.
	gate gate
}

const (
	// remoteConnectTimeout bounds the first connection to one server of
	// the deployment when ctx has no shorter deadline: a daemon that cannot
	// reach the cluster gives up (and hooks pass through) before the
	// hook's 4 s deadline.
	remoteConnectTimeout = 2 * time.Second
	// reconnectWait is the pause between two reconnection attempts to one
	// server of the deployment; the client reconnects forever (a daemon
	// outlives a cluster restart).
	reconnectWait = 500 * time.Millisecond
	// pingInterval and maxPingsOut bound how long a silent connection (a
	// partition, not a closed socket) is taken for alive: about 20 s.
	pingInterval = 10 * time.Second
	maxPingsOut  = 2
)

// validStreamName reports whether name can name a stream: 1 to 64
// letters, digits, '-' or '_' (JetStream forbids '.', '*', '>' and spaces).
func validStreamName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// openRemote connects to o.URL, opens (or creates) the stream there and,
// with o.Listen, starts the local front that serves Conn and Addr. A
// connection that fails (refused, TLS or credentials rejected) is
// ErrUnreachable, wrapped with the client's reason.
func openRemote(ctx context.Context, o Options) (*Store, error) {
	r := o.Remote
	name := r.Stream
	if name == "" {
		name = StreamName
	}
	switch {
	case !validStreamName(name):
		return nil, fmt.Errorf("open store: stream name %q: want 1 to 64 letters, digits, '-' or '_'", name)
	case r.Replicas < 0 || r.Replicas > 5:
		return nil, fmt.Errorf("open store: %d replicas: want 0 (automatic) to 5", r.Replicas)
	case (r.Cert == "") != (r.Key == ""):
		return nil, errors.New("open store: a client certificate needs its key, and a key its certificate")
	case o.Listen && (o.Token == "" || o.TLS == nil):
		return nil, errors.New("open store: listening needs a token and a TLS configuration")
	}
	for _, f := range []string{r.Creds, r.CA, r.Cert, r.Key} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	var lock *flock.Flock
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		l, err := takeLock(ctx, filepath.Join(o.Dir, LockFile), o.LockWait)
		if err != nil {
			return nil, err
		}
		lock = l
	}
	unlock := func() {
		if lock != nil {
			_ = lock.Unlock()
		}
	}
	wait := remoteConnectTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = max(min(wait, time.Until(d)), time.Millisecond)
	}
	copts := append(authOptions(r), nats.Name("omni-store"), nats.Timeout(wait),
		nats.MaxReconnects(-1), nats.ReconnectWait(reconnectWait),
		// No reconnect buffer: a publish while disconnected fails at once,
		// instead of being stored after the caller gave up on it.
		nats.ReconnectBufSize(-1),
		nats.PingInterval(pingInterval), nats.MaxPingsOutstanding(maxPingsOut))
	if o.Token != "" && !o.Listen {
		copts = append(copts, nats.Token(o.Token))
	}
	nc, err := nats.Connect(o.URL, copts...)
	if err != nil {
		unlock()
		// Refused (credentials, TLS) or not there: either way the cluster
		// does not serve this store now.
		return nil, fmt.Errorf("%w: connect %s: %w", ErrUnreachable, RedactURL(o.URL), err)
	}
	st := &Store{nc: nc, remote: &remoteState{urls: RedactURL(o.URL)}}
	st.setNames(name)
	if sub := TeamSubject(name, r.Machine); sub != "" {
		st.pubSubject = sub
	}
	st.onReject = r.OnReject
	if err := st.openStream(ctx, r.Replicas); err != nil {
		nc.Close()
		unlock()
		return nil, err
	}
	if o.Listen {
		if err := st.startFront(o); err != nil {
			nc.Close()
			unlock()
			return nil, err
		}
	}
	st.lock = lock
	return st, nil
}

// authOptions are the client options of r's credentials and TLS files.
func authOptions(r Remote) []nats.Option {
	var copts []nats.Option
	if r.Creds != "" {
		copts = append(copts, nats.UserCredentials(r.Creds))
	}
	if r.CA != "" {
		copts = append(copts, nats.RootCAs(r.CA))
	}
	if r.Cert != "" {
		copts = append(copts, nats.ClientCert(r.Cert, r.Key))
	}
	return copts
}

// ProbeCluster connects to the deployment at url as a store would (r's
// credentials and TLS files), without the home's lock and without
// creating anything, and reports what it says: the server and cluster it
// reached and the stream's replicas (Error says when the stream does not
// exist yet: Open creates it). It is omni init's check of new settings;
// ctx bounds it (5 s without a deadline). Errors: settings Open refuses,
// a connection that fails (refused, TLS or credentials rejected),
// JetStream not answering.
func ProbeCluster(ctx context.Context, url string, r Remote) (ClusterState, error) {
	name := r.Stream
	if name == "" {
		name = StreamName
	}
	cs := ClusterState{Backend: "cluster", URL: RedactURL(url), Stream: name}
	if !validStreamName(name) {
		return cs, fmt.Errorf("stream name %q: want 1 to 64 letters, digits, '-' or '_'", name)
	}
	if (r.Cert == "") != (r.Key == "") {
		return cs, errors.New("a client certificate needs its key, and a key its certificate")
	}
	for _, f := range []string{r.Creds, r.CA, r.Cert, r.Key} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return cs, err
		}
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	wait := remoteConnectTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = max(min(wait, time.Until(d)), time.Millisecond)
	}
	nc, err := nats.Connect(url, append(authOptions(r), nats.Name("omni-probe"), nats.Timeout(wait), nats.NoReconnect())...)
	if err != nil {
		return cs, fmt.Errorf("connect %s: %w", cs.URL, err)
	}
	defer nc.Close()
	cs.Status, cs.Server, cs.Cluster = nc.Status().String(), nc.ConnectedServerName(), nc.ConnectedClusterName()
	j, err := js.New(nc)
	if err != nil {
		return cs, fmt.Errorf("jetstream: %w", err)
	}
	if _, err := j.AccountInfo(ctx); err != nil {
		return cs, fmt.Errorf("jetstream on %s: %w", cs.URL, err)
	}
	stream, err := j.Stream(ctx, name)
	if errors.Is(err, js.ErrStreamNotFound) {
		cs.Error = "stream " + name + " does not exist yet (the first daemon creates it)"
		return cs, nil
	}
	if err != nil {
		return cs, fmt.Errorf("stream %s: %w", name, err)
	}
	cs.Replicas, cs.Peers = replicasOf(stream.CachedInfo())
	return cs, nil
}

// replicasOf returns a stream's replication and its replicas, the leader
// first.
func replicasOf(info *js.StreamInfo) (int, []Peer) {
	var peers []Peer
	if c := info.Cluster; c != nil {
		if c.Leader != "" {
			peers = append(peers, Peer{Name: c.Leader, Leader: true, Current: true})
		}
		for _, p := range c.Replicas {
			if p != nil {
				peers = append(peers, Peer{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag})
			}
		}
	}
	return max(info.Config.Replicas, 1), peers
}

// startFront starts the local server without JetStream that serves the
// daemon's requests for a store on a cluster (loopback, token).
func (st *Store) startFront(o Options) error {
	maxPayload := o.MaxPayload
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	// The same listener as an embedded store's: loopback, the token, and
	// TLS so a client proves the server before it sends its token.
	srv, err := server.NewServer(&server.Options{
		ServerName: ServerName, Host: "127.0.0.1", Port: server.RANDOM_PORT, Authorization: o.Token,
		TLS: true, TLSConfig: o.TLS, TLSTimeout: tlsTimeout.Seconds(),
		NoLog: true, NoSigs: true, MaxPayload: maxPayload, MaxPending: max(64<<20, 2*int64(maxPayload)),
	})
	if err != nil {
		return fmt.Errorf("new front server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(startTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return errors.New("start front server: not ready")
	}
	front, err := nats.Connect("", nats.InProcessServer(srv), nats.Name("omni-front"), nats.NoReconnect(), nats.Token(o.Token))
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return fmt.Errorf("connect front: %w", err)
	}
	st.remote.front, st.remote.frontSrv = front, srv
	if a := srv.Addr(); a != nil {
		st.addr = a.String()
	}
	return nil
}

// RedactURL returns the comma-separated server URLs in s with any user,
// password or token removed, for logs and reports (natsurl.Redact).
func RedactURL(s string) string { return natsurl.Redact(s) }

// Remote reports whether the store is reached through Options.URL (a
// deployment other machines may share) rather than embedded.
func (st *Store) Remote() bool { return st.remote != nil }

// Reachable reports whether the log's connection is up now (always true
// for an embedded store that is open). It costs no round trip: a store on
// a cluster that is down, or between two servers, answers false at once.
func (st *Store) Reachable() bool {
	return !st.isClosed() && st.nc.Status() == nats.CONNECTED
}

// Peer is one server holding a replica of the stream.
type Peer struct {
	Name string `json:"name"`
	// Leader marks the replica that orders appends.
	Leader bool `json:"leader,omitempty"`
	// Current reports a follower up to date with the leader; Offline one
	// the leader cannot reach; Lag how many operations it is behind.
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	Lag     uint64 `json:"lag,omitempty"`
}

// ClusterState is what the deployment behind a store says about itself,
// for omni doctor.
type ClusterState struct {
	// Backend is "embedded" or "cluster" (a store opened with a URL).
	Backend string `json:"backend"`
	// URL lists the configured servers, credentials removed.
	URL string `json:"url,omitempty"`
	// Status is the connection's ("CONNECTED", "RECONNECTING", ...);
	// Server the name of the server it is connected to and Cluster that
	// server's cluster ("" for a single server).
	Status  string `json:"status"`
	Server  string `json:"server,omitempty"`
	Cluster string `json:"cluster,omitempty"`
	// Stream and Replicas are the stream's name and replication; Peers its
	// replicas, the leader first (empty for a single server or when the
	// stream cannot be asked).
	Stream   string `json:"stream"`
	Replicas int    `json:"replicas"`
	Peers    []Peer `json:"peers,omitempty"`
	// Error is why the stream could not be asked ("" when it answered).
	Error string `json:"error,omitempty"`
}

// Cluster reports the deployment's state: the connection, the stream's
// replicas and their lag. It does not fail: what could not be asked is
// said in Error. ctx bounds the call (5 s without a deadline).
func (st *Store) Cluster(ctx context.Context) ClusterState {
	cs := ClusterState{Backend: "embedded", Stream: st.name, Status: st.nc.Status().String()}
	if st.remote != nil {
		cs.Backend, cs.URL = "cluster", st.remote.urls
	}
	if st.nc.IsConnected() {
		cs.Server, cs.Cluster = st.nc.ConnectedServerName(), st.nc.ConnectedClusterName()
	}
	if st.isClosed() {
		cs.Error = events.ErrClosed.Error()
		return cs
	}
	ctx, cancel := opContext(ctx)
	defer cancel()
	info, err := st.stream.Info(ctx)
	if err != nil {
		cs.Error = st.mapErr(err).Error()
		return cs
	}
	cs.Replicas, cs.Peers = replicasOf(info)
	return cs
}
