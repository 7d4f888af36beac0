package main

// The omni daemon: one process per $OMNI_HOME owns the event store and
// answers hook clients over loopback NATS (JETSTREAM.md §5, §6, §8).
//
// Files in <home>:
//
//	store/            the JetStream store, guarded by store/store.lock (flock)
//	daemon.addr       {"addr","token","pid","protocol","version"}, mode 0600,
//	                  written atomically once every method is served, removed
//	                  first on exit
//	daemon.log        stdout and stderr of spawned daemons (appended)
//
// Subjects: every method is served on "omni.rpc.v<daemonProtocol>.<method>";
// "omni.rpc.ping" and "omni.rpc.stop" are also served without the version so
// that a client of any protocol version can detect and stop this daemon.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// daemonProtocol is the version of the request protocol between clients and
// the daemon (wire.Protocol).
const daemonProtocol = wire.Protocol

const (
	// defaultDaemonIdle is how long a daemon waits without a request before
	// it exits (JETSTREAM.md §8.2 suggests 10–30 minutes).
	defaultDaemonIdle = 10 * time.Minute
	// daemonDialTimeout bounds a client's connect (JETSTREAM.md §6).
	daemonDialTimeout = 500 * time.Millisecond
	// daemonSpawnPoll is the interval at which a client that spawned a
	// daemon looks for it (JETSTREAM.md §5: a fixed 2–5 ms poll).
	daemonSpawnPoll = 3 * time.Millisecond
	// daemonLockProbe is the minimum interval between store-lock probes of a
	// client whose spawned daemon exited (it lost the lock race).
	daemonLockProbe = 20 * time.Millisecond
	// daemonPingTimeout bounds one readiness ping while polling.
	daemonPingTimeout = 500 * time.Millisecond
	// daemonStopGrace bounds how long a stopping daemon waits for running
	// requests before it closes the handler and the store.
	daemonStopGrace = 5 * time.Second
	// daemonStopTimeout is how long `omni daemon --stop` waits for the lock.
	daemonStopTimeout = 10 * time.Second
	// daemonLogMax is the size, in bytes, past which a spawning client moves
	// daemon.log to daemon.log.1 and starts a new one.
	daemonLogMax = 1 << 20
)

// daemonHomeCheck is how often a daemon checks that its home still exists
// (test harnesses delete temporary homes). A variable for tests.
var daemonHomeCheck = 2 * time.Second

// daemonMethods are the methods a daemon serves. "ping" and "stop" are
// answered by the daemon itself; the others go to the rpcHandler.
var daemonMethods = [...]string{"hook", "call", "retrieve", "replay", "stats", "ping", "stop", "explain", "recent", "diff", "goal", "session", "distill", "gc", "health", "repair"}

// onceMethods are never sent again after the connection was lost with the
// request out: the first attempt may have run. gc and repair change the
// store; a hook or call that ran recorded its delivery, and a second
// decision would fold lines against that record although the reader never
// got the first reply. Failing open instead is safe: the host shows the raw
// output, a superset of what was recorded.
var onceMethods = []string{"gc", "repair", "hook", "call"}

// errNoDaemon is returned (wrapped) by callDaemon when no daemon of this
// protocol could be reached (none running, a stale address, one of another
// protocol, one shutting down) and none could be spawned in time.
var errNoDaemon = errors.New("no omni daemon reachable")

// rpcHandler serves one daemon method; method is e.g. "hook", "call",
// "retrieve", "replay", "stats". It may be called concurrently; it does its
// own locking. Its error reaches the client as a *wire.RemoteError.
type rpcHandler func(ctx context.Context, method string, req []byte) ([]byte, error)

// daemonHandlerFactory builds the handler of `omni daemon` once the store is
// open (the engine folds the log there); it returns the handler and a close
// func called after serving stops. Set from another file of package main;
// when nil, the daemon answers ping and stop only and fails every other
// method.
var daemonHandlerFactory func(ctx context.Context, log events.Log) (rpcHandler, func() error, error)

// daemonSpawnCommand returns the command that starts a daemon for home;
// callDaemon adds the environment, the session and the log file. A variable
// for tests.
var daemonSpawnCommand = func(home string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	return exec.Command(self, "daemon"), nil
}

// daemonAddr is the content of <home>/daemon.addr (wire.Addr).
type daemonAddr = wire.Addr

func daemonStoreDir(home string) string { return filepath.Join(home, "store") }
func daemonAddrPath(home string) string { return filepath.Join(home, wire.AddrFile) }

// daemonSubject is the versioned RPC name of method.
func daemonSubject(method string) string { return wire.Subject(method) }

// pongReply is the reply of "ping".
func pongReply() []byte { return []byte("pong " + strconv.Itoa(daemonProtocol)) }

// runDaemon runs the daemon of home until it is asked to stop, has been
// idle for idle (0 means 10 min), finds home deleted (checked every 2 s),
// gets SIGTERM/SIGINT, or ctx ends. It returns nil at once when another
// process holds the store lock (a redundant daemon of a spawn storm).
//
// Start: open the store (flock first, JETSTREAM.md §6) listening on
// 127.0.0.1 with a random 128-bit token; build the handler; serve every
// method; then write daemon.addr atomically. Exit: remove daemon.addr first
// (JETSTREAM.md §9.8), stop serving (running requests finish, up to 5 s),
// close the handler, close the store (clean shutdown, §9.9).
func runDaemon(ctx context.Context, home string, idle time.Duration, logf func(format string, a ...any),
	newHandler func(ctx context.Context, log events.Log) (rpcHandler, func() error, error)) error {
	start := time.Now()
	if idle <= 0 {
		idle = defaultDaemonIdle
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if newHandler == nil {
		return errors.New("daemon: no handler factory")
	}
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("daemon home: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: daemonStoreDir(home), Listen: true, Token: token})
	if errors.Is(err, jetstream.ErrLocked) {
		logf("daemon %d: store %s is owned by another process; exiting", os.Getpid(), daemonStoreDir(home))
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	h, closeHandler, err := newHandler(ctx, st)
	if err != nil {
		_ = st.Close()
		return fmt.Errorf("daemon handler: %w", err)
	}
	if closeHandler == nil {
		closeHandler = func() error { return nil }
	}

	var act activity
	act.touch()
	act.broken = st.Broken
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
	serve := func(name string, fn jetstream.Handler) error {
		if err := st.Serve(name, act.track(fn)); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		return nil
	}
	var serr error
	for _, m := range daemonMethods {
		var fn jetstream.Handler
		switch m {
		case "ping":
			fn = ping
		case "stop":
			fn = stop
		default:
			fn = func(ctx context.Context, req []byte) ([]byte, error) { return h(ctx, m, req) }
		}
		if serr = serve(daemonSubject(m), fn); serr != nil {
			break
		}
	}
	if serr == nil {
		// Unversioned control methods, answered by every protocol version.
		if serr = serve("ping", ping); serr == nil {
			serr = serve("stop", stop)
		}
	}
	ad := daemonAddr{Addr: st.Addr(), Token: token, PID: os.Getpid(), Protocol: daemonProtocol, Version: version}
	if serr == nil {
		serr = writeDaemonAddr(home, ad)
	}
	if serr != nil {
		return errors.Join(serr, shutdownDaemon(home, ad, st, closeHandler))
	}
	logf("daemon %d: ready on %s (protocol %d) in %s", os.Getpid(), ad.Addr, daemonProtocol,
		time.Since(start).Round(10*time.Microsecond))

	why := act.waitExit(ctx, stopCh, idle, home)
	logf("daemon %d: stopping: %s", os.Getpid(), why)
	if strings.HasPrefix(why, "home ") || strings.HasPrefix(why, "store lock ") {
		// The directory this daemon owned is gone (or is another store now):
		// a clean Shutdown would write this server's state into whatever
		// lives at that path. Stop serving and leave without touching disk;
		// the process exits right after.
		gctx, cancel := context.WithTimeout(context.Background(), daemonStopGrace)
		_ = st.StopServing(gctx)
		cancel()
		logf("daemon %d: left its store untouched", os.Getpid())
		return nil
	}
	if err := shutdownDaemon(home, ad, st, closeHandler); err != nil {
		logf("daemon %d: %v", os.Getpid(), err)
		return err
	}
	logf("daemon %d: stopped", os.Getpid())
	return nil
}

// shutdownDaemon removes daemon.addr (if it is still ours), stops serving,
// closes the handler and then the store.
func shutdownDaemon(home string, ad daemonAddr, st *jetstream.Store, closeHandler func() error) error {
	if cur, err := readDaemonAddr(home); err == nil && cur.Token == ad.Token {
		_ = os.Remove(daemonAddrPath(home))
	}
	gctx, cancel := context.WithTimeout(context.Background(), daemonStopGrace)
	_ = st.StopServing(gctx)
	cancel()
	var errs []error
	if err := closeHandler(); err != nil {
		errs = append(errs, fmt.Errorf("close handler: %w", err))
	}
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
}

func (a *activity) touch() { a.last.Store(time.Now().UnixNano()) }

// track wraps fn so that it counts as activity.
func (a *activity) track(fn jetstream.Handler) jetstream.Handler {
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
	homeTick := time.NewTicker(daemonHomeCheck)
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

// writeDaemonAddr writes <home>/daemon.addr atomically (temp file and
// rename), mode 0600.
func writeDaemonAddr(home string, ad daemonAddr) error {
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
	if err := os.Rename(f.Name(), daemonAddrPath(home)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("daemon addr: %w", err)
	}
	return nil
}

// readDaemonAddr reads <home>/daemon.addr.
func readDaemonAddr(home string) (daemonAddr, error) { return wire.ReadAddr(home) }

// daemonDialer connects to the daemon of home, remembering daemons of
// another protocol it already asked to stop.
type daemonDialer struct {
	home    string
	stopped map[string]bool // token → stop sent
}

// errProtocolMismatch marks a daemon of another protocol version.
var errProtocolMismatch = errors.New("daemon speaks another protocol")

// dial reads daemon.addr and connects. A daemon of another protocol is
// asked (once) to stop and reported as errProtocolMismatch. Every error
// means "no usable daemon at the moment".
func (d *daemonDialer) dial(ctx context.Context) (*wire.Conn, error) {
	ad, err := readDaemonAddr(d.home)
	if err != nil {
		return nil, err
	}
	if ad.Protocol != daemonProtocol {
		if !d.stopped[ad.Token] {
			if d.stopped == nil {
				d.stopped = map[string]bool{}
			}
			d.stopped[ad.Token] = true
			if c, err := wire.Dial(ctx, ad.Addr, ad.Token, daemonDialTimeout); err == nil {
				sctx, cancel := context.WithTimeout(ctx, daemonPingTimeout)
				_, _ = c.Call(sctx, "stop", nil)
				cancel()
				c.Close()
			}
		}
		return nil, fmt.Errorf("daemon pid %d: protocol %d, want %d: %w", ad.PID, ad.Protocol, daemonProtocol, errProtocolMismatch)
	}
	return wire.Dial(ctx, ad.Addr, ad.Token, daemonDialTimeout)
}

// daemonGone reports whether a Call error means the daemon is not there
// (rather than a handler error or a deadline).
func daemonGone(err error) bool {
	return errors.Is(err, wire.ErrNoResponders) || errors.Is(err, wire.ErrConnClosed)
}

// callDaemon sends one request to the daemon of home and returns its reply.
// When no daemon answers (no daemon.addr, a stale address, a foreign
// process, "no responders", a closed connection or a protocol mismatch) and
// spawn is true, it spawns `<self> daemon` detached (own session, stdio
// appended to <home>/daemon.log, OMNI_HOME=home), polls every 3 ms for up to
// spawnWait until a daemon answers ping, and retries the request once. ctx's
// deadline bounds the whole call: a hung daemon makes it return ctx's error.
//
// method must be one of daemonMethods.
//
// Errors: errNoDaemon (wrapped) when no daemon could be reached;
// *wire.RemoteError when the handler failed; ctx's error (wrapped);
// other wrapped transport errors.
func callDaemon(ctx context.Context, home, method string, req []byte, spawn bool, spawnWait time.Duration) ([]byte, error) {
	if !slices.Contains(daemonMethods[:], method) {
		return nil, fmt.Errorf("daemon %s: unknown method", method)
	}
	d := &daemonDialer{home: home}
	c, err := d.dial(ctx)
	if err == nil {
		resp, cerr := c.Call(ctx, daemonSubject(method), req)
		c.Close()
		if cerr == nil || !daemonGone(cerr) {
			return resp, wrapCallErr(method, cerr)
		}
		// The connection was lost after the request went out: a method
		// that changes the store may have run, so it is not sent again
		// (here or in-process by callOrLocal).
		if slices.Contains(onceMethods, method) && errors.Is(cerr, wire.ErrConnClosed) {
			return nil, fmt.Errorf("daemon %s: the daemon stopped while answering, so %s may or may not have run (not sent again; 'omni doctor' shows the store's state): %w", method, method, cerr)
		}
		err = cerr
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("daemon %s: %w", method, cerr)
	}
	if !spawn {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, errNoDaemon, err)
	}
	c, err = spawnDaemon(ctx, d, spawnWait)
	if err != nil {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, errNoDaemon, err)
	}
	defer c.Close()
	resp, err := c.Call(ctx, daemonSubject(method), req)
	if err != nil && daemonGone(err) {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, errNoDaemon, err)
	}
	return resp, wrapCallErr(method, err)
}

// wrapCallErr adds context to a transport error; a *RemoteError stays as is.
func wrapCallErr(method string, err error) error {
	var re *wire.RemoteError
	if err == nil || errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("daemon %s: %w", method, err)
}

// spawnDaemon starts a daemon for d.home and polls until one (ours or a
// concurrent client's) answers ping, for up to wait. When the process it
// started exits without a daemon answering (it lost the lock race, or an
// old daemon was still shutting down), it starts another once the store
// lock is free.
func spawnDaemon(ctx context.Context, d *daemonDialer, wait time.Duration) (*wire.Conn, error) {
	deadline := time.Now().Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	exited, err := startDaemonProcess(d.home)
	if err != nil {
		return nil, err
	}
	var childGone bool
	var lastProbe time.Time
	timer := time.NewTimer(daemonSpawnPoll)
	defer timer.Stop()
	for {
		if c, err := d.dial(ctx); err == nil {
			pctx, cancel := context.WithTimeout(ctx, daemonPingTimeout)
			_, perr := c.Call(pctx, daemonSubject("ping"), nil)
			cancel()
			if perr == nil {
				return c, nil
			}
			c.Close()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no daemon answered within %s", wait)
		}
		if !childGone {
			select {
			case <-exited:
				childGone = true
			default:
			}
		}
		if childGone && time.Since(lastProbe) >= daemonLockProbe {
			lastProbe = time.Now()
			if locked, err := jetstream.Locked(daemonStoreDir(d.home)); err == nil && !locked {
				if exited, err = startDaemonProcess(d.home); err != nil {
					return nil, err
				}
				childGone = false
			}
		}
		timer.Reset(daemonSpawnPoll)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// startDaemonProcess starts a detached daemon for home: its own session
// (Setsid, so it outlives the caller's process group), stdin from
// /dev/null, stdout and stderr appended to <home>/daemon.log (moved to
// daemon.log.1 first when over 1 MiB),
// OMNI_HOME=home. The caller never waits for it; a goroutine reaps it and
// closes the returned channel when it exits.
func startDaemonProcess(home string) (<-chan struct{}, error) {
	cmd, err := daemonSpawnCommand(home)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	logPath := filepath.Join(home, "daemon.log")
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > daemonLogMax {
		_ = os.Rename(logPath, logPath+".1") // keep one previous log
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	defer logFile.Close()
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "OMNI_HOME="+home)
	if cmd.Dir == "" {
		cmd.Dir = "/" // do not pin the caller's working directory
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return exited, nil
}

// stopDaemon asks the daemon of home to stop (on the unversioned "stop"
// method, so a daemon of any protocol obeys) and waits up to wait until the
// store lock is released. It reports whether a daemon (or another holder of
// the store lock) was running. Errors: the lock still held after wait, or
// ctx's error.
func stopDaemon(ctx context.Context, home string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	running, asked := false, false
	for {
		if !asked {
			if ad, err := readDaemonAddr(home); err == nil {
				if c, err := wire.Dial(ctx, ad.Addr, ad.Token, daemonDialTimeout); err == nil {
					sctx, cancel := context.WithTimeout(ctx, daemonPingTimeout)
					if _, err := c.Call(sctx, "stop", nil); err == nil {
						asked, running = true, true
					}
					cancel()
					c.Close()
				}
			}
		}
		locked, err := jetstream.Locked(daemonStoreDir(home))
		if err != nil {
			return running, fmt.Errorf("stop daemon: %w", err)
		}
		if !locked {
			return running, nil
		}
		running = true
		if !time.Now().Before(deadline) {
			return true, fmt.Errorf("stop daemon: store %s still locked after %s", daemonStoreDir(home), wait)
		}
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("stop daemon: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// noHandlerFactory serves when daemonHandlerFactory is unset: every method
// but ping and stop fails.
func noHandlerFactory(context.Context, events.Log) (rpcHandler, func() error, error) {
	return func(_ context.Context, method string, _ []byte) ([]byte, error) {
		return nil, fmt.Errorf("method %s: no handler in this build", method)
	}, nil, nil
}

// newDaemonCmd returns `omni daemon [--stop] [--idle DURATION]`.
func newDaemonCmd() *cobra.Command {
	var stop bool
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the background daemon that owns the event store",
		Long: `Run the omni daemon of $OMNI_HOME in the foreground.

Hooks start it on demand (detached, logging to $OMNI_HOME/daemon.log), so
there is rarely a reason to run it by hand. One daemon owns the store; a
second one exits at once with status 0. It exits after --idle without a
request (default 10m; OMNI_DAEMON_IDLE sets it when --idle is not given),
when $OMNI_HOME is removed, or on SIGTERM/SIGINT.

With --stop, ask the running daemon to stop and wait until it has; prints
"stopped" or "no daemon running" on stderr.

Exit codes: 0 on a clean stop (or when another daemon owns the store),
1 on error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			home := omniHome()
			if stop {
				running, err := stopDaemon(ctx, home, daemonStopTimeout)
				if err != nil {
					return err
				}
				if running {
					fmt.Fprintln(cmd.ErrOrStderr(), "stopped")
				} else {
					fmt.Fprintln(cmd.ErrOrStderr(), "no daemon running")
				}
				return nil
			}
			if cmd.Flags().Changed("idle") && idle <= 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("omni daemon: --idle %s: want a positive duration such as 10m", idle)}
			}
			if !cmd.Flags().Changed("idle") {
				if v := os.Getenv("OMNI_DAEMON_IDLE"); v != "" {
					d, err := time.ParseDuration(v)
					if err != nil || d <= 0 {
						return fmt.Errorf("OMNI_DAEMON_IDLE=%q: want a positive duration such as 10m", v)
					}
					idle = d
				}
			}
			factory := daemonHandlerFactory
			if factory == nil {
				factory = noHandlerFactory
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags|log.Lmicroseconds)
			return runDaemon(ctx, home, idle, logger.Printf, factory)
		},
	}
	cmd.Flags().BoolVar(&stop, "stop", false, "stop the running daemon and wait until it has exited")
	cmd.Flags().DurationVar(&idle, "idle", defaultDaemonIdle, "exit after this long without a request")
	return cmd
}
