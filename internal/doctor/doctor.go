// Package doctor holds the checks behind `omni doctor`: is omni installed,
// reachable and registered where each host reads it? Every check adds at
// most a few report fields and one line per problem, each line ending in
// its fix. The checks run in order over one shared state (checks); a new
// check is one function appended there.
package doctor

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/hostsetup"
)

// LogLines is how many recent hook errors a report shows.
const LogLines = 5

// wait bounds the checks of the daemon and the store (the health scan of
// an answering store aside): a hung daemon or a damaged store is reported
// within it.
const wait = 2 * time.Second

// healthWait bounds the health scan of an answering store, which reads
// every batch.
const healthWait = 2 * time.Minute

// Config is what the checks need from the command line.
type Config struct {
	// Setup locates the hosts' files and this binary (Setup.Omni).
	Setup hostsetup.Options
	// Home is $OMNI_HOME.
	Home string
	// Version is this build's full version ("0.9.0+<build>").
	Version string
	// Client talks to the daemon of Home (it may start one).
	Client func() *daemon.Client
	// WorkDir is the directory doctor runs in ("" when unknown): inside a
	// repository its project-scope registrations are checked too.
	WorkDir string
	// StopTimeout bounds Fix's wait for a daemon of another build to stop.
	StopTimeout time.Duration
}

// Report is everything omni doctor found (--json prints it as is).
type Report struct {
	// Version is this binary's version.
	Version string `json:"version"`
	// Binary is this binary; OnPath the omni found on $PATH ("" if none),
	// OnPathVersion its version when it is another file.
	Binary        string `json:"binary"`
	OnPath        string `json:"on_path"`
	OnPathVersion string `json:"on_path_version,omitempty"`
	// Home is $OMNI_HOME.
	Home string `json:"home"`
	// Store says whether the store opened and answered, Calls how many
	// calls it holds.
	Store string `json:"store"`
	Calls int    `json:"calls"`
	// Log is the stream's own state (sequences, size, batches lost to a
	// damaged file, a missing gc base); nil when the store did not answer.
	Log *daemon.HealthReply `json:"log,omitempty"`
	// Retained is the store's size on disk, its retained range and the
	// retention that keeps it (daemon.StoreInfo); nil when the store did
	// not answer.
	Retained *daemon.StoreInfo `json:"retained,omitempty"`
	// DiskFreeMiB is the space left on the file system of Home.
	DiskFreeMiB uint64 `json:"disk_free_mib"`
	// Daemon says whether the daemon answers, and its pid and version;
	// DaemonState is the probe behind it.
	Daemon      string              `json:"daemon"`
	DaemonState *daemon.DaemonState `json:"daemon_state,omitempty"`
	// Hosts has one row per supported host.
	Hosts []hostsetup.HostStatus `json:"hosts"`
	// HookErrors are the last hook errors of omni.log, newest last.
	HookErrors []string `json:"hook_errors,omitempty"`
	// Problems holds one line per problem, each ending in its fix.
	Problems []string `json:"problems"`
	// Fixed lists what --fix did.
	Fixed []string `json:"fixed,omitempty"`
}

// state is what the checks share while they run.
type state struct {
	cfg Config
	rep *Report
	// ctx bounds the daemon and store checks (wait).
	ctx context.Context
	// usable is false once a check found the store or the daemon unusable;
	// the checks that need them then skip.
	usable bool
}

// problem adds one problem line.
func (s *state) problem(format string, a ...any) {
	s.rep.Problems = append(s.rep.Problems, fmt.Sprintf(format, a...))
}

// checks are run in this order; each reads and extends the state.
var checks = []func(*state){
	checkBinary,
	checkHome,
	checkDaemon,
	checkStore,
	checkHealth,
	checkCluster,
	checkDisk,
	checkHosts,
	checkHookErrors,
}

// Run makes every check and returns the report; Problems is empty, not
// nil, when nothing is wrong. The daemon and store checks answer within
// about 2 s whatever state they are in; the health scan of an answering
// store may take up to 2 minutes.
func Run(cfg Config) Report {
	rep := Report{Version: cfg.Version, Binary: cfg.Setup.Omni, Home: cfg.Home, Problems: []string{}}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := &state{cfg: cfg, rep: &rep, ctx: ctx, usable: true}
	for _, c := range checks {
		c(s)
	}
	return rep
}

// Fix repairs what it can of rep (a daemon of another build is stopped,
// stale, incomplete or duplicated host registrations are rewritten as
// 'omni init' would) and says what it did, one line per repair.
func Fix(cfg Config, rep Report) []string {
	var did []string
	if ds := rep.DaemonState; ds != nil && ds.State != "answers" && ds.State != "none" && ds.State != "unsafe home" {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StopTimeout)
		if _, err := cfg.Client().Stop(ctx, cfg.StopTimeout); err == nil {
			did = append(did, fmt.Sprintf("stopped the daemon (pid %d, %s); the next hook starts this build", ds.PID, ds.State))
		}
		cancel()
	}
	for _, fix := range hostsetup.Fix(cfg.Setup, rep.Hosts, daemon.ProjectOf(cfg.WorkDir)) {
		if !slices.Contains(did, fix) {
			did = append(did, fix)
		}
	}
	return did
}

// sameFile reports whether two paths name one file (after symlinks).
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
