package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/hostsetup"
)

// checkBinary: the omni on $PATH is this binary, or one of this version.
func checkBinary(s *state) {
	o, rep := s.cfg.Setup, s.rep
	p, err := exec.LookPath("omni")
	if err != nil {
		s.problem("omni is not on $PATH: add %s to PATH, or run 'go install ./cmd/omni'", filepath.Dir(o.Omni))
		return
	}
	rep.OnPath = p
	if !sameFile(p, o.Omni) {
		rep.OnPathVersion = BinaryVersion(p)
		if rep.OnPathVersion != rep.Version {
			s.problem("the omni on $PATH (%s) is version %q, this one (%s) is %s: reinstall it or put %s first on PATH",
				p, rep.OnPathVersion, o.Omni, rep.Version, filepath.Dir(o.Omni))
		}
	}
}

// checkHome: the home is safe and readable, and the store is not marked
// damaged. The checks that can hang (a hung daemon, a damaged store) are
// bounded by wait.
func checkHome(s *state) {
	home, rep := s.cfg.Home, s.rep
	storeDir := filepath.Join(home, "store")
	if err := daemon.CheckHome(home); err != nil {
		s.usable = false
		rep.Store = "refused: " + err.Error()
		s.problem("%s (until then hooks pass output through unchanged)", err.Error())
	} else if _, err := os.ReadDir(home); err != nil && !os.IsNotExist(err) {
		s.usable = false
		rep.Store = "unreadable: " + err.Error()
		s.problem("%s cannot be read (%v): run 'chmod 700 %s' as its owner, or set OMNI_HOME to a directory of yours", home, err, home)
	}
	if m, ok := jetstream.ReadMarker(storeDir); ok && s.usable {
		s.usable = false
		rep.Store = "damaged: " + m.Why
		s.problem("the store was refused as damaged (%s; %s): hooks pass output through unchanged. Run 'omni gc --repair': it moves the damaged block aside, writes back every readable batch, and records what was lost",
			m.Why, filepath.Join(storeDir, jetstream.DamagedFile))
	}
}

// checkDaemon: the daemon answers and runs this build.
func checkDaemon(s *state) {
	rep := s.rep
	switch {
	case os.Getenv("OMNI_NO_DAEMON") != "":
		rep.Daemon = "off (OMNI_NO_DAEMON is set: every command opens the store itself)"
		return
	case !s.usable:
		rep.Daemon = "not checked"
		return
	}
	ds := daemon.Probe(s.ctx, s.cfg.Home, time.Second)
	rep.DaemonState = &ds
	switch ds.State {
	case "answers":
		rep.Daemon = fmt.Sprintf("pid %d, version %s, build %s, answers", ds.PID, ds.Version, ds.Build)
	case "none":
		rep.Daemon = "not running (the next hook starts it)"
	case "other build", "other backend":
		rep.Daemon = fmt.Sprintf("pid %d, build %s", ds.PID, ds.Build)
		s.problem("the daemon (pid %d) runs another %s: %s: %s", ds.PID, strings.TrimPrefix(ds.State, "other "), ds.Detail, ds.Fix)
	default:
		s.usable = false
		rep.Daemon = fmt.Sprintf("pid %d: %s", ds.PID, ds.State)
		s.problem("the daemon (pid %d) %s (%s), so hooks pass output through unchanged: %s", ds.PID, daemonStateText(ds.State), ds.Detail, ds.Fix)
	}
	if ds.Backoff != "" {
		rep.Daemon += "; hooks are failing open for a few seconds after: " + ds.Backoff
	}
}

// checkStore: the store opens and answers a stats request.
func checkStore(s *state) {
	if !s.usable {
		return
	}
	home, rep := s.cfg.Home, s.rep
	storeDir := filepath.Join(home, "store")
	st, err := s.cfg.Client().Stats(s.ctx, daemon.StatsRequest{})
	if err != nil {
		s.usable = false
		rep.Store = "error: " + err.Error()
		if errors.Is(err, daemon.ErrClusterDown) {
			rep.Store = "cluster unreachable"
			c := daemon.WithCluster(daemon.Config{Home: home}, os.LookupEnv)
			src := c.ClusterSource
			if src == "" {
				src = daemon.EnvNATSURL
			}
			s.problem("the cluster of %s (%s) does not answer: %v: hooks pass output through unchanged and record nothing until it does; check the servers, then 'omni daemon --stop'",
				src, jetstream.RedactURL(c.ClusterURL), err)
		} else {
			s.problem("the store under %s does not open: %v: check %s, then run 'omni daemon --stop'", storeDir, err, filepath.Join(home, "daemon.log"))
		}
		return
	}
	rep.Store, rep.Calls = "ok", st.Agent.Calls+st.Terminal.Calls
	if si, err := s.cfg.Client().Store(s.ctx); err == nil {
		rep.Retained = &si
		if si.Retention.Err != "" {
			s.problem("the retention setting does not parse (%s): nothing is removed until it is fixed", si.Retention.Err)
		}
		if p := si.LastPass; p != nil && p.Err != "" {
			s.problem("the last retention pass (%s) failed: %s; see %s", p.At.Format(time.RFC3339), p.Err, filepath.Join(home, "omni.log"))
		}
	}
	if ds := rep.DaemonState; ds != nil && ds.State == "none" {
		// The request started one: who answers now?
		if ds2 := daemon.Probe(s.ctx, home, time.Second); ds2.State == "answers" {
			rep.DaemonState = &ds2
			rep.Daemon = fmt.Sprintf("pid %d, version %s, build %s, answers", ds2.PID, ds2.Version, ds2.Build)
		}
	}
}

// checkHealth: the stream's own state, from a scan of every batch (its
// own time, healthWait): batches lost, unreadable or missing at either end.
func checkHealth(s *state) {
	if !s.usable {
		return
	}
	rep := s.rep
	storeDir := filepath.Join(s.cfg.Home, "store")
	hctx, hcancel := context.WithTimeout(context.Background(), healthWait)
	h, herr := s.cfg.Client().Health(hctx)
	hcancel()
	if herr != nil {
		return
	}
	rep.Log = &h
	if h.LostBatches > 0 {
		s.problem("the store dropped %s (%d B; seq %v) it found damaged when it recovered: the rest is readable and 'omni replay --verify' checks it; handles archived in those batches no longer retrieve",
			Batches(h.LostBatches), h.LostBytes, h.Lost)
	}
	if len(h.Unrecorded) > 0 {
		rep.Store = fmt.Sprintf("damaged: %s unreadable", Batches(len(h.Unrecorded)))
		s.problem("%s inside the log cannot be read (seq %s): a damaged, emptied or deleted store file. Hooks keep working; run 'omni gc --repair' to record them as lost (the readable rest is kept)",
			Batches(len(h.Unrecorded)), SeqList(h.Unrecorded, len(h.Unrecorded)))
	}
	if h.Checkpoint > 0 && h.Last < h.Checkpoint {
		rep.Store = "damaged: newest batches missing"
		s.problem("the log ends at seq %d but omni had recorded up to seq %d: the store's files under %s were deleted or emptied (omni gc never removes the newest batches). Restore them from a backup if you have one; otherwise run 'omni gc --repair' to record the loss",
			h.Last, h.Checkpoint, storeDir)
	}
	if h.BaseMissing != "" && h.GCBases == 0 {
		rep.Store = "damaged: oldest batches missing"
		s.problem("the log starts at seq %d, but omni gc never ran here (it leaves a base snapshot): batches 1..%d are gone from the store's files under %s (deleted or emptied). Restore them from a backup if you have one; otherwise run 'omni gc --repair' to start the retained range from an empty state",
			h.First, h.First-1, storeDir)
	} else if h.BaseMissing != "" {
		s.problem("the log starts at seq %d (omni gc removed older batches) but its base snapshot is unusable (%s): replay cannot rebuild the retained range; restore %s from a backup, or run 'omni gc --repair' to start it from an empty state",
			h.First, h.BaseMissing, daemon.BasePath(s.cfg.Home, h.First))
	}
}

// checkCluster: with a cluster backend, the cluster answers and every
// replica is current.
func checkCluster(s *state) {
	h := s.rep.Log
	if h == nil || h.Cluster.Backend != "cluster" {
		return
	}
	cs := h.Cluster
	if h.Unreachable != "" {
		s.rep.Store = "cluster unreachable"
		s.problem("the cluster %s does not answer (%s): hooks pass output through unchanged and record nothing until it does; check the servers and %s",
			cs.URL, h.Unreachable, daemon.EnvNATSURL)
	}
	for _, p := range cs.Peers {
		if p.Offline || !p.Current {
			s.problem("replica %s of stream %s is %s: the stream keeps going while a majority of its %d replicas answers; restart that server",
				p.Name, cs.Stream, peerState(p), cs.Replicas)
		}
	}
}

// checkDisk: the disk of the home has room (twice jetstream.MinFreeBytes).
func checkDisk(s *state) {
	home := s.cfg.Home
	free, err := jetstream.FreeBytes(home)
	if err != nil {
		return
	}
	s.rep.DiskFreeMiB = free >> 20
	if free < 2*jetstream.MinFreeBytes {
		s.problem("the disk holding %s has %d MiB free; under %d MiB omni stops recording and hooks pass output through unfolded: free space, or remove old events with 'omni gc --before 90d'",
			home, free>>20, jetstream.MinFreeBytes>>20)
	}
}

// checkHosts: every host's registration, user scope and, inside a
// repository, project scope.
func checkHosts(s *state) {
	o := s.cfg.Setup
	scopes := []hostsetup.Options{o}
	if s.cfg.WorkDir != "" {
		if p := daemon.ProjectOf(s.cfg.WorkDir); p != o.Home {
			po := o
			po.Project = p
			scopes = append(scopes, po)
		}
	}
	var registered bool
	s.rep.Hosts, registered = hostsetup.Check(scopes, s.problem)
	if !registered {
		s.problem("omni is not registered with any host: run 'omni init --claude' (or --codex, --gemini, --opencode, --copilot, --cline, --all)")
	}
}

// checkHookErrors: the last LogLines hook errors of omni.log.
func checkHookErrors(s *state) {
	s.rep.HookErrors = lastHookErrors(filepath.Join(s.cfg.Home, "omni.log"), LogLines)
}

// daemonStateText words a daemon.Probe state for a problem line.
func daemonStateText(state string) string {
	switch state {
	case "hung":
		return "does not answer"
	case "token refused":
		return "refuses the token in daemon.addr"
	case "untrusted":
		return "is not who daemon.addr says: the listener did not prove this home's daemon certificate"
	case "other protocol":
		return "speaks another protocol"
	case "unsafe home":
		return "cannot be trusted: the home is not safe"
	}
	return state
}

// BinaryVersion runs `bin --version` (for at most 3 s) and returns its last
// word, or "unknown".
func BinaryVersion(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "unknown"
	}
	return f[len(f)-1]
}
