package jetstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/platform"
)

// Sentinel errors of the jetstream package.
var (
	// ErrLocked is returned by Open when another process (or another Store in
	// this process) holds the store lock of Options.Dir: two embedded
	// servers on one directory would lose acknowledged writes.
	ErrLocked = errors.New("jetstream: store locked by another process")
	// ErrNoResponders is returned (wrapped) by Read when the server's
	// direct-get API does not answer (status 503).
	ErrNoResponders = errors.New("jetstream: no responders")
	// ErrConnClosed is returned (wrapped) by the Log's methods when the
	// store's connection to its server is closed or was lost.
	ErrConnClosed = errors.New("jetstream: connection closed")
)

// Names and sizes fixed by this package.
const (
	// StreamName is the JetStream stream holding the event log.
	StreamName = "EVENTS"
	// Subject is the only subject of StreamName: recovery time grows with
	// the number of distinct subjects (docs/JETSTREAM.md).
	Subject = "omni.events"
	// ServerName is the embedded server's name; the daemon's clients
	// refuse a server with any other name (the daemon's tests pin it to
	// the name its wire client expects).
	ServerName = "omni"
	// LockFile is the name of the lock file inside Options.Dir.
	LockFile = "store.lock"
	// DefaultMaxPayload is the largest message, in bytes, when
	// Options.MaxPayload is 0: 32 MiB, so a 16 MiB hook payload fits in one
	// request with room for encoding overhead (the server default is 1 MiB).
	DefaultMaxPayload int32 = 32 << 20
	// DefaultOpTimeout bounds a store operation (Append, Get, Last, First,
	// one Read batch) whose context has no deadline: 5 s, the nats.go default
	// a publish would otherwise wait per call.
	DefaultOpTimeout = 5 * time.Second
	// duplicates is the stream's Duplicates window: the server minimum
	// (the window is re-read on every start: up to 520 ms after a bulk load,
	// docs/JETSTREAM.md).
	duplicates = 100 * time.Millisecond
	// startTimeout bounds server start-up and stream recovery.
	startTimeout = 30 * time.Second
	// lockPoll is the interval between lock attempts when Options.LockWait > 0.
	lockPoll = 5 * time.Millisecond
	// tlsTimeout bounds a client's TLS handshake on the listener.
	tlsTimeout = 2 * time.Second
	// closeGrace bounds how long Close waits for the connection to drain
	// (subscriptions made on Conn included).
	closeGrace = 5 * time.Second
)

// Options configure Open.
type Options struct {
	// Dir is the store directory, created with mode 0700 if missing. It holds
	// the lock file (LockFile) and the JetStream data (Dir/js). Required
	// unless URL is set.
	Dir string
	// Listen false runs the server with no TCP listener (in-process
	// clients only). Listen true also listens on 127.0.0.1 with a random
	// port (the daemon); Store.Addr reports it.
	Listen bool
	// Token is the authentication token TCP clients must present when Listen
	// is true; it must not be empty then. With URL it is presented to the
	// remote server when not empty.
	Token string
	// TLS is the listener's TLS configuration (a certificate and its key)
	// when Listen is true; it must not be nil then: a client proves the
	// server before it sends its token (internal/daemon/wire). The store's
	// own in-process connection does not use it.
	TLS *tls.Config
	// LockWait is how long Open waits for the store lock: 0 tries once and
	// fails with ErrLocked if it is held; > 0 polls every 5 ms for up to
	// LockWait, then fails with ErrLocked.
	LockWait time.Duration
	// URL, when set, makes Open connect to this NATS deployment with
	// JetStream (one URL, or several separated by commas: the servers of a
	// cluster) instead of embedding a server; Remote says how. The lock of
	// Dir is still taken when Dir is set (one daemon per home); with Listen
	// a local server without JetStream serves Conn and Addr (the daemon's
	// RPC stays on this machine), and the log lives on the cluster.
	URL string
	// Remote holds the credentials, TLS files, stream name and replicas of
	// a URL store; ignored without URL.
	Remote Remote
	// MaxPayload is the largest message the embedded server accepts, in
	// bytes; 0 means DefaultMaxPayload (32 MiB).
	MaxPayload int32
	// StartTimeout bounds the embedded server's start and stream recovery
	// (0 means DefaultStartTimeout); StartMemory bounds how much the
	// process's Go memory may grow meanwhile (0 means DefaultStartMemory).
	// Past either, the start is stuck inside the server, where it cannot be
	// cancelled: the store is marked damaged (DamagedFile), the lock
	// released, and Open returns an error that wraps ErrStartStuck.
	StartTimeout time.Duration
	StartMemory  uint64
	// startDelay, in tests, stalls the start as a looping recovery would.
	startDelay time.Duration
}

// Bounds of a store start (Options.StartTimeout, Options.StartMemory).
const (
	// DefaultStartTimeout is 20 s: a clean start recovers in 10–35 ms and
	// an unclean one of a 100k-message store in 237 ms (measured,
	// docs/JETSTREAM.md), so twenty seconds is only reached by a server that is
	// not going to finish.
	DefaultStartTimeout = 20 * time.Second
	// DefaultStartMemory is 384 MiB of growth: recovery holds per-block
	// indexes, not messages, and a looping recovery grew by about 23 MB/s
	// (16.5 GB in 12 minutes, measured on a
	// damaged store); with the daemon's own 30–130 MiB
	// it keeps a damaged start under 512 MiB of RSS.
	DefaultStartMemory = 384 << 20
)

// Store is an events.Log on a JetStream stream and the lifecycle of the
// server that holds it. It is safe for concurrent use. Close releases it.
type Store struct {
	srv    *server.Server // nil with Options.URL
	nc     *nats.Conn
	js     js.JetStream
	stream js.Stream
	lock   *flock.Flock // nil without Options.Dir
	addr   string

	// name and subject are the stream's name and only subject; directGet
	// its batched direct-get API subject.
	name, subject, directGet string
	// pubSubject is the subject Append publishes on: subject, or on a
	// team's stream this machine's (TeamSubject). onReject reports a
	// forged batch (Remote.OnReject).
	pubSubject string
	onReject   func(seq events.Seq, subject, machine string)
	rejected   sync.Map // events.Seq -> true: forged batches reported
	// remote describes a store reached through Options.URL (nil when
	// embedded): the cluster's URL and the local RPC front.
	remote *remoteState

	// dataDir is the JetStream directory ("" with Options.URL): Append
	// checks the free space of its file system first.
	dataDir string
	// timeouts counts consecutive appends that timed out; at
	// brokenAfter the store is broken (Broken) and Append fails at once.
	timeouts atomic.Int32

	// replaced holds the sequences of batches replaced in place (omni
	// forget, replace.go).
	replaced replacedSet

	mu      sync.Mutex
	closing bool // Close has started
	closed  bool // Close has finished with the connection: calls fail
}

// Open opens (creating if needed) the store described by o and returns it
// ready for use. It takes the store lock before starting the embedded server
// (two servers on one directory lose acknowledged writes,
// docs/JETSTREAM.md) and creates the stream if it is missing; an existing
// stream is kept as it is (only AllowDirect is switched on if it was off).
//
// Errors: ErrLocked when another process holds the lock (after LockWait);
// ctx's error if ctx ends first; otherwise a wrapped server, connection or
// stream error. On error nothing stays open and the lock is released.
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.URL != "" {
		return openRemote(ctx, o)
	}
	if o.Remote.Stream != "" {
		return nil, errors.New("open store: a stream name is only for a remote store (URL)")
	}
	if o.Dir == "" {
		return nil, errors.New("open store: empty directory")
	}
	if o.Listen && (o.Token == "" || o.TLS == nil) {
		return nil, errors.New("open store: listening needs a token and a TLS configuration")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	lock, err := takeLock(ctx, filepath.Join(o.Dir, LockFile), o.LockWait)
	if err != nil {
		return nil, err
	}
	if m, ok := ReadMarker(o.Dir); ok {
		_ = lock.Unlock()
		return nil, fmt.Errorf("open store: %w: %s (%s): run 'omni gc --repair'", ErrDamagedStore, m.Why, filepath.Join(o.Dir, DamagedFile))
	}
	if dmg, err := preflight(o.Dir); err == nil && len(dmg) > 0 {
		why := fmt.Sprintf("%s at offset %d: %s", dmg[0].File, dmg[0].Offset, dmg[0].Why)
		writeMarker(o.Dir, why, dmg)
		_ = lock.Unlock()
		return nil, fmt.Errorf("open store: %w: %s: run 'omni gc --repair'", ErrDamagedStore, why)
	}
	type started struct {
		st  *Store
		err error
	}
	done := make(chan started, 1)
	stuck, stop := watchStart(o, lock)
	go func() {
		st, err := startEmbedded(ctx, o)
		done <- started{st, err}
	}()
	select {
	case r := <-done:
		if err := stop(); err != nil {
			// The watch fired as the start finished: the store is marked
			// damaged and its lock released, so it is not used.
			if r.err == nil {
				r.st.Close()
			}
			return nil, err
		}
		if r.err != nil {
			_ = lock.Unlock()
			return nil, r.err
		}
		r.st.lock = lock
		return r.st, nil
	case err := <-stuck:
		// The server's goroutine cannot be stopped: it stays behind, in a
		// store marked damaged, whose lock the watch released. A start that
		// finished in the same instant is closed.
		go func() {
			if r := <-done; r.err == nil {
				r.st.Close()
			}
		}()
		return nil, err
	}
}

// ErrStartStuck marks an Open whose start was stuck inside the embedded
// server (Options.StartTimeout, Options.StartMemory); the error wraps
// ErrDamagedStore too. The server's goroutine cannot be stopped and keeps
// running: the caller should end the process soon. The store was marked
// damaged and its lock released, so no other opener uses it meanwhile.
var ErrStartStuck = errors.New("the store's start was stuck")

// stuckError is Open's error for a stuck start: its text is the reason,
// and it is both ErrDamagedStore and ErrStartStuck.
type stuckError struct{ msg string }

func (e stuckError) Error() string { return e.msg }

func (e stuckError) Is(target error) bool {
	return target == ErrDamagedStore || target == ErrStartStuck
}

// takeLock takes the exclusive lock on path, once (wait 0) or polling up to wait.
func takeLock(ctx context.Context, path string, wait time.Duration) (*flock.Flock, error) {
	lock := flock.New(path, flock.SetPermissions(0o600))
	var ok bool
	var err error
	if wait <= 0 {
		ok, err = lock.TryLock()
	} else {
		lctx, cancel := context.WithTimeout(ctx, wait)
		ok, err = lock.TryLockContext(lctx, lockPoll)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			ok, err = false, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store lock %s: %w", path, err)
	}
	if !ok {
		return nil, fmt.Errorf("store lock %s: %w", path, ErrLocked)
	}
	// Where the lock does not say who holds it (no /proc/locks), the pid
	// beside it does (platform.LockHolder); a failure only loses that.
	_ = platform.WriteHolder(path)
	return lock, nil
}

// Locked reports whether some process holds the store lock of dir (a
// directory given to Open as Options.Dir). A missing directory or lock file
// means not locked. The probe takes the lock for an instant when it is free,
// so an Open with LockWait 0 racing with it may fail with ErrLocked.
func Locked(dir string) (bool, error) {
	path := filepath.Join(dir, LockFile)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("store lock %s: %w", path, err)
	}
	lock := flock.New(path, flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil {
		return false, fmt.Errorf("store lock %s: %w", path, err)
	}
	if ok {
		_ = lock.Unlock()
		return false, nil
	}
	return true, nil
}

// startEmbedded starts the server under an already-held lock and opens the stream.
func startEmbedded(ctx context.Context, o Options) (*Store, error) {
	maxPayload := o.MaxPayload
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	opts := &server.Options{
		ServerName:             ServerName,
		JetStream:              true,
		StoreDir:               filepath.Join(o.Dir, "js"),
		NoLog:                  true,
		NoSigs:                 true,
		MaxPayload:             maxPayload,
		MaxPending:             max(64<<20, 2*int64(maxPayload)),
		DisableJetStreamBanner: true,
	}
	if o.Listen {
		opts.Host = "127.0.0.1"
		opts.Port = server.RANDOM_PORT
		opts.Authorization = o.Token
		opts.TLSConfig = o.TLS
		opts.TLS = true
		opts.TLSTimeout = tlsTimeout.Seconds()
	} else {
		opts.DontListen = true
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	if o.startDelay > 0 {
		time.Sleep(o.startDelay)
	}
	srv.Start() // enables JetStream and recovers streams synchronously
	wait := startTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	if !srv.ReadyForConnections(wait) {
		srv.Shutdown()
		srv.WaitForShutdown()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("start server: not ready after %s", wait)
	}
	copts := []nats.Option{nats.InProcessServer(srv), nats.Name("omni-store"), nats.NoReconnect()}
	if o.Token != "" {
		copts = append(copts, nats.Token(o.Token))
	}
	nc, err := nats.Connect("", copts...)
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("connect in-process: %w", err)
	}
	st := &Store{srv: srv, nc: nc, dataDir: opts.StoreDir}
	st.setNames(StreamName)
	if o.Listen {
		if a := srv.Addr(); a != nil {
			st.addr = a.String()
		}
	}
	if err := st.openStream(ctx, 1); err != nil {
		nc.Close()
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, err
	}
	return st, nil
}

// Start watch clock: the watch ticks every startTick and counts at most
// maxStartGap of any one gap between ticks toward Options.StartTimeout, so
// time the process spent stopped (SIGSTOP, a suspended laptop) or starved
// of CPU does not count as a start that is stuck: a stopped daemon's
// 21-second pause once marked a healthy store damaged. A start that is
// stuck recovering keeps the watch's goroutine scheduled, so its time
// counts in full.
const (
	startTick   = 20 * time.Millisecond
	maxStartGap = 250 * time.Millisecond
)

// watchStart watches a store start from another goroutine until stop is
// called: past o.StartTimeout of awake time (see startTick), or once the
// process's Go memory grew by o.StartMemory (runtime/metrics, every tick),
// it marks the store damaged, releases lock and sends the reason (a
// stuckError) on stuck. stop ends the watch and returns that reason when
// the watch fired first (nil otherwise).
func watchStart(o Options, lock *flock.Flock) (stuck <-chan error, stop func() error) {
	limit, mem := o.StartTimeout, o.StartMemory
	if limit <= 0 {
		limit = DefaultStartTimeout
	}
	if mem == 0 {
		mem = DefaultStartMemory
	}
	report := make(chan error, 1)
	done := make(chan struct{})
	finished := make(chan struct{})
	var fired error
	go func() {
		defer close(finished)
		base := goMemory()
		tick := time.NewTicker(startTick)
		defer tick.Stop()
		var why string
		var awake time.Duration
		last := time.Now()
		for why == "" {
			select {
			case <-done:
				return
			case now := <-tick.C:
				awake += min(now.Sub(last), maxStartGap)
				last = now
				if awake >= limit {
					why = fmt.Sprintf("the store's start did not finish within %s", limit)
				} else if m := goMemory(); m > base+mem {
					why = fmt.Sprintf("the store's start grew memory by %d MiB (ceiling %d MiB)", (m-base)>>20, mem>>20)
				}
			}
		}
		writeMarker(o.Dir, why+"; the embedded server was still recovering the stream", nil)
		_ = lock.Unlock()
		fired = stuckError{fmt.Sprintf("%v: %s: run 'omni gc --repair'", ErrDamagedStore, why)}
		report <- fired
	}()
	var once sync.Once
	return report, func() error {
		once.Do(func() { close(done) })
		<-finished
		return fired
	}
}

// goMemory is the Go runtime's total mapped memory in bytes.
func goMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// setNames sets the stream's name and the subjects derived from it.
func (st *Store) setNames(name string) {
	st.name, st.subject = name, SubjectOf(name)
	st.pubSubject = st.subject
	st.directGet = "$JS.API.DIRECT.GET." + name
}

// SubjectOf returns the only subject of the stream named name: Subject for
// StreamName, "omni.events.<name>" for any other (two streams of one
// account cannot share a subject).
func SubjectOf(name string) string {
	if name == StreamName {
		return Subject
	}
	return Subject + "." + name
}

// openStream looks up or creates the stream and finishes st. replicas is
// the replication of a new stream: 1 embedded; on a cluster the asked
// number, or with 0 three, then one if the cluster cannot place three.
func (st *Store) openStream(ctx context.Context, replicas int) error {
	ctx, cancel := opContext(ctx)
	defer cancel()
	j, err := js.New(st.nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	stream, err := st.lookupStream(ctx, j)
	switch {
	case errors.Is(err, js.ErrStreamNotFound):
		stream, err = st.createStream(ctx, j, replicas)
		if err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("stream %s: %w", st.name, err)
	case !stream.CachedInfo().Config.AllowDirect:
		cfg := stream.CachedInfo().Config
		cfg.AllowDirect = true
		if stream, err = j.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("enable direct get on %s: %w", st.name, err)
		}
	}
	if st.remote != nil && st.pubSubject != st.subject {
		// A stream made before machine subjects: add them, which only
		// the cluster's administrator may (members cannot update
		// streams); without them this machine publishes unattested.
		cfg := stream.CachedInfo().Config
		if !slices.Contains(cfg.Subjects, teamWildcard(st.name)) {
			cfg.Subjects = append(cfg.Subjects, teamWildcard(st.name))
			if up, err := j.UpdateStream(ctx, cfg); err == nil {
				stream = up
			} else {
				st.pubSubject = st.subject
			}
		}
	}
	st.js, st.stream = j, stream
	return st.loadReplaced(ctx)
}

// Conn returns the store's own connection to its local server, for
// serving requests beside the log (the daemon's RPC, internal/daemon):
// the embedded server's, or with URL and Listen the local front's (nil
// with URL and no Listen). Close drains it: whoever subscribes on it
// stops serving first.
func (st *Store) Conn() *nats.Conn {
	if st.remote != nil {
		return st.remote.front
	}
	return st.nc
}

// Addr returns the TCP address clients Dial, as "127.0.0.1:port", when the
// store was opened with Listen; "" otherwise.
func (st *Store) Addr() string { return st.addr }

// Stream returns the name of the stream holding the log.
func (st *Store) Stream() string { return st.name }

// Close shuts the store down cleanly and releases the lock: it drains the
// connection (up to 5 s), shuts the embedded server down and waits for it
// (after an unclean exit the next start must rebuild the stream's index
// from its files, which makes it slow), then unlocks. Calls after Close fail with events.ErrClosed; a
// second Close returns nil.
func (st *Store) Close() error {
	st.mu.Lock()
	if st.closing {
		st.mu.Unlock()
		return nil
	}
	st.closing = true
	st.mu.Unlock()

	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()

	var errs []error
	if st.remote != nil && st.remote.front != nil {
		if err := drainConn(st.remote.front, closeGrace); err != nil {
			errs = append(errs, fmt.Errorf("drain front: %w", err))
		}
		st.remote.frontSrv.Shutdown()
		st.remote.frontSrv.WaitForShutdown()
	}
	if err := drainConn(st.nc, closeGrace); err != nil {
		errs = append(errs, fmt.Errorf("drain: %w", err))
	}
	if st.srv != nil {
		st.srv.Shutdown()
		st.srv.WaitForShutdown()
	}
	if st.lock != nil {
		if err := st.lock.Unlock(); err != nil {
			errs = append(errs, fmt.Errorf("unlock: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// drainConn drains nc and waits up to wait for it to close; it closes it
// outright after that.
func drainConn(nc *nats.Conn, wait time.Duration) error {
	if nc.IsClosed() {
		return nil
	}
	done := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(done) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return err
	}
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		nc.Close()
		return errors.New("timed out")
	}
}

// opContext returns ctx bounded by DefaultOpTimeout when it has no deadline.
func opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultOpTimeout)
}

// isClosed reports whether Close has run.
func (st *Store) isClosed() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.closed
}

// lookupStream asks for the stream, again while ctx lasts when the
// question goes unanswered (a cluster busy placing the stream another
// daemon is creating answers late): each try has at most 2 s.
func (st *Store) lookupStream(ctx context.Context, j js.JetStream) (js.Stream, error) {
	for attempt := 0; ; attempt++ {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := j.Stream(c, st.name)
		cancel()
		if err == nil || errors.Is(err, js.ErrStreamNotFound) || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) && attempt >= 2 {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
	}
}

// createStream creates the stream when no daemon has yet. Daemons of
// several machines started together on an empty cluster race to create
// it: a create that fails (already created by another with another
// replication, or not answered while the cluster places it) looks the
// stream up again and, while ctx lasts, tries once more, so every daemon
// ends with the one stream.
func (st *Store) createStream(ctx context.Context, j js.JetStream, replicas int) (js.Stream, error) {
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if s, err := j.Stream(ctx, st.name); err == nil {
				return s, nil
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("create stream %s: %w (then: %w)", st.name, last, ctx.Err())
			case <-time.After(time.Duration(50*attempt) * time.Millisecond):
			}
		}
		stream, err := st.createOnce(ctx, j, replicas)
		if err == nil {
			return stream, nil
		}
		last = err
		if ctx.Err() != nil || attempt >= 8 {
			if s, lerr := j.Stream(context.WithoutCancel(ctx), st.name); lerr == nil {
				return s, nil
			}
			return nil, fmt.Errorf("create stream %s: %w", st.name, err)
		}
	}
}

// createOnce sends the stream's create request (three replicas then one
// when replicas is 0 on a cluster that cannot place three).
func (st *Store) createOnce(ctx context.Context, j js.JetStream, replicas int) (js.Stream, error) {
	// Each attempt keeps time for the next: at most 2 s.
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ctx = cctx
	subjects := []string{st.subject}
	if st.remote != nil {
		subjects = append(subjects, teamWildcard(st.name))
	}
	cfg := js.StreamConfig{
		Name:        st.name,
		Subjects:    subjects,
		Storage:     js.FileStorage,
		Retention:   js.LimitsPolicy,
		Discard:     js.DiscardOld,
		MaxAge:      0,
		Duplicates:  duplicates,
		AllowDirect: true,
		Compression: js.NoCompression,
		Replicas:    max(replicas, 1),
	}
	if replicas == 0 && st.remote != nil {
		cfg.Replicas = 3
	}
	stream, err := j.CreateStream(ctx, cfg)
	if err != nil && replicas == 0 && cfg.Replicas > 1 {
		// A single server or a cluster of fewer than three: one replica.
		cfg.Replicas = 1
		stream, err = j.CreateStream(ctx, cfg)
	}
	return stream, err
}
