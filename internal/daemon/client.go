package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon/wire"
	"github.com/omnictx/omni/internal/eventlog"
	"github.com/omnictx/omni/internal/platform"
	"github.com/omnictx/omni/projections/stats"
)

const (
	// spawnPoll is the interval at which a client that spawned a daemon
	// looks for it: a fixed short poll, since a daemon on a small store is
	// ready within a few milliseconds and a backoff would add to the
	// first hook's latency.
	spawnPoll = 3 * time.Millisecond
	// lockProbe is the minimum interval between store-lock probes of a
	// client whose spawned daemon exited (it lost the lock race).
	lockProbe = 20 * time.Millisecond
	// pingTimeout bounds one readiness ping while polling.
	pingTimeout = 500 * time.Millisecond
	// logMax is the size, in bytes, past which a spawning client moves
	// daemon.log to daemon.log.1 and starts a new one.
	logMax = 1 << 20
	// spawnWait is how long a request waits for a daemon it spawned
	// (shortened by the request's deadline).
	spawnWait = 3 * time.Second
	// localWait is how long a request run in-process waits for the store
	// lock (shortened by the request's deadline).
	localWait = 5 * time.Second
)

// Client sends the daemon's methods to the daemon of one home, spawning it
// when none answers, and runs them in-process under the store lock when no
// daemon can be reached (or Config.InProcess is set). Its typed methods
// return errors that errors.Is matches against this package's sentinels
// (ErrUnknownHandle, ErrNotInLog, ErrNoBase, ...) whichever way the request
// ran, and ErrStoreBusy at once while a long command (MarkBusy) holds the
// store. It is safe for concurrent use.
type Client struct {
	cfg Config
	// SpawnCommand returns the command that starts a daemon for the home;
	// the client adds the environment, the session and the log file. Nil
	// means this executable with the argument "daemon".
	SpawnCommand func(home string) (*exec.Cmd, error)
	// anyBuild serves requests from a daemon of another build (tests
	// whose client is the test binary and whose daemon is cmd/omni).
	anyBuild bool
}

// NewClient returns a client of cfg.Home.
func NewClient(cfg Config) *Client { return &Client{cfg: cfg} }

// Home returns the client's home.
func (c *Client) Home() string { return c.cfg.Home }

// Hook sends one hook request (one flags byte, HookPassthrough, then the
// payload) and returns what the hook prints.
func (c *Client) Hook(ctx context.Context, req []byte) ([]byte, error) {
	return c.do(ctx, MethodHook, req)
}

// Call runs one exec, pipe or distill output through the Engine.
func (c *Client) Call(ctx context.Context, in hooks.CallInput) (CallReply, error) {
	return call[CallReply](ctx, c, MethodCall, in)
}

// Retrieve returns the archived bytes of a handle. Errors:
// ErrUnknownHandle, ErrDamaged, ErrBadHandle, ErrReservedHandle.
func (c *Client) Retrieve(ctx context.Context, in RetrieveRequest) ([]byte, error) {
	req, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, MethodRetrieve, req)
}

// Replay reruns one recorded invocation or verifies them all. Errors:
// ErrNotInLog, ErrNoBase.
func (c *Client) Replay(ctx context.Context, in ReplayRequest) (ReplayReply, error) {
	return call[ReplayReply](ctx, c, MethodReplay, in)
}

// Stats returns the stats report (with in.Since, of the events since then).
func (c *Client) Stats(ctx context.Context, in StatsRequest) (stats.Report, error) {
	return call[stats.Report](ctx, c, MethodStats, in)
}

// Explain says why the folds of a handle or an invocation happened.
// Errors: ErrNoFold, ErrBadTarget.
func (c *Client) Explain(ctx context.Context, in ExplainRequest) (hooks.Explanation, error) {
	return call[hooks.Explanation](ctx, c, MethodExplain, in)
}

// Diff reruns one invocation and returns its raw and delivered texts.
// Errors: ErrNoDelivery, ErrNoBase.
func (c *Client) Diff(ctx context.Context, in DiffRequest) (hooks.DiffResult, error) {
	return call[hooks.DiffResult](ctx, c, MethodDiff, in)
}

// Goal sets, clears or shows a project's goal, or remembers a fact.
func (c *Client) Goal(ctx context.Context, in GoalRequest) (GoalReply, error) {
	return call[GoalReply](ctx, c, MethodGoal, in)
}

// Session returns a project's sessions.
func (c *Client) Session(ctx context.Context, in SessionRequest) (SessionReply, error) {
	return call[SessionReply](ctx, c, MethodSession, in)
}

// GC removes the batches older than in.Before.
func (c *Client) GC(ctx context.Context, in GCRequest) (hooks.GCPlan, error) {
	return call[hooks.GCPlan](ctx, c, MethodGC, in)
}

// Health reports the store's state (omni doctor).
func (c *Client) Health(ctx context.Context) (HealthReply, error) {
	return call[HealthReply](ctx, c, MethodHealth, struct{}{})
}

// Repair recovers a store that was refused as damaged (jetstream.
// RepairBlocks: damaged blocks moved aside and rewritten with every
// readable batch) and then records the batches the store can no longer
// give back. Errors: the recovery's (jetstream.ErrLocked while another
// process holds the store), the method's.
func (c *Client) Repair(ctx context.Context) (RepairReply, error) {
	var blocks *jetstream.Recovery
	dir := storeDir(c.cfg.Home)
	if _, ok := jetstream.ReadMarker(dir); ok {
		rec, err := jetstream.RepairBlocks(dir)
		if err != nil {
			return RepairReply{}, fmt.Errorf("repair the store's blocks: %w", err)
		}
		Logf(c.cfg.Home)("repaired the store's blocks: %d restored, %d kept, %d dropped, moved aside %v (%s)",
			rec.Restored, rec.Kept, len(rec.Dropped), rec.MovedAside, rec.Report)
		blocks = &rec
	}
	out, err := call[RepairReply](ctx, c, MethodRepair, struct{}{})
	out.Blocks = blocks
	return out, err
}

// ReadLog returns one page of the log (eventlog.ReadPage): the events
// in.Query selects from in.From on.
func (c *Client) ReadLog(ctx context.Context, in LogRequest) (eventlog.Page, error) {
	return call[eventlog.Page](ctx, c, MethodLog, in)
}

// Recent returns the newest in.N calls, newest first.
func (c *Client) Recent(ctx context.Context, in RecentRequest) ([]hooks.Recent, error) {
	return call[[]hooks.Recent](ctx, c, MethodRecent, in)
}

// Ping asks the running daemon for "pong <protocol>", never spawning one
// and never running in-process. Errors: ErrNoDaemon (wrapped) when none
// of this protocol answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.callDaemon(ctx, MethodPing, nil, false, time.Second)
	return err
}

// call sends a JSON request and decodes the JSON reply.
func call[Rep any](ctx context.Context, c *Client, method string, in any) (Rep, error) {
	var out Rep
	req, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	b, err := c.do(ctx, method, req)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("%s reply: %w", method, err)
	}
	return out, nil
}

// do sends one request to the daemon of the home (spawning it if needed),
// or, when no daemon can be reached or Config.InProcess is set, runs it
// in-process under the store lock. While a long command has marked the
// store busy, it fails at once with ErrStoreBusy; for a home others can
// write, with ErrUnsafeHome. While a back-off stands (a recent call found
// the daemon hung or refusing its token), a hook or call fails at once
// with ErrBackoff; any other method first resolves the suspect
// (ResolveSuspect) and then proceeds.
func (c *Client) do(ctx context.Context, method string, req []byte) ([]byte, error) {
	home := c.cfg.Home
	if err := c.cfg.ClusterErr; err != nil {
		return nil, err
	}
	if who, busy := StoreBusy(home); busy {
		return nil, fmt.Errorf("%w: %s holds it", ErrStoreBusy, who)
	}
	downCheck := func() error {
		if c.cfg.ClusterURL == "" || method == MethodStop || method == MethodPing {
			return nil
		}
		return ClusterDown(home)
	}
	if err := downCheck(); err != nil {
		return nil, err
	}
	if err := CheckHome(home); err != nil {
		return nil, err
	}
	if m, ok := jetstream.ReadMarker(storeDir(home)); ok && method != MethodRepair {
		return nil, fmt.Errorf("%w: %s (%s): run 'omni gc --repair'", ErrDamagedStore, m.Why,
			filepath.Join(storeDir(home), jetstream.DamagedFile))
	}
	if !c.cfg.InProcess {
		if b, on := wire.ReadBackoff(home); on && b.Hard {
			if m, _ := lookup(method); m.once {
				return nil, fmt.Errorf("%w (%s)", ErrBackoff, b.Why)
			}
			if _, err := ResolveSuspect(ctx, home, Logf(home)); err != nil {
				return nil, err
			}
		}
		spawn := true
		for {
			if err := downCheck(); err != nil {
				return nil, err // a daemon just failed to reach the cluster
			}
			wait := spawnWait
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				wait = time.Until(dl)
			}
			out, err := c.callDaemon(ctx, method, req, spawn, wait)
			if err == nil || !errors.Is(err, ErrNoDaemon) {
				return out, decode(err)
			}
			// No daemon answered. If one holds the store lock it is still
			// starting (folding a large log): keep waiting for it rather than
			// queueing on its lock.
			locked, _ := jetstream.Locked(storeDir(home))
			if !locked {
				Logf(home)("daemon unreachable, running %s in-process: %v", method, err)
				break
			}
			if ctx.Err() != nil {
				return nil, err
			}
			spawn = false
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if err := downCheck(); err != nil {
		return nil, err
	}
	wait := localWait
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		wait = time.Until(dl)
	}
	svc, closeFn, err := OpenLocal(ctx, c.cfg, wait)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return svc.Handle(ctx, method, req)
}

// dialer connects to the daemon of home, remembering daemons it already
// asked to stop.
type dialer struct {
	home     string
	anyBuild bool            // Client.anyBuild
	backend  string          // the backend this client would start (Config.Backend)
	stopped  map[string]bool // token → stop sent
}

// errProtocolMismatch marks a daemon of another protocol version;
// errStaleBuild one of another build; errOtherBackend one that serves
// another backend than the client's settings name.
var (
	errProtocolMismatch = errors.New("daemon speaks another protocol")
	errStaleBuild       = errors.New("daemon runs another build")
	errOtherBackend     = errors.New("daemon serves another backend")
)

// dial reads daemon.addr and connects (wire.Dial: the certificate
// pinned). A daemon of another protocol is stopped by its verified pid
// (ResolveSuspect: it has no certificate to prove) and one of another
// build (wire.Addr.Stale, or a BuildID that differs from this binary's
// when it runs from another file) or of another backend (Addr.Backend
// against the client's Config.Backend: a daemon started before the
// cluster settings changed) is asked to stop; they are reported as
// errProtocolMismatch, errStaleBuild or errOtherBackend, once per daemon. Every error means
// "no usable daemon at the moment".
func (d *dialer) dial(ctx context.Context) (*wire.Conn, error) {
	ad, err := wire.ReadAddr(d.home)
	if err != nil {
		return nil, err
	}
	if ad.Protocol != wire.Protocol {
		if d.once(ad.Token) {
			_, _ = ResolveSuspect(ctx, d.home, Logf(d.home))
		}
		return nil, fmt.Errorf("daemon pid %d: protocol %d, want %d: %w", ad.PID, ad.Protocol, wire.Protocol, errProtocolMismatch)
	}
	conn, err := wire.DialPatient(ctx, ad)
	if err != nil {
		return nil, err
	}
	why, cause := "", errStaleBuild
	if !d.anyBuild {
		why = staleBuild(ad)
	}
	if why == "" {
		why, cause = ad.BackendMismatch(d.backend), errOtherBackend
	}
	if why != "" {
		if d.once(ad.Token) {
			sctx, cancel := context.WithTimeout(ctx, pingTimeout)
			_, _ = conn.Call(sctx, MethodStop, nil)
			cancel()
			Logf(d.home)("daemon pid %d asked to stop: %s", ad.PID, why)
		}
		conn.Close()
		return nil, fmt.Errorf("daemon pid %d: %s: %w", ad.PID, why, cause)
	}
	return conn, nil
}

// once reports whether token is seen for the first time.
func (d *dialer) once(token string) bool {
	if d.stopped[token] {
		return false
	}
	if d.stopped == nil {
		d.stopped = map[string]bool{}
	}
	d.stopped[token] = true
	return true
}

// staleBuild says why the daemon of ad runs another build than this
// binary, or "": its binary was replaced (wire.Addr.Stale), or it runs
// from another file than this process and its BuildID differs.
func staleBuild(ad wire.Addr) string {
	if why := ad.Stale(); why != "" {
		return why
	}
	if ad.Build == "" {
		return ""
	}
	if exe, err := os.Executable(); err == nil && ad.Exe != "" && wire.FileStamp(exe) == ad.ExeStamp {
		return "" // the very file this process runs
	}
	if own := wire.BuildID(); own != ad.Build {
		return fmt.Sprintf("it runs build %s, this binary is %s", ad.Build, own)
	}
	return ""
}

// gone reports whether a Call error means the daemon is not there
// (rather than a handler error or a deadline).
func gone(err error) bool {
	return errors.Is(err, wire.ErrNoResponders) || errors.Is(err, wire.ErrConnClosed)
}

// callDaemon sends one request to the daemon of the home and returns its
// reply. When no daemon answers (no daemon.addr, a stale address, a
// listener that does not prove the daemon's certificate, whose address is
// retired, "no responders", a closed connection, another protocol or
// build) and spawn is true, it spawns a daemon detached (own session,
// stdio appended to <home>/daemon.log, OMNI_HOME=home), polls every 3 ms
// for up to wait until a daemon answers ping, and retries the request
// once. ctx's deadline bounds the whole call. When the daemon takes the
// whole deadline or refuses the token (wire.ErrUnhealthy), it starts a
// back-off and, if it was first, a replacement daemon (ReplaceEnv), and
// returns the error: the next hooks fail open at once.
//
// Errors: ErrNoDaemon (wrapped) when no daemon could be reached;
// wire.ErrUnhealthy (wrapped); *wire.RemoteError when the handler failed;
// ctx's error (wrapped); other wrapped transport errors; an unknown method.
func (c *Client) callDaemon(ctx context.Context, method string, req []byte, spawn bool, wait time.Duration) ([]byte, error) {
	if _, ok := lookup(method); !ok {
		return nil, fmt.Errorf("daemon %s: unknown method", method)
	}
	d := &dialer{home: c.cfg.Home, anyBuild: c.anyBuild, backend: c.cfg.Backend()}
	conn, err := d.dial(ctx)
	if err == nil {
		resp, cerr := conn.Call(ctx, wire.Subject(method), req)
		conn.Close()
		if cerr == nil || !gone(cerr) {
			if errors.Is(cerr, context.DeadlineExceeded) {
				cerr = fmt.Errorf("%w: %w", wire.ErrUnhealthy, cerr)
				c.backoff(cerr)
			}
			return resp, wrapCallErr(method, cerr)
		}
		// The connection was lost after the request went out: a method
		// that changes the store may have run, so it is not sent again
		// (here or in-process by do).
		if m, _ := lookup(method); m.once && errors.Is(cerr, wire.ErrConnClosed) {
			return nil, fmt.Errorf("daemon %s: the daemon stopped while answering, so %s may or may not have run (not sent again; 'omni doctor' shows the store's state): %w", method, method, cerr)
		}
		err = cerr
	}
	if errors.Is(err, wire.ErrUnhealthy) {
		c.backoff(err)
		return nil, fmt.Errorf("daemon %s: %w", method, err)
	}
	if errors.Is(err, wire.ErrUntrusted) {
		if ad, aerr := wire.ReadAddr(c.cfg.Home); aerr == nil && wire.RetireAddr(c.cfg.Home, ad.Token) {
			Logf(c.cfg.Home)("daemon address %s retired: %v", ad.Addr, err)
		}
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("daemon %s: %w", method, cerr)
	}
	if !spawn {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, ErrNoDaemon, err)
	}
	conn, err = c.spawn(ctx, d, wait)
	if err != nil {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, ErrNoDaemon, err)
	}
	defer conn.Close()
	resp, err := conn.Call(ctx, wire.Subject(method), req)
	if err != nil && gone(err) {
		return nil, fmt.Errorf("daemon %s: %w: %w", method, ErrNoDaemon, err)
	}
	return resp, wrapCallErr(method, err)
}

// backoff starts a back-off against the daemon of the address file after
// err and, when this client started it, a replacement daemon
// (ReplaceEnv=1), which stops the suspect if it is hung or refuses the
// token, or ends the back-off if it answers.
func (c *Client) backoff(err error) {
	home := c.cfg.Home
	pid := 0
	if ad, aerr := wire.ReadAddr(home); aerr == nil {
		pid = ad.PID
	}
	if !wire.StartBackoff(home, pid, err) {
		return
	}
	Logf(home)("daemon pid %d: %v: back-off for %s, starting a replacement", pid, err, wire.BackoffFor)
	if _, serr := c.startProcess(true); serr != nil {
		Logf(home)("daemon replacement: %v", serr)
	}
}

// wrapCallErr adds context to a transport error; a *RemoteError stays as is.
func wrapCallErr(method string, err error) error {
	var re *wire.RemoteError
	if err == nil || errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("daemon %s: %w", method, err)
}

// spawn starts a daemon for d.home and polls until one (ours or a
// concurrent client's) answers ping, for up to wait. When the process it
// started exits without a daemon answering (it lost the lock race, or an
// old daemon was still shutting down), it starts another once the store
// lock is free.
func (c *Client) spawn(ctx context.Context, d *dialer, wait time.Duration) (*wire.Conn, error) {
	deadline := time.Now().Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	exited, err := c.startProcess(false)
	if err != nil {
		return nil, err
	}
	var childGone bool
	var lastProbe time.Time
	timer := time.NewTimer(spawnPoll)
	defer timer.Stop()
	for {
		if conn, err := d.dial(ctx); err == nil {
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			_, perr := conn.Call(pctx, wire.Subject(MethodPing), nil)
			cancel()
			if perr == nil {
				return conn, nil
			}
			conn.Close()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.cfg.ClusterURL != "" {
			if err := ClusterDown(d.home); err != nil {
				return nil, err // the daemon could not reach its cluster
			}
		}
		if m, ok := jetstream.ReadMarker(storeDir(d.home)); ok {
			return nil, fmt.Errorf("%w: %s", ErrDamagedStore, m.Why)
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
		if childGone && time.Since(lastProbe) >= lockProbe {
			lastProbe = time.Now()
			if locked, err := jetstream.Locked(storeDir(d.home)); err == nil && !locked {
				if exited, err = c.startProcess(false); err != nil {
					return nil, err
				}
				childGone = false
			}
		}
		timer.Reset(spawnPoll)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// startProcess starts a detached daemon for the home: its own session
// (Setsid, so it outlives the caller's process group), stdin from
// /dev/null, stdout and stderr appended to <home>/daemon.log (moved to
// daemon.log.1 first when over 1 MiB), OMNI_HOME=home. The caller never
// waits for it; a goroutine reaps it and closes the returned channel when
// it exits. With replace, the daemon first judges the daemon a back-off
// names (ReplaceEnv=1, Config.Replace).
func (c *Client) startProcess(replace bool) (<-chan struct{}, error) {
	home := c.cfg.Home
	newCmd := c.SpawnCommand
	if newCmd == nil {
		newCmd = selfDaemon
	}
	cmd, err := newCmd(home)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	logPath := filepath.Join(home, "daemon.log")
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > logMax {
		_ = os.Rename(logPath, logPath+".1") // keep one previous log
	}
	logFile, err := AppendLog(logPath) // never through a link
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
	cmd.Env = append(cmd.Env, c.cfg.clusterEnv()...)
	if replace {
		cmd.Env = append(cmd.Env, ReplaceEnv+"=1")
	}
	if cmd.Dir == "" {
		cmd.Dir = "/" // do not pin the caller's working directory
	}
	platform.Detach(cmd)
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

// selfDaemon is `<this executable> daemon`.
func selfDaemon(string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("spawn daemon: %w", err)
	}
	return exec.Command(self, "daemon"), nil
}

// Stop asks the daemon of the home to stop (on the unversioned "stop"
// method, so a daemon of any protocol obeys) and waits up to wait until
// the store lock is released. It reports whether a daemon (or another
// holder of the store lock) was running. Errors: the lock still held after
// wait, or ctx's error.
func (c *Client) Stop(ctx context.Context, wait time.Duration) (bool, error) {
	home := c.cfg.Home
	deadline := time.Now().Add(wait)
	running, asked := false, false
	for {
		if !asked {
			if ad, err := wire.ReadAddr(home); err == nil && ad.Protocol != wire.Protocol {
				// No certificate to prove it: stopped by its verified pid.
				if v, _ := ResolveSuspect(ctx, home, Logf(home)); v == VerdictStopped {
					asked, running = true, true
				}
			} else if err == nil {
				conn, err := wire.Dial(ctx, ad, wire.DialTimeout)
				if err == nil {
					sctx, cancel := context.WithTimeout(ctx, pingTimeout)
					if _, err = conn.Call(sctx, MethodStop, nil); err == nil {
						asked, running = true, true
					}
					cancel()
					conn.Close()
				}
				if err != nil && !asked {
					// Hung, refusing its token, or not ours: judged and, when
					// it is our daemon, stopped by its pid.
					if v, _ := ResolveSuspect(ctx, home, Logf(home)); v == VerdictStopped || v == VerdictKilled {
						asked, running = true, true
					}
				}
			}
		}
		locked, err := jetstream.Locked(storeDir(home))
		if err != nil {
			return running, fmt.Errorf("stop daemon: %w", err)
		}
		if !locked {
			return running, nil
		}
		running = true
		if !time.Now().Before(deadline) {
			return true, fmt.Errorf("stop daemon: store %s still locked after %s", storeDir(home), wait)
		}
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("stop daemon: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
