package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon/wire"
)

const (
	// DefaultIdle is how long a daemon waits without a request before it
	// exits: long enough that a working session rarely pays a daemon start
	// (a spawn and a fold of the log), short enough that an idle machine
	// holds no process for long.
	DefaultIdle = 10 * time.Minute
	// stopGrace bounds how long a stopping daemon waits for running
	// requests before it closes the handler and the store.
	stopGrace = 5 * time.Second
	// memorySlack is the heap the daemon may grow by above its live state
	// before the Go collector works harder (a soft limit, not a cap): room
	// for one large hook payload. Measured on a 15 MiB Bash output
	// (2026-11-29): peak RSS 193 MB without a limit, 133 MB with a 100 MiB
	// one, for 14% more time on that call only; calls far below the limit
	// are unaffected.
	memorySlack = 64 << 20
)

// homeCheck is how often a daemon checks that its home still exists
// (test harnesses delete temporary homes). A variable for tests.
var homeCheck = 2 * time.Second

// Handler serves one daemon method by name (a Method constant other than
// ping and stop) from its wire request. It may be called concurrently; it
// does its own locking. Its error reaches the client as a
// *wire.RemoteError, with a code when it is one of this package's errors.
type Handler func(ctx context.Context, method string, req []byte) ([]byte, error)

// HandlerFactory builds the daemon's handler once the store is open: it
// returns the handler and a close func called after serving stops.
type HandlerFactory func(ctx context.Context, log events.Log) (Handler, func() error, error)

// ServiceHandler is the daemon's real handler: a Service over the store
// (NewService) that writes a checkpoint every 5,000 batches and at close,
// and keeps the process's soft memory limit at its live heap plus 64 MiB
// (at least 96 MiB; a GOMEMLIMIT the user set wins), reset after each
// checkpoint as the projections grow. It also runs the home's retention
// (Service.Retain: batches older than cfg.Retention removed at most once a
// day, through the path of omni gc --before).
func ServiceHandler(cfg Config) HandlerFactory {
	return func(ctx context.Context, log events.Log) (Handler, func() error, error) {
		svc, err := NewService(ctx, log, cfg)
		if err != nil {
			return nil, nil, err
		}
		cp := newCheckpointer(cfg, svc.engine, Logf(cfg.Home))
		cp.onWrite = setMemoryLimit
		setMemoryLimit()
		stopFollow := func() {}
		if st, ok := log.(*jetstream.Store); ok && st.Remote() {
			if stopFollow, err = followShared(ctx, st, svc.engine, Logf(cfg.Home)); err != nil {
				_ = cp.close()
				return nil, nil, err
			}
		}
		handle := func(ctx context.Context, method string, req []byte) ([]byte, error) {
			defer cp.maybe()
			return svc.Handle(ctx, method, req)
		}
		stopRetain := startRetention(svc)
		closeAll := func() error {
			stopRetain()
			stopFollow()
			return cp.close()
		}
		return handle, closeAll, nil
	}
}

// followShared makes eng fold every batch other machines append to a
// shared log, as they arrive (jetstream.Store.Follow, from the batch after
// the newest one eng holds), and returns the func that stops it.
func followShared(ctx context.Context, st *jetstream.Store, eng *hooks.Engine, logf func(string, ...any)) (func(), error) {
	stop, err := st.Follow(ctx, eng.Applied()+1, eng.Follow, func(seq events.Seq, err error) {
		logf("follow: batch %d does not decode: %v (skipped)", seq, err)
	})
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	return stop, nil
}

// NoHandler serves ping and stop only: every other method fails.
func NoHandler(context.Context, events.Log) (Handler, func() error, error) {
	return func(_ context.Context, method string, _ []byte) ([]byte, error) {
		return nil, fmt.Errorf("method %s: no handler in this build", method)
	}, nil, nil
}

// setMemoryLimit sets the soft memory limit to the live heap (measured
// now) plus memorySlack, at least 96 MiB, unless the user set GOMEMLIMIT.
func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(max(96<<20, int64(ms.HeapAlloc)+memorySlack))
}

func storeDir(home string) string { return filepath.Join(home, "store") }
func addrPath(home string) string { return filepath.Join(home, wire.AddrFile) }

// pongReply is the reply of "ping": "pong <protocol>".
func pongReply() []byte { return []byte("pong " + strconv.Itoa(wire.Protocol)) }

// Run runs the daemon of cfg.Home until it is asked to stop, has been
// idle for idle (0 means DefaultIdle, 10 min), finds its home deleted or
// its store lock replaced (checked every 2 s), finds its store broken
// (jetstream.ErrBroken, e.g. after a full disk), gets SIGTERM/SIGINT, or
// ctx ends. It returns nil at once when another process holds the store
// lock (a redundant daemon of a spawn storm).
//
// Start: refuse a home or store others can write (CheckHome; repaired
// when it is ours); take the store lock first, then open the store
// listening on 127.0.0.1 over TLS with a key made now (wire.NewIdentity)
// and a random 128-bit token (a second embedded server on the same
// directory would lose acknowledged writes); build the handler; serve
// every method of the method table on "omni.rpc.v<protocol>.<method>" and
// ping and stop also unversioned, and the same names on the local socket
// (serveLocal: <home>/daemon.<pid>.sock, peers checked from the kernel)
// where the platform has one; then write daemon.addr atomically (mode
// 0600; with the certificate clients pin, the build and the executable),
// so a client that reads it finds every method served, and end a back-off
// (wire.EndBackoff). A method other than ping and stop that arrives with
// less than MinTimeLeft of its deadline is answered ErrTooLate without
// touching the store. Every 2 s a daemon.addr that no longer names this
// daemon (missing or unreadable) is written again. Exit: remove
// daemon.addr first, so no new client dials a daemon that is leaving; stop
// serving (running requests finish, up to 5 s); close the handler; close
// the store (a clean shutdown: an unclean one makes the next start
// rebuild the stream's index).
func Run(ctx context.Context, cfg Config, idle time.Duration, logf func(format string, a ...any), newHandler HandlerFactory) error {
	start := time.Now()
	home := cfg.Home
	if idle <= 0 {
		idle = DefaultIdle
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if newHandler == nil {
		return errors.New("daemon: no handler factory")
	}
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	if cfg.ClusterErr != nil {
		return fmt.Errorf("daemon: %w", cfg.ClusterErr)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("daemon home: %w", err)
	}
	if err := CheckHome(home); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	id, err := wire.NewIdentity()
	if err != nil {
		return err
	}
	// The build identity may hash the executable (tens of ms): beside the
	// store's start, not after it.
	buildc := make(chan string, 1)
	go func() { buildc <- wire.BuildID() }()
	exe, _ := os.Executable()
	exeStamp := wire.FileStamp(exe)
	lockWait := time.Duration(0)
	if cfg.Replace {
		v, err := ResolveSuspect(ctx, home, logf)
		logf("daemon %d: replacing: %s", os.Getpid(), v)
		if err != nil {
			logf("daemon %d: %v", os.Getpid(), err)
		}
		if v == VerdictHealthy {
			return nil
		}
		lockWait = releaseWait
	}
	o := cfg.storeOptions()
	o.Listen, o.Token, o.TLS, o.LockWait = true, token, id.Server, lockWait
	st, err := jetstream.Open(ctx, o)
	logStuck(home, err)
	if errors.Is(err, jetstream.ErrLocked) {
		logf("daemon %d: store %s is owned by another process; exiting", os.Getpid(), storeDir(home))
		return nil
	}
	if err != nil {
		if cfg.ClusterURL != "" {
			// The cause first, so it is in daemon.log by the time a hook
			// reads the mark; then hooks fail open at once for a back-off
			// instead of each spawning a daemon that waits for the
			// cluster (ClusterDown).
			logf("daemon %d: cannot open the log on the cluster: %v", os.Getpid(), err)
			markClusterDown(home, err)
		}
		return fmt.Errorf("daemon: %w", err)
	}
	if cfg.ClusterURL != "" {
		clearClusterDown(home)
		st.OnClusterState(func(down bool, why string) {
			if down {
				logf("daemon %d: the cluster does not answer (%s): hooks pass output through, recording nothing, until it does", os.Getpid(), why)
			} else {
				logf("daemon %d: the cluster answers again", os.Getpid())
			}
		})
	}
	h, closeHandler, err := newHandler(ctx, st)
	if err != nil {
		_ = st.Close()
		return fmt.Errorf("daemon handler: %w", err)
	}
	if closeHandler == nil {
		closeHandler = func() error { return nil }
	}
	srv := newRPCServer(st.Conn())

	var act activity
	act.touch()
	act.broken = st.Broken
	act.healAddr = func() {
		// The local socket, when its file was removed or replaced, is made
		// again (serveLocal). A daemon.addr that is gone or unreadable (retired by a client
		// that met a listener it could not trust, removed by hand) is
		// written again: hooks find this daemon within one check instead
		// of waiting on its lock. One that names another token is written
		// again only while this process holds the store's lock (LockHolder,
		// from /proc/locks): then no other daemon can serve this home, and
		// the address is stale or forged; a replacement started for it
		// would only find the lock held and exit, leaving every hook to
		// wait out its deadline until this daemon idles out. Without a
		// local lock (a cluster backend) it is left to the replacement it
		// causes (ResolveSuspect).
		srv.healLocal()
		cur, err := wire.ReadAddr(home)
		switch {
		case errors.Is(err, wire.ErrUnsafeHome):
		case err != nil:
			if writeAddr(home, act.ad) == nil {
				logf("daemon %d: rewrote %s", os.Getpid(), addrPath(home))
			}
		case cur.Token != act.ad.Token:
			if pid, _ := LockHolder(storeDir(home)); pid == os.Getpid() && writeAddr(home, act.ad) == nil {
				logf("daemon %d: %s named another daemon (pid %d) while this one holds the store lock: rewrote it", os.Getpid(), addrPath(home), cur.PID)
			}
		}
	}
	stopCh := make(chan string, 1)
	requestStop := func(why string) {
		select {
		case stopCh <- why:
		default:
		}
	}
	ping := func(context.Context, []byte) ([]byte, error) { return pongReply(), nil }
	stop := func(context.Context, []byte) ([]byte, error) {
		requestStop("stop request")
		return []byte("stopping"), nil
	}
	local := map[string]rpcHandler{}
	serve := func(name string, fn rpcHandler) error {
		fn = act.track(fn)
		if err := srv.serve(name, fn); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		local[name] = fn
		return nil
	}
	var serr error
	for _, m := range methods {
		var fn rpcHandler
		switch m.name {
		case MethodPing:
			fn = ping
		case MethodStop:
			fn = stop
		default:
			fn = func(ctx context.Context, req []byte) ([]byte, error) {
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) < MinTimeLeft {
					return nil, fmt.Errorf("%s: %w", m.name, ErrTooLate)
				}
				return h(ctx, m.name, req)
			}
		}
		if serr = serve(wire.Subject(m.name), fn); serr != nil {
			break
		}
	}
	if serr == nil {
		// Unversioned control methods, answered by every protocol version.
		if serr = serve(MethodPing, ping); serr == nil {
			serr = serve(MethodStop, stop)
		}
	}
	sock := ""
	if serr == nil {
		sock = srv.serveLocal(home, token, local, logf)
	}
	ad := wire.Addr{Addr: st.Addr(), Token: token, PID: os.Getpid(), Protocol: wire.Protocol, Version: cfg.Version,
		Cert: wire.CertString(id.Cert), Sock: sock, Build: <-buildc, Exe: exe, ExeStamp: exeStamp, Backend: cfg.Backend()}
	if serr == nil {
		serr = writeAddr(home, ad)
	}
	if serr == nil {
		wire.EndBackoff(home) // a daemon answers: hooks may call again
	}
	if serr != nil {
		return errors.Join(serr, shutdown(home, ad, srv, st, closeHandler))
	}
	act.ad = ad
	backend := "embedded store"
	if cfg.ClusterURL != "" {
		backend = "stream " + st.Stream() + " on " + jetstream.RedactURL(cfg.ClusterURL)
	}
	logf("daemon %d: ready on %s (protocol %d, %s) in %s", os.Getpid(), ad.Addr, wire.Protocol, backend,
		time.Since(start).Round(10*time.Microsecond))

	why := act.waitExit(ctx, stopCh, idle, home)
	logf("daemon %d: stopping: %s", os.Getpid(), why)
	if strings.HasPrefix(why, "home ") || strings.HasPrefix(why, "store lock ") {
		// The directory this daemon owned is gone (or is another store now):
		// a clean Shutdown would write this server's state into whatever
		// lives at that path. Stop serving and leave without touching disk;
		// the process exits right after.
		gctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		_ = srv.stop(gctx)
		cancel()
		logf("daemon %d: left its store untouched", os.Getpid())
		return nil
	}
	if err := shutdown(home, ad, srv, st, closeHandler); err != nil {
		logf("daemon %d: %v", os.Getpid(), err)
		return err
	}
	logf("daemon %d: stopped", os.Getpid())
	return nil
}

// shutdown removes daemon.addr (if it is still ours), stops serving,
// closes the handler and then the store.
func shutdown(home string, ad wire.Addr, srv *rpcServer, st *jetstream.Store, closeHandler func() error) error {
	if cur, err := wire.ReadAddr(home); err == nil && cur.Token == ad.Token {
		_ = os.Remove(addrPath(home))
	}
	gctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	_ = srv.stop(gctx)
	cancel()
	var errs []error
	if err := closeHandler(); err != nil {
		errs = append(errs, fmt.Errorf("close handler: %w", err))
	}
	srv.close()
	if err := st.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("daemon shutdown: %w", err)
	}
	return nil
}

// activity tracks requests for the idle timer.
type activity struct {
	last    atomic.Int64 // unix nanoseconds of the last request start or end
	running atomic.Int64 // requests being handled
	// broken, when set, reports a store that stopped storing
	// (jetstream.ErrBroken, e.g. after a full disk): the daemon exits.
	broken func() error
	// ad is the daemon's address; healAddr, when set, rewrites
	// daemon.addr when it no longer names ad.
	ad       wire.Addr
	healAddr func()
}

func (a *activity) touch() { a.last.Store(time.Now().UnixNano()) }

// track wraps fn so that it counts as activity.
func (a *activity) track(fn rpcHandler) rpcHandler {
	return func(ctx context.Context, req []byte) ([]byte, error) {
		a.running.Add(1)
		a.touch()
		defer func() {
			a.touch()
			a.running.Add(-1)
		}()
		return fn(ctx, req)
	}
}

// waitExit blocks until the daemon should exit and says why.
func (a *activity) waitExit(ctx context.Context, stop <-chan string, idle time.Duration, home string) string {
	tick := time.NewTicker(min(max(idle/8, 5*time.Millisecond), time.Second))
	defer tick.Stop()
	homeTick := time.NewTicker(homeCheck)
	defer homeTick.Stop()
	// The store's lock file identifies the store this daemon owns: if the
	// home is deleted and made again between two checks, the path exists
	// but names another file, and this daemon must not write into it.
	lockPath := filepath.Join(home, "store", jetstream.LockFile)
	lock0, _ := os.Stat(lockPath)
	for {
		select {
		case <-ctx.Done():
			return "interrupted: " + ctx.Err().Error()
		case why := <-stop:
			return why
		case <-tick.C:
			if a.running.Load() == 0 && time.Since(time.Unix(0, a.last.Load())) >= idle {
				return fmt.Sprintf("idle for %s", idle)
			}
		case <-homeTick.C:
			if a.broken != nil {
				if err := a.broken(); err != nil {
					return "store: " + err.Error() + " (the next hook starts a new daemon)"
				}
			}
			if _, err := os.Stat(home); errors.Is(err, os.ErrNotExist) {
				return "home " + home + " was removed"
			}
			if lock0 != nil {
				if fi, err := os.Stat(lockPath); err != nil || !os.SameFile(lock0, fi) {
					return "store lock " + lockPath + " was removed or replaced"
				}
			}
			if a.healAddr != nil {
				a.healAddr()
			}
		}
	}
}

// randomToken returns 128 random bits as 32 hex digits.
func randomToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("daemon token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// writeAddr writes <home>/daemon.addr atomically (temp file and rename),
// mode 0600.
func writeAddr(home string, ad wire.Addr) error {
	b, err := json.Marshal(ad)
	if err != nil {
		return fmt.Errorf("daemon addr: %w", err)
	}
	f, err := os.CreateTemp(home, ".daemon.addr.*")
	if err != nil {
		return fmt.Errorf("daemon addr: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o600)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("daemon addr: %w", err)
	}
	if err := os.Rename(f.Name(), addrPath(home)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("daemon addr: %w", err)
	}
	return nil
}
