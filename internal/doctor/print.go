package doctor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/jetstream"
	"github.com/omnictx/omni/internal/daemon"
)

// Print writes the report for people: the binary, the store, the log, the
// backend and the daemon; one row per host; notes, hook errors, what was
// fixed; then "no problems found" or the problems, one per line.
func Print(w io.Writer, rep Report) {
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
		fmt.Fprintf(tw, "log\tseq %d..%d, %s, %d MiB on disk, %d MiB free\n", h.First, h.Last, Batches(int(h.Batches)), h.Bytes>>20, rep.DiskFreeMiB)
		if h.RecordedLost > 0 {
			fmt.Fprintf(tw, "\t%s recorded as lost (a damaged store file, omni gc --repair)\n", Batches(h.RecordedLost))
		}
	}
	if si := rep.Retained; si != nil {
		fmt.Fprintf(tw, "range\t%s, %s on disk\n", si.RangeText(), sizeText(si.Bytes))
		fmt.Fprintf(tw, "keep\t%s\n", retentionText(*si))
	}
	if h := rep.Log; h != nil && h.Cluster.Backend == "cluster" {
		fmt.Fprintf(tw, "backend\t%s\n", clusterLine(h.Cluster, h.Unreachable))
	} else {
		fmt.Fprintf(tw, "backend\t%s\n", daemon.DescribeBackend(rep.Home, os.LookupEnv))
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
// problem, reading at most its last 256 KiB; a line over 300 bytes is cut
// to 297 and "...".
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

// SeqList renders sequences compactly ("5, 7..9"), with "…" when only some
// of total are listed. seqs must be ascending.
func SeqList(seqs []events.Seq, total int) string {
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d..%d", seqs[i], seqs[j]))
		} else {
			parts = append(parts, fmt.Sprint(seqs[i]))
		}
		i = j + 1
	}
	out := strings.Join(parts, ", ")
	if total > len(seqs) {
		out += ", …"
	}
	return out
}

// Batches renders a count of batches: "1 batch", "3 batches".
func Batches(n int) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}

// sizeText prints n bytes in B, KiB, MiB or GiB with one decimal.
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// retentionText is the retention row: the setting, whether the daemon
// prunes, and its last pass.
func retentionText(si daemon.StoreInfo) string {
	t := si.Retention.String()
	if si.Remote {
		t += "; the cluster's shared stream is never pruned by omni (set limits on the stream)"
	}
	if p := si.LastPass; p != nil {
		switch {
		case p.Err != "":
			t += fmt.Sprintf("; last pass %s failed", p.At.Format("2006-01-02 15:04"))
		case p.Removed > 0:
			t += fmt.Sprintf("; last pass %s removed seq %d..%d (older than %s)", p.At.Format("2006-01-02 15:04"), p.First, p.Before-1, p.Cutoff.Format("2006-01-02"))
		default:
			t += fmt.Sprintf("; last pass %s: nothing older than %s", p.At.Format("2006-01-02 15:04"), p.Cutoff.Format("2006-01-02"))
		}
	}
	return t
}
