package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/projections/stats"
)

// service answers the daemon methods over one open store. The daemon holds
// one; a process that could not reach a daemon builds one in-process under
// the same store lock (JETSTREAM.md §8.3).
type service struct {
	log    events.Log
	engine *hooks.Engine
	home   string
}

// retrieveReq is the "retrieve" request.
type retrieveReq struct {
	Handle  string `json:"handle"`
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
}

// replayReq is the "replay" request; replayResp its answer.
type replayReq struct {
	At     events.Seq `json:"at,omitempty"`
	Verify bool       `json:"verify,omitempty"`
}

type replayResp struct {
	Replay  *hooks.Replayed      `json:"replay,omitempty"`
	Summary *hooks.VerifySummary `json:"summary,omitempty"`
	Last    events.Seq           `json:"last"`
	First   events.Seq           `json:"first"`
}

// callResp is the "call" answer.
type callResp struct {
	Delivered string `json:"delivered"`
	Folds     int    `json:"folds"`
	Reason    string `json:"reason,omitempty"`
}

func newService(ctx context.Context, log events.Log, home string) (*service, error) {
	eng, err := newEngineFromCheckpoint(ctx, log, home, hooks.Options{ProjectOf: projectOf, Logf: homeLogf(home),
		KeepSecrets: os.Getenv("OMNI_KEEP_SECRETS") == "1", Base: baseLoader(home)})
	if err != nil {
		return nil, err
	}
	return &service{log: log, engine: eng, home: home}, nil
}

// base loads the base snapshot omni gc left in the service's home.
func (s *service) base() hooks.BaseLoader { return baseLoader(s.home) }

// handle serves one method. Errors become RemoteErrors for daemon clients.
func (s *service) handle(ctx context.Context, method string, req []byte) ([]byte, error) {
	switch method {
	case "hook":
		in := hooks.HookInput{}
		if len(req) > 0 {
			in.Passthrough = req[0]&1 != 0
			in.Stdin = req[1:]
		}
		return s.engine.Hook(ctx, in), nil
	case "call":
		var in hooks.CallInput
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("call request: %w", err)
		}
		res, err := s.engine.Call(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(callResp{Delivered: res.Delivered, Folds: len(res.Folds), Reason: res.Reason})
	case "retrieve":
		var in retrieveReq
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("retrieve request: %w", err)
		}
		b, err := s.engine.Retrieve(ctx, in.Handle, events.Reader{Session: in.Session, Agent: in.Agent})
		if errors.Is(err, hooks.ErrUnknownHandle) {
			if first, ferr := s.log.First(ctx); ferr == nil && first > 1 {
				return nil, fmt.Errorf("%w (the log starts at seq %d: omni gc removed the batches before it, which may have named it)", err, first)
			}
		}
		return b, err
	case "replay":
		var in replayReq
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("replay request: %w", err)
		}
		var out replayResp
		out.First, _ = s.log.First(ctx)
		out.Last, _ = s.log.Last(ctx)
		if in.Verify {
			sum, err := hooks.Verify(ctx, s.log, s.base(), nil)
			if err != nil {
				return nil, err
			}
			out.Summary = &sum
		} else {
			if in.At == 0 || in.At > out.Last {
				return nil, fmt.Errorf("sequence %d is not in the log (%d..%d)", in.At, max(out.First, 1), out.Last)
			}
			if in.At < out.First {
				return nil, fmt.Errorf("sequence %d is before the retained range (%d..%d)", in.At, out.First, out.Last)
			}
			r, err := hooks.Replay(ctx, s.log, in.At, s.base())
			if err != nil {
				return nil, err
			}
			out.Replay = &r
		}
		return json.Marshal(out)
	case "gc":
		return s.gc(ctx, req)
	case "health":
		return s.health(ctx)
	case "repair":
		return s.repair(ctx)
	case "recent":
		var in struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(req, &in)
		if in.N <= 0 || in.N > 1000 {
			in.N = 20
		}
		rs, err := hooks.RecentCalls(ctx, s.log, in.N)
		if err != nil {
			return nil, err
		}
		return json.Marshal(rs)
	case "stats":
		var in statsReq
		if len(req) > 0 {
			if err := json.Unmarshal(req, &in); err != nil {
				return nil, fmt.Errorf("stats request: %w", err)
			}
		}
		if !in.Since.IsZero() {
			rep, err := statsSince(ctx, s.log, in.Since)
			if err != nil {
				return nil, err
			}
			return json.Marshal(rep)
		}
		var t any
		s.engine.StatsView(func(st *stats.Stats) { t = statsJSON(st) })
		return json.Marshal(t)
	case "explain":
		return s.explainMethod(ctx, req)
	case "diff":
		return s.diffMethod(ctx, req)
	case "goal":
		return s.goalMethod(ctx, req)
	case "session":
		return s.sessionMethod(ctx, req)
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// openLocal opens the store of home in-process, waiting up to wait for its
// lock, and returns a service over it and a close func.
func openLocal(ctx context.Context, home string, wait time.Duration) (*service, func() error, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", home, err)
	}
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: filepath.Join(home, "store"), LockWait: wait})
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	svc, err := newService(ctx, st, home)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, st.Close, nil
}

// callOrLocal sends one request to the daemon of home (spawning it if
// needed), or, when no daemon can be reached or OMNI_NO_DAEMON is set, runs
// it in-process under the store lock. While a long command has marked the
// store busy (omni bench --home), it fails at once with errStoreBusy.
func callOrLocal(ctx context.Context, home, method string, req []byte) ([]byte, error) {
	if who, busy := storeBusy(home); busy {
		return nil, fmt.Errorf("%w: %s holds it", errStoreBusy, who)
	}
	if os.Getenv("OMNI_NO_DAEMON") == "" {
		spawn := true
		for {
			wait := 3 * time.Second
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				wait = time.Until(dl)
			}
			out, err := callDaemon(ctx, home, method, req, spawn, wait)
			if err == nil || !errors.Is(err, errNoDaemon) {
				return out, err
			}
			// No daemon answered. If one holds the store lock it is still
			// starting (folding a large log): keep waiting for it rather than
			// queueing on its lock.
			locked, _ := jetstream.Locked(filepath.Join(home, "store"))
			if !locked {
				homeLogf(home)("daemon unreachable, running %s in-process: %v", method, err)
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
	wait := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		wait = time.Until(dl)
	}
	svc, closeFn, err := openLocal(ctx, home, wait)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return svc.handle(ctx, method, req)
}

var logMu sync.Mutex

// errStoreBusy: a long command (omni bench --home) holds the store, so a
// hook fails open at once instead of waiting out its deadline.
var errStoreBusy = errors.New("the store is busy")

// busyPath is the file a long command that holds the store writes, so
// other commands know not to wait for it.
func busyPath(home string) string { return filepath.Join(home, "store", "busy.json") }

// markBusy records that this process (what) holds home's store for a long
// time; the returned func removes the record.
func markBusy(home, what string) func() {
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "what": what})
	if writeFileAtomic(busyPath(home), b) != nil {
		return func() {}
	}
	return func() { _ = os.Remove(busyPath(home)) }
}

// storeBusy reports a live process that marked home's store busy, as
// "omni bench (pid N)".
func storeBusy(home string) (string, bool) {
	b, err := os.ReadFile(busyPath(home))
	if err != nil {
		return "", false
	}
	var m struct {
		PID  int    `json:"pid"`
		What string `json:"what"`
	}
	if json.Unmarshal(b, &m) != nil || m.PID <= 0 || m.PID == os.Getpid() {
		return "", false
	}
	if err := syscall.Kill(m.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return "", false // it died without clearing the mark
	}
	return fmt.Sprintf("%s (pid %d)", m.What, m.PID), true
}

// homeLogf returns a Logf appending one timestamped line per call to
// <home>/omni.log. Write errors are ignored: logging must never break a hook.
func homeLogf(home string) func(string, ...any) {
	return func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		_ = os.MkdirAll(home, 0o700)
		f, err := os.OpenFile(filepath.Join(home, "omni.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%s pid=%d %s\n", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid(), fmt.Sprintf(format, args...))
	}
}

// projectOf returns the repository top level of dir (the nearest ancestor
// holding .git, a directory or a worktree file), else dir itself.
func projectOf(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir)
		}
		d = parent
	}
}

func init() {
	daemonHandlerFactory = func(ctx context.Context, log events.Log) (rpcHandler, func() error, error) {
		home := omniHome()
		svc, err := newService(ctx, log, home)
		if err != nil {
			return nil, nil, err
		}
		cp := newCheckpointer(home, svc.engine, homeLogf(home))
		cp.onWrite = setDaemonMemoryLimit
		setDaemonMemoryLimit()
		handle := func(ctx context.Context, method string, req []byte) ([]byte, error) {
			defer cp.maybe()
			return svc.handle(ctx, method, req)
		}
		return handle, cp.close, nil
	}
}

// daemonMemorySlack is the heap the daemon may grow by above its live
// state before the Go collector works harder (a soft limit, not a cap):
// room for one large hook payload. Measured on a 15 MiB Bash output
// (2026-11-29): peak RSS 193 MB without a limit, 133 MB with a 100 MiB one,
// for 14% more time on that call only; calls far below the limit are
// unaffected.
const daemonMemorySlack = 64 << 20

// setDaemonMemoryLimit sets the daemon's soft memory limit to its live heap
// (measured now) plus daemonMemorySlack, at least 96 MiB, unless the user
// set GOMEMLIMIT. The daemon calls it at start and after every checkpoint,
// as the projections grow.
func setDaemonMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(max(96<<20, int64(ms.HeapAlloc)+daemonMemorySlack))
}
