package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/eventlog"
	"github.com/omnictx/omni/internal/tokens"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// Config is what the service, the daemon and the client of one home share.
type Config struct {
	// Home is $OMNI_HOME: the store (Home/store), daemon.addr, omni.log.
	Home string
	// Version is the omni version of this binary: written to daemon.addr
	// and to the header of the checkpoint file.
	Version string
	// KeepSecrets keeps raw inputs that hold credentials in the log
	// (OMNI_KEEP_SECRETS=1).
	KeepSecrets bool
	// InProcess never reaches or spawns a daemon: every request opens the
	// store in-process (OMNI_NO_DAEMON).
	InProcess bool
	// Replace makes Run first judge the daemon that daemon.addr names
	// (ResolveSuspect: a hung one is killed, one that refuses its token
	// stopped, a foreign listener's address retired) and then wait up to
	// 3 s for the store lock (ReplaceEnv=1 in a spawned daemon).
	Replace bool
	// ClusterURL, when set (OMNI_NATS_URL: one or more server URLs,
	// comma-separated), puts the log on that NATS deployment's JetStream
	// instead of the embedded store under Home/store; Cluster says how to
	// reach it (OMNI_NATS_CREDS, OMNI_NATS_CA, OMNI_NATS_CERT,
	// OMNI_NATS_KEY, OMNI_NATS_STREAM, OMNI_NATS_REPLICAS). The lock,
	// checkpoints and daemon.addr stay in Home.
	ClusterURL string
	Cluster    jetstream.Remote
	// ClusterSource says where the cluster settings came from:
	// "environment", the home's ClusterFile, or "" (WithCluster).
	ClusterSource string
	// ClusterErr is why the cluster settings could not be read (a
	// ClusterFile that does not parse); a Client's requests and Run fail
	// with it.
	ClusterErr error
	// Retention is how long the daemon keeps batches (OMNI_RETENTION,
	// WithRetention; the zero value keeps everything).
	Retention Retention
}

// storeOptions returns the options that open cfg's store: the embedded one
// under Home/store, or the cluster's stream with the lock still in
// Home/store.
func (cfg Config) storeOptions() jetstream.Options {
	r := cfg.Cluster
	if cfg.ClusterURL != "" {
		// On a team's stream this machine publishes on its own subject,
		// and a batch published on one machine's subject that names
		// another is rejected and reported in omni.log.
		r.Machine, _ = Identity(cfg.Home)
		logf := Logf(cfg.Home)
		r.OnReject = func(seq events.Seq, subject, machine string) {
			logf("rejected batch %d of the team stream: published on %s, its events name machine %q (forged origin)",
				seq, subject, events.Printable(machine))
		}
	}
	return jetstream.Options{Dir: storeDir(cfg.Home), URL: cfg.ClusterURL, Remote: r}
}

// Service answers the daemon's methods over one open store. The daemon
// holds one; a process that could not reach a daemon builds one in-process
// under the same store lock (Client). Its methods may be called
// concurrently: the Engine does its own locking.
type Service struct {
	log     events.Log
	engine  *hooks.Engine
	home    string
	version string // Config.Version: the checkpoints it writes name it
	// projectOf names a directory's project as the Engine's events do
	// (ProjectOf, or TeamProjectOf on a cluster).
	projectOf func(string) string
	// checkpoint is the checkpoint file of the home's backend.
	checkpoint string
	// retention is Config.Retention: what Retain applies and Store and
	// the messages about removed batches name.
	retention Retention
}

// NewService builds the service of cfg.Home over log: the Engine starts
// from the home's checkpoint (if this build wrote it and the log still
// holds its batch) and folds the log's tail. Its events carry the
// machine and user of Identity; with cfg.ClusterURL the log is shared
// (hooks.Options.Shared) and projects are named by TeamProjectOf.
// Errors: the Engine's (a log that cannot be read).
func NewService(ctx context.Context, log events.Log, cfg Config) (*Service, error) {
	opt := hooks.Options{ProjectOf: ProjectOf, Logf: Logf(cfg.Home),
		KeepSecrets: cfg.KeepSecrets, Base: baseLoader(cfg.Home)}
	opt.Machine, opt.User = Identity(cfg.Home)
	if !cfg.InProcess || os.Getenv(TokenizerEnv) != "" {
		// A daemon counts tokens for the reports; a process that opens
		// the store for one command (OMNI_NO_DAEMON) only when asked,
		// since loading the encoding costs about 0.1 s.
		opt.Tokens = tokenCounter(cfg.Home)
	}
	if cfg.ClusterURL != "" {
		// Other machines append to the log: decisions append only after
		// the batch they were decided at, and a project is its
		// repository's remote, the same in every clone.
		opt.Shared, opt.ProjectOf = true, TeamProjectOf
	}
	eng, err := newEngineFromCheckpoint(ctx, log, cfg, opt)
	if err != nil {
		return nil, err
	}
	return &Service{log: log, engine: eng, home: cfg.Home, version: cfg.Version, projectOf: opt.ProjectOf,
		checkpoint: checkpointFile(cfg.Home, cfg.Backend()), retention: cfg.Retention}, nil
}

// ServiceOf returns a service over an Engine already built on log (tests
// and tools); home is where base snapshots are read ("" for none).
func ServiceOf(log events.Log, eng *hooks.Engine, home string) *Service {
	return &Service{log: log, engine: eng, home: home, projectOf: ProjectOf, checkpoint: checkpointPath(home)}
}

// scopeProject returns the project of dir ("" for an empty dir: no scope).
func (s *Service) scopeProject(dir string) string {
	if dir == "" {
		return ""
	}
	if s.projectOf == nil {
		return ProjectOf(dir)
	}
	return s.projectOf(dir)
}

// Log returns the log the service answers from.
func (s *Service) Log() events.Log { return s.log }

// Engine returns the service's Engine.
func (s *Service) Engine() *hooks.Engine { return s.engine }

// base loads the base snapshot omni gc left in the service's home.
func (s *Service) base() hooks.BaseLoader { return baseLoader(s.home) }

// Handle serves one method by name from its wire request (see the Method
// constants) and returns the wire reply. Errors: an unknown method, a
// malformed request, or the method's own.
func (s *Service) Handle(ctx context.Context, name string, req []byte) ([]byte, error) {
	m, ok := lookup(name)
	if !ok || m.serve == nil {
		return nil, fmt.Errorf("unknown method %q", name)
	}
	return m.serve(s, ctx, req)
}

// OpenLocal opens the store of cfg.Home in-process, waiting up to wait for
// its lock, and returns a service over it and a close func. Errors:
// jetstream.ErrLocked (wrapped) when the lock stays held, the home or the
// store cannot be created, or NewService's.
func OpenLocal(ctx context.Context, cfg Config, wait time.Duration) (*Service, func() error, error) {
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", cfg.Home, err)
	}
	o := cfg.storeOptions()
	o.LockWait = wait
	st, err := jetstream.Open(ctx, o)
	if err != nil {
		logStuck(cfg.Home, err)
		if cfg.ClusterURL != "" && !errors.Is(err, jetstream.ErrLocked) {
			markClusterDown(cfg.Home, err)
		}
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	if cfg.ClusterURL != "" {
		clearClusterDown(cfg.Home)
	}
	svc, err := NewService(ctx, st, cfg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, st.Close, nil
}

// storeStopWait is how long OpenStore waits for a daemon that holds the
// store to stop and release its lock.
const storeStopWait = 10 * time.Second

// OpenStore opens the store of cfg.Home for a process that needs it alone
// (omni bench): a daemon that holds it is asked to stop first, and its lock
// waited for up to 10 s. It returns the log and the function that closes
// it. Errors: jetstream.ErrLocked (wrapped) when the lock stays held, the
// store's.
func OpenStore(ctx context.Context, cfg Config) (events.Log, func() error, error) {
	dir := filepath.Join(cfg.Home, "store")
	st, err := jetstream.Open(ctx, jetstream.Options{Dir: dir, LockWait: 0})
	if errors.Is(err, jetstream.ErrLocked) {
		if _, serr := NewClient(cfg).Stop(ctx, storeStopWait); serr == nil {
			st, err = jetstream.Open(ctx, jetstream.Options{Dir: dir, LockWait: storeStopWait})
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}

// logStuck writes a stuck store start (jetstream.ErrStartStuck) to
// omni.log: the embedded server's goroutine cannot be stopped, so the
// command that opened the store ends with the error, and the log keeps why.
func logStuck(home string, err error) {
	if errors.Is(err, jetstream.ErrStartStuck) {
		Logf(home)("store start: %v", err)
	}
}

// Hook answers one hook request (wire.MethodHook: the flags byte, then the
// payload) with what the hook prints; it never fails (hooks.Engine.Hook).
//
// On a cluster that does not answer now (jetstream.Store.Unavailable: the
// connection is down, or an operation failed within the back-off) it
// answers nothing at once, so the host keeps its output and nothing is
// recorded: no marker can name bytes the cluster did not store.
func (s *Service) Hook(ctx context.Context, req []byte) []byte {
	if st, ok := s.log.(*jetstream.Store); ok && st.Unavailable() != nil {
		return nil
	}
	in := hooks.HookInput{}
	if len(req) > 0 {
		in.Passthrough = req[0]&HookPassthrough != 0
		in.Stdin = req[1:]
	}
	return s.engine.Hook(ctx, in)
}

// Call runs one exec, pipe or distill output through the Engine.
func (s *Service) Call(ctx context.Context, in hooks.CallInput) (CallReply, error) {
	if st, ok := s.log.(*jetstream.Store); ok {
		if err := st.Unavailable(); err != nil {
			return CallReply{}, err
		}
	}
	res, err := s.engine.Call(ctx, in)
	if err != nil {
		return CallReply{}, err
	}
	return CallReply{Delivered: res.Delivered, Folds: len(res.Folds), Reason: res.Reason}, nil
}

// Retrieve returns the archived bytes of a handle and records the
// retrieval. On a shared stream a handle this machine has not folded yet
// is looked up again after folding the stream to its end. Errors:
// ErrUnknownHandle (saying where the log starts when omni gc trimmed it),
// ErrClusterDown (wrapped) for a handle not folded here while the cluster
// does not answer, ErrDamaged, ErrBadHandle, ErrReservedHandle, the log's.
func (s *Service) Retrieve(ctx context.Context, in RetrieveRequest) ([]byte, error) {
	reader := events.Reader{Session: in.Session, Agent: in.Agent}
	project := s.scopeProject(in.Dir)
	b, err := s.engine.RetrieveIn(ctx, in.Handle, reader, project)
	if st, ok := s.log.(*jetstream.Store); ok && st.Remote() && errors.Is(err, hooks.ErrUnknownHandle) {
		// Another machine may have archived it after the newest batch this
		// one folded: fold the shared stream to its end and look again.
		// With the cluster gone, "unknown" would be a guess.
		cerr := st.Unavailable()
		if cerr == nil {
			if cerr = s.engine.CatchUp(ctx); cerr != nil && st.Unavailable() != nil {
				cerr = st.Unavailable()
			}
		}
		if cerr != nil {
			return nil, fmt.Errorf("handle %s is not among the batches this machine folded, and the shared stream cannot be read now: %w", in.Handle, cerr)
		}
		b, err = s.engine.RetrieveIn(ctx, in.Handle, reader, project)
	}
	if errors.Is(err, hooks.ErrUnknownHandle) && !errors.Is(err, hooks.ErrForgotten) {
		if first, ferr := s.log.First(ctx); ferr == nil && first > 1 {
			return nil, fmt.Errorf("%w (the log starts at seq %d, which may have named it: %s)", err, first, s.beforeRangeText())
		}
	}
	return b, err
}

// Replay reruns the invocation at in.At, or with in.Verify every one.
// Errors: ErrNotInLog for a sequence outside the retained range, ErrNoBase,
// hooks.Replay's and hooks.Verify's.
func (s *Service) Replay(ctx context.Context, in ReplayRequest) (ReplayReply, error) {
	var out ReplayReply
	out.First, _ = s.log.First(ctx)
	out.Last, _ = s.log.Last(ctx)
	if in.Verify {
		sum, err := hooks.Verify(ctx, s.log, s.base(), nil)
		if err != nil {
			return ReplayReply{}, err
		}
		out.Summary = &sum
		return out, nil
	}
	if in.At == 0 || in.At > out.Last {
		return ReplayReply{}, &kindError{kind: ErrNotInLog,
			msg: fmt.Sprintf("sequence %d is not in the log (%d..%d)", in.At, max(out.First, 1), out.Last)}
	}
	if in.At < out.First {
		return ReplayReply{}, &kindError{kind: ErrNotInLog,
			msg: fmt.Sprintf("sequence %d is before the retained range (%d..%d): %s", in.At, out.First, out.Last, s.beforeRangeText())}
	}
	r, err := hooks.Replay(ctx, s.log, in.At, s.base())
	if err != nil {
		return ReplayReply{}, err
	}
	out.Replay = &r
	return out, nil
}

// ReadLog returns one page of the events in.Query selects, from in.From
// on (eventlog.ReadPage, at most eventlog.PageBytes). Errors: the log's.
func (s *Service) ReadLog(ctx context.Context, in LogRequest) (eventlog.Page, error) {
	return eventlog.ReadPage(ctx, s.log, in.Query, in.From, eventlog.PageBytes)
}

// Recent returns the newest in.N calls (outside 1..1000: 20), newest first.
func (s *Service) Recent(ctx context.Context, in RecentRequest) ([]hooks.Recent, error) {
	if in.N <= 0 || in.N > 1000 {
		in.N = 20
	}
	project := s.scopeProject(in.Dir)
	if project == "" && in.Session == "" {
		return hooks.RecentCalls(ctx, s.log, in.N)
	}
	return hooks.RecentCallsWhere(ctx, s.log, in.N, func(ev events.Event) bool {
		return (project == "" || ev.Project == project) && (in.Session == "" || ev.Session == in.Session)
	})
}

// Stats returns the stats report: the Engine's projection, or with
// in.Since a fresh fold of the whole log that ignores earlier events.
func (s *Service) Stats(ctx context.Context, in StatsRequest) (stats.Report, error) {
	if !in.Since.IsZero() {
		st := stats.NewSince(in.Since)
		if _, err := replay.Fold(ctx, s.log, 0, 0, st); err != nil {
			return stats.Report{}, fmt.Errorf("fold log: %w", err)
		}
		return st.Report(), nil
	}
	var rep stats.Report
	s.engine.StatsView(func(st *stats.Stats) { rep = st.Report() })
	return rep, nil
}

// Explain says why the folds of a handle or an invocation happened.
// Errors: ErrNoFold, ErrBadTarget, the log's.
func (s *Service) Explain(ctx context.Context, in ExplainRequest) (hooks.Explanation, error) {
	return hooks.Explain(ctx, s.log, in.Target)
}

// Diff reruns one invocation and returns its raw and delivered texts.
// Errors: ErrNoDelivery, ErrNoBase, the log's.
func (s *Service) Diff(ctx context.Context, in DiffRequest) (hooks.DiffResult, error) {
	return hooks.Diff(ctx, s.log, in.Seq, s.base())
}

// TokenizerEnv names the environment variable that picks the encoding the
// daemon counts tokens with for the reports: a family of tokens.Families
// ("o200k", the default, or "cl100k"), or "none" to count none. Under
// OMNI_NO_DAEMON tokens are counted only when it is set.
const TokenizerEnv = "OMNI_TOKENIZER"

// tokenCounter returns the daemon's token counter by TokenizerEnv (nil for
// "none"); an unknown name is logged and the default used.
func tokenCounter(home string) hooks.TokenCounter {
	name := os.Getenv(TokenizerEnv)
	if name == "none" {
		return nil
	}
	c, err := tokens.New(name)
	if err != nil {
		Logf(home)("daemon: %s: %v; counting with %s", TokenizerEnv, err, tokens.DefaultFamily)
		if c, err = tokens.New(""); err != nil {
			return nil
		}
	}
	return c
}
