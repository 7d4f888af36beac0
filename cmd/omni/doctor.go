package main

// omni doctor: is omni installed, reachable and registered where each host
// reads it? One line per problem, each saying how to fix it.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/hostsetup"
)

// doctorLogLines is how many recent hook errors doctor shows.
const doctorLogLines = 5

// doctorReport is everything omni doctor found (--json prints it as is).
type doctorReport struct {
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

func newDoctorCmd(s streams) *cobra.Command {
	var fix, asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--fix] [--json]",
		Short: "Check the binary, the store, the daemon and every host's registration",
		Long: `Checks, and prints one line each:

  - the omni binary on $PATH and its version (hosts run it by path; an older
    omni first on $PATH is a problem);
  - the store under $OMNI_HOME opens under its lock and the daemon answers
    (unless OMNI_NO_DAEMON is set), and runs this version;
  - for Claude Code, Codex CLI, Gemini CLI and OpenCode: whether omni's hooks
    (or plugin) and MCP server are registered where the host reads them
    (user and project files), complete, not duplicated, and naming a binary
    that exists; and the tier that gives: Full (the host applies omni's
    rewrite), Full-text-only (Codex: the rewrite arrives as plain text),
    Plugin (OpenCode, through the plugin shim), MCP-only (retrieve and
    explain only, nothing shortened);
  - Codex: whether Codex will run omni's hooks or skip them silently (not
    approved, changed since approved, turned off, or in an untrusted project);
  - the last hook errors in $OMNI_HOME/omni.log.

Every problem is one line saying how to fix it. --fix re-registers hosts
whose registration is stale, incomplete or duplicated (as 'omni init' would)
and stops a daemon of another version; then it checks again.

Exit codes: 0 nothing wrong; 1 at least one problem (listed); 2 usage error.`,
		Example: `  omni doctor
  omni doctor --fix
  omni doctor --json | jq .hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := hostsetup.DefaultOptions()
			if err != nil {
				return failErr(errProblems, "omni doctor: "+err.Error())
			}
			rep := runDoctor(o)
			if fix && len(rep.Problems) > 0 {
				fixed := doctorFix(o, rep)
				rep = runDoctor(o)
				rep.Fixed = fixed
			}
			if asJSON {
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(s.Out, string(b))
			} else {
				printDoctor(s.Out, rep)
			}
			if len(rep.Problems) > 0 {
				return failErr(errProblems, "")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fix, "fix", false, "repair what can be repaired (stale registrations, a daemon of another version), then check again")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// runDoctor makes every check.
func runDoctor(o hostsetup.Options) doctorReport {
	home := omniHome()
	rep := doctorReport{Version: fullVersion(), Binary: o.Omni, Home: home, Problems: []string{}}
	problem := func(format string, a ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, a...)) }

	// The binary.
	if p, err := exec.LookPath("omni"); err != nil {
		problem("omni is not on $PATH: add %s to PATH, or run 'go install ./cmd/omni'", filepath.Dir(o.Omni))
	} else {
		rep.OnPath = p
		if !sameFile(p, o.Omni) {
			rep.OnPathVersion = binaryVersion(p)
			if rep.OnPathVersion != rep.Version {
				problem("the omni on $PATH (%s) is version %q, this one (%s) is %s: reinstall it or put %s first on PATH",
					p, rep.OnPathVersion, o.Omni, rep.Version, filepath.Dir(o.Omni))
			}
		}
	}

	// The home, the daemon and the store: the checks that can hang (a
	// hung daemon, a damaged store) are bounded by doctorWait, so doctor
	// answers within about 2 s whatever state they are in; the health
	// scan of an answering store gets its own time.
	storeDir := filepath.Join(home, "store")
	usable := true
	if err := daemon.CheckHome(home); err != nil {
		usable = false
		rep.Store = "refused: " + err.Error()
		problem("%s (until then hooks pass output through unchanged)", err.Error())
	} else if _, err := os.ReadDir(home); err != nil && !os.IsNotExist(err) {
		usable = false
		rep.Store = "unreadable: " + err.Error()
		problem("%s cannot be read (%v): run 'chmod 700 %s' as its owner, or set OMNI_HOME to a directory of yours", home, err, home)
	}
	if m, ok := jetstream.ReadMarker(storeDir); ok && usable {
		usable = false
		rep.Store = "damaged: " + m.Why
		problem("the store was refused as damaged (%s; %s): hooks pass output through unchanged. Run 'omni gc --repair': it moves the damaged block aside, writes back every readable batch, and records what was lost",
			m.Why, filepath.Join(storeDir, jetstream.DamagedFile))
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorWait)
	defer cancel()
	switch {
	case os.Getenv("OMNI_NO_DAEMON") != "":
		rep.Daemon = "off (OMNI_NO_DAEMON is set: every command opens the store itself)"
	case !usable:
		rep.Daemon = "not checked"
	default:
		ds := daemon.Probe(ctx, home, time.Second)
		rep.DaemonState = &ds
		switch ds.State {
		case "answers":
			rep.Daemon = fmt.Sprintf("pid %d, version %s, build %s, answers", ds.PID, ds.Version, ds.Build)
		case "none":
			rep.Daemon = "not running (the next hook starts it)"
		case "other build":
			rep.Daemon = fmt.Sprintf("pid %d, build %s", ds.PID, ds.Build)
			problem("the daemon (pid %d) runs another build: %s: %s", ds.PID, ds.Detail, ds.Fix)
		default:
			usable = false
			rep.Daemon = fmt.Sprintf("pid %d: %s", ds.PID, ds.State)
			problem("the daemon (pid %d) %s (%s), so hooks pass output through unchanged: %s", ds.PID, daemonStateText(ds.State), ds.Detail, ds.Fix)
		}
		if ds.Backoff != "" {
			rep.Daemon += "; hooks are failing open for a few seconds after: " + ds.Backoff
		}
	}
	if usable {
		client := newClient()
		st, err := client.Stats(ctx, daemon.StatsRequest{})
		if err != nil {
			usable = false
			rep.Store = "error: " + err.Error()
			if errors.Is(err, daemon.ErrClusterDown) {
				rep.Store = "cluster unreachable"
				problem("the cluster of %s (%s) does not answer: %v: hooks pass output through unchanged and record nothing until it does; check the servers, then 'omni daemon --stop'",
					daemon.EnvNATSURL, jetstream.RedactURL(os.Getenv(daemon.EnvNATSURL)), err)
			} else {
				problem("the store under %s does not open: %v: check %s, then run 'omni daemon --stop'", storeDir, err, filepath.Join(home, "daemon.log"))
			}
		} else {
			rep.Store, rep.Calls = "ok", st.Agent.Calls+st.Terminal.Calls
			if ds := rep.DaemonState; ds != nil && ds.State == "none" {
				// The request started one: who answers now?
				if ds2 := daemon.Probe(ctx, home, time.Second); ds2.State == "answers" {
					rep.DaemonState = &ds2
					rep.Daemon = fmt.Sprintf("pid %d, version %s, build %s, answers", ds2.PID, ds2.Version, ds2.Build)
				}
			}
		}
	}
	if usable {
		// A health check reads every batch: give it its own time.
		hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		h, herr := newClient().Health(hctx)
		hcancel()
		if herr == nil {
			rep.Log = &h
			if h.LostBatches > 0 {
				problem("the store dropped %s (%d B; seq %v) it found damaged when it recovered: the rest is readable and 'omni replay --verify' checks it; handles archived in those batches no longer retrieve",
					batches(h.LostBatches), h.LostBytes, h.Lost)
			}
			if len(h.Unrecorded) > 0 {
				rep.Store = fmt.Sprintf("damaged: %s unreadable", batches(len(h.Unrecorded)))
				problem("%s inside the log cannot be read (seq %s): a damaged, emptied or deleted store file. Hooks keep working; run 'omni gc --repair' to record them as lost (the readable rest is kept)",
					batches(len(h.Unrecorded)), seqList(h.Unrecorded, len(h.Unrecorded)))
			}
			if h.Checkpoint > 0 && h.Last < h.Checkpoint {
				rep.Store = "damaged: newest batches missing"
				problem("the log ends at seq %d but omni had recorded up to seq %d: the store's files under %s were deleted or emptied (omni gc never removes the newest batches). Restore them from a backup if you have one; otherwise run 'omni gc --repair' to record the loss",
					h.Last, h.Checkpoint, storeDir)
			}
			if h.BaseMissing != "" && h.GCBases == 0 {
				rep.Store = "damaged: oldest batches missing"
				problem("the log starts at seq %d, but omni gc never ran here (it leaves a base snapshot): batches 1..%d are gone from the store's files under %s (deleted or emptied). Restore them from a backup if you have one; otherwise run 'omni gc --repair' to start the retained range from an empty state",
					h.First, h.First-1, storeDir)
			} else if h.BaseMissing != "" {
				problem("the log starts at seq %d (omni gc removed older batches) but its base snapshot is unusable (%s): replay cannot rebuild the retained range; restore %s from a backup, or run 'omni gc --repair' to start it from an empty state",
					h.First, h.BaseMissing, daemon.BasePath(home, h.First))
			}
		}
	}
	if h := rep.Log; h != nil && h.Cluster.Backend == "cluster" {
		cs := h.Cluster
		if h.Unreachable != "" {
			rep.Store = "cluster unreachable"
			problem("the cluster %s does not answer (%s): hooks pass output through unchanged and record nothing until it does; check the servers and %s",
				cs.URL, h.Unreachable, daemon.EnvNATSURL)
		}
		for _, p := range cs.Peers {
			if p.Offline || !p.Current {
				problem("replica %s of stream %s is %s: the stream keeps going while a majority of its %d replicas answers; restart that server",
					p.Name, cs.Stream, peerState(p), cs.Replicas)
			}
		}
	}
	if free, ferr := jetstream.FreeBytes(home); ferr == nil {
		rep.DiskFreeMiB = free >> 20
		if free < 2*jetstream.MinFreeBytes {
			problem("the disk holding %s has %d MiB free; under %d MiB omni stops recording and hooks pass output through unfolded: free space, or remove old events with 'omni gc --before 90d'",
				home, free>>20, jetstream.MinFreeBytes>>20)
		}
	}

	// The hosts, user scope and, inside a repository, project scope.
	scopes := []hostsetup.Options{o}
	if wd, err := os.Getwd(); err == nil {
		if p := projectOf(wd); p != o.Home {
			po := o
			po.Project = p
			scopes = append(scopes, po)
		}
	}
	var registered bool
	rep.Hosts, registered = hostsetup.Check(scopes, problem)
	if !registered {
		problem("omni is not registered with any host: run 'omni init --claude' (or --codex, --gemini, --opencode, --copilot, --kilo)")
	}
	rep.HookErrors = lastHookErrors(filepath.Join(home, "omni.log"), doctorLogLines)
	return rep
}

// doctorFix repairs what it can and says what it did.
func doctorFix(o hostsetup.Options, rep doctorReport) []string {
	var did []string
	if ds := rep.DaemonState; ds != nil && ds.State != "answers" && ds.State != "none" && ds.State != "unsafe home" {
		ctx, cancel := context.WithTimeout(context.Background(), daemonStopTimeout)
		if _, err := newClient().Stop(ctx, daemonStopTimeout); err == nil {
			did = append(did, fmt.Sprintf("stopped the daemon (pid %d, %s); the next hook starts this build", ds.PID, ds.State))
		}
		cancel()
	}
	wd, _ := os.Getwd()
	for _, fix := range hostsetup.Fix(o, rep.Hosts, projectOf(wd)) {
		if !slices.Contains(did, fix) {
			did = append(did, fix)
		}
	}
	return did
}

// printDoctor prints the report for people.
func printDoctor(w io.Writer, rep doctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	onPath := "not on $PATH"
	if rep.OnPath != "" {
		onPath = "on $PATH: " + rep.OnPath
		if rep.OnPathVersion != "" {
			onPath += " (version " + rep.OnPathVersion + ")"
		}
	}
	fmt.Fprintf(tw, "omni\t%s, %s; %s\n", rep.Version, rep.Binary, onPath)
	fmt.Fprintf(tw, "store\t%s (%s, %d calls)\n", rep.Store, filepath.Join(rep.Home, "store"), rep.Calls)
	if h := rep.Log; h != nil {
		fmt.Fprintf(tw, "log\tseq %d..%d, %s, %d MiB on disk, %d MiB free\n", h.First, h.Last, batches(int(h.Batches)), h.Bytes>>20, rep.DiskFreeMiB)
		if h.RecordedLost > 0 {
			fmt.Fprintf(tw, "\t%s recorded as lost (a damaged store file, omni gc --repair)\n", batches(h.RecordedLost))
		}
	}
	if h := rep.Log; h != nil && h.Cluster.Backend == "cluster" {
		fmt.Fprintf(tw, "backend\t%s\n", clusterLine(h.Cluster, h.Unreachable))
	} else if rep.Log != nil {
		fmt.Fprintf(tw, "backend\tembedded store (set %s to share a cluster)\n", daemon.EnvNATSURL)
	}
	fmt.Fprintf(tw, "daemon\t%s\n", rep.Daemon)
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\ttier\thooks\tmcp")
	for _, h := range rep.Hosts {
		tier, hk, mc := h.Tier, h.Hooks, h.MCP
		if tier == "" {
			tier = "-"
			if !h.Installed {
				tier = "- (not installed)"
			}
		}
		if hk == "" {
			hk = "-"
		}
		if mc == "" {
			mc = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Host, tier, hk, mc)
	}
	tw.Flush()
	for _, h := range rep.Hosts {
		for _, n := range h.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	if len(rep.HookErrors) > 0 {
		fmt.Fprintf(w, "\nlast hook errors (%s):\n", filepath.Join(rep.Home, "omni.log"))
		for _, l := range rep.HookErrors {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, f := range rep.Fixed {
		fmt.Fprintf(w, "fixed: %s\n", f)
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "\nno problems found")
		return
	}
	fmt.Fprintf(w, "\n%d problem(s):\n", len(rep.Problems))
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

// lastHookErrors returns the last n lines of an omni.log that record a hook
// problem, reading at most its last 256 KiB.
func lastHookErrors(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 256<<10 {
		_, _ = f.Seek(fi.Size()-256<<10, io.SeekStart)
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, " hook: ") {
			if len(l) > 300 {
				l = l[:297] + "..."
			}
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// sameFile reports whether two paths name one file (after symlinks).
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// doctorWait bounds doctor's checks of the daemon and the store (the
// health scan of an answering store aside): a hung daemon or a damaged
// store is reported within it.
const doctorWait = 2 * time.Second

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

// binaryVersion runs `bin --version` and returns its version word.
func binaryVersion(bin string) string {
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

// clusterLine describes a cluster backend in one line: its servers, the
// connection, the stream and each replica's state.
func clusterLine(cs jetstream.ClusterState, unreachable string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s, %s", cs.URL, strings.ToLower(cs.Status))
	if cs.Server != "" {
		fmt.Fprintf(&b, " to %s", cs.Server)
		if cs.Cluster != "" {
			fmt.Fprintf(&b, " (cluster %s)", cs.Cluster)
		}
	}
	fmt.Fprintf(&b, "; stream %s", cs.Stream)
	if unreachable != "" {
		b.WriteString(" unreachable")
		return b.String()
	}
	fmt.Fprintf(&b, " R%d", cs.Replicas)
	for i, p := range cs.Peers {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %s", sep, p.Name, peerState(p))
	}
	return b.String()
}

// peerState names a replica's state: leader, current, offline or lagging.
func peerState(p jetstream.Peer) string {
	switch {
	case p.Leader:
		return "leader"
	case p.Offline:
		return "offline"
	case !p.Current:
		return fmt.Sprintf("lagging %d", p.Lag)
	}
	return "current"
}
