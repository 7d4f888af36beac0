package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/omnictx/omni/internal/hostsetup"
	"github.com/omnictx/omni/internal/platform"
)

// LatencyRow is one payload size of `omni bench --latency`.
type LatencyRow struct {
	Name        string  `json:"name"`
	Client      string  `json:"client"` // "omni hook" or "omni-hook" (the thin client)
	Bytes       int     `json:"payload_bytes"`
	N           int     `json:"processes"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	FloorP50ms  float64 `json:"floor_p50_ms"`
	RatioP50    float64 `json:"ratio_p50"`
	RepliedPart float64 `json:"replied_share"`
	// HookRSSMiB is the largest peak RSS of one hook process (its VmHWM),
	// DaemonRSSMiB the daemon's (VmHWM) after the row.
	HookRSSMiB   float64 `json:"hook_peak_rss_mib"`
	DaemonRSSMiB float64 `json:"daemon_peak_rss_mib,omitempty"`
}

// LatencyReport is the result of Latency (omni bench --latency --json):
// the floor binary's label and start time quantiles in milliseconds, one
// row per payload size and client, the binary timed, and the first call's
// wall time in milliseconds (it spawns the daemon).
type LatencyReport struct {
	Floor     string       `json:"floor"`
	FloorP50  float64      `json:"floor_p50_ms"`
	FloorP99  float64      `json:"floor_p99_ms"`
	Rows      []LatencyRow `json:"rows"`
	Binary    string       `json:"binary"`
	ColdFirst float64      `json:"first_call_ms"`
}

// floorBinary builds a trivial Go program (print one line, exit) to time
// process start beside the hook; it falls back to /bin/true when no Go
// toolchain is available, and says so.
func floorBinary(dir string) (path, label string) {
	src := filepath.Join(dir, "floor.go")
	bin := filepath.Join(dir, "floor")
	_ = os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"ok\") }\n"), 0o600)
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if err := cmd.Run(); err == nil {
		return bin, "trivial Go binary (fmt.Println)"
	}
	return "/bin/true", "/bin/true (no Go toolchain to build a trivial Go binary)"
}

// corpusText builds a text of about size bytes from real corpus outputs
// (whole lines, in corpus order), so the hook sees realistic lines.
func corpusText(recs []Record, size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := b.Len()
		if corpusFill(&b, recs, size) || b.Len() == n {
			break
		}
	}
	return b.String()
}

// corpusFill appends the corpus's Bash output lines to b while they fit in
// size bytes, and reports whether one did not fit.
func corpusFill(b *strings.Builder, recs []Record, size int) bool {
	for _, r := range recs {
		if r.Tool != "Bash" || r.IsError {
			continue
		}
		for _, line := range strings.SplitAfter(r.Output, "\n") {
			if b.Len()+len(line) > size {
				if b.Len() == 0 {
					continue
				}
				return true
			}
			b.WriteString(line)
		}
	}
	return false
}

func timeProc(bin string, args []string, env []string, stdin []byte) (time.Duration, []byte, error) {
	d, out, _, err := timeProcRSS(bin, args, env, stdin)
	return d, out, err
}

// timeProcRSS runs bin once and returns its wall time, stdout, and the
// peak RSS in KiB that an omni hook reports on stderr under
// OMNI_REPORT_RSS=1 (its own VmHWM: a child's ru_maxrss on Linux starts at
// the spawner's, here the bench's, so it cannot be used); 0 if none.
func timeProcRSS(bin string, args []string, env []string, stdin []byte) (time.Duration, []byte, int64, error) {
	c := exec.Command(bin, args...)
	c.Env = env
	c.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	c.Stdout = &out
	c.Stderr = &errOut
	t0 := time.Now()
	err := c.Run()
	d := time.Since(t0)
	var rss int64
	if _, after, ok := strings.Cut(errOut.String(), "omni: peak RSS "); ok {
		fmt.Sscanf(after, "%d", &rss)
	}
	return d, out.Bytes(), rss, err
}

// PeakRSS returns a process's peak resident set in KiB
// (platform.PeakRSS: VmHWM on Linux), 0 when unknown.
func PeakRSS(pid int) int64 { return platform.PeakRSS(pid) >> 10 }

// corpusLines returns the first n lines of the corpus's Bash outputs.
func corpusLines(recs []Record, n int) string {
	var b strings.Builder
	for _, r := range recs {
		if r.Tool != "Bash" || r.IsError {
			continue
		}
		for _, line := range strings.SplitAfter(r.Output, "\n") {
			if line == "" {
				continue
			}
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			b.WriteString(line)
			if n--; n == 0 {
				return b.String()
			}
		}
	}
	return b.String()
}

func quantile(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}

// Daemon is what Latency needs from omni's daemon lifecycle, given by
// cmd/omni.
type Daemon struct {
	// Stop stops the daemon of home, waiting up to wait.
	Stop func(ctx context.Context, home string, wait time.Duration) error
	// PID returns the process id of home's daemon (from its address file).
	PID func(home string) (int, error)
}

// Latency times `omni hook` processes (and the thin client omni-hook when
// it sits beside this binary) against a warm daemon for 0.5, 16 and 256 KB
// Bash payloads built from the corpus, n processes each, interleaved with a
// floor binary in the same run: a trivial Go program's start is the least a
// hook process can cost, so each row's ratio says what omni adds to it.
// Rows and the final line go to w unless it is nil. home "" uses a
// temporary home. Errors: a corpus file that cannot be read, a hook process
// that fails, or ctx's error.
func Latency(ctx context.Context, corpus []string, n int, home string, dm Daemon, w io.Writer) (*LatencyReport, error) {
	recs, err := LoadCorpus(corpus)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "omni-latency-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if home == "" {
		home = filepath.Join(tmp, "home")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "OMNI_HOME="+home, "OMNI_REPORT_RSS=1")
	floor, label := floorBinary(tmp)
	rep := &LatencyReport{Floor: label, Binary: self}
	defer dm.Stop(context.Background(), home, 5*time.Second)
	payload := func(text string, i int) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": "latency", "cwd": tmp, "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": fmt.Sprintf("bench-cmd-%d", i%2)},
			"tool_response": map[string]any{"stdout": text, "stderr": "", "interrupted": false, "isImage": false}})
		return b
	}
	// First call: spawns the daemon.
	first, _, err := timeProc(self, []string{"hook"}, env, payload("warm up\n", 0))
	if err != nil {
		return nil, fmt.Errorf("first hook: %w", err)
	}
	rep.ColdFirst = float64(first.Microseconds()) / 1000
	var floorAll []time.Duration
	// The clients timed: `omni hook`, and the thin client when it sits
	// beside this binary (cmd/omni-hook; what omni init registers then).
	type client struct {
		name string
		bin  string
		args []string
	}
	clients := []client{{"omni hook", self, []string{"hook"}}}
	if thin := hostsetup.HookBinary(self); thin != "" {
		clients = append(clients, client{"omni-hook", thin, nil})
	}
	// The last two rows measure memory more than time : a
	// 20,000-line output and a 15 MiB one (a 16 MiB text makes a hook payload
	// over hooks.MaxInput, which the hook leaves to the host), with fewer
	// processes.
	for _, sz := range []struct {
		name  string
		n     int
		lines int
	}{{"0.5 KB", 512, 0}, {"16 KB", 16 << 10, 0}, {"256 KB", 256 << 10, 0}, {"20k ln", 0, 20000}, {"15 MiB", 15 << 20, 0}} {
		text := corpusText(recs, sz.n)
		runs := n
		if sz.lines > 0 {
			text = corpusLines(recs, sz.lines)
		}
		if len(text) > 1<<20 || sz.lines > 0 {
			runs = min(n, 8)
		}
		// Each client in turn, interleaved with the floor binary, so all
		// three see the same machine load.
		type sample struct {
			d       []time.Duration
			replied int
			rss     int64
		}
		samples := make([]sample, len(clients))
		var fl []time.Duration
		for i := 0; i < runs; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for ci, c := range clients {
				d, out, kb, err := timeProcRSS(c.bin, c.args, env, payload(text, i))
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", c.name, sz.name, err)
				}
				if len(out) > 0 {
					samples[ci].replied++
				}
				samples[ci].rss = max(samples[ci].rss, kb)
				samples[ci].d = append(samples[ci].d, d)
			}
			fd, _, _ := timeProc(floor, nil, env, nil)
			fl = append(fl, fd)
		}
		floorAll = append(floorAll, fl...)
		for ci, c := range clients {
			sm := samples[ci]
			row := LatencyRow{Name: sz.name, Client: c.name, Bytes: len(text), N: runs, P50ms: quantile(sm.d, 0.5), P99ms: quantile(sm.d, 0.99),
				FloorP50ms: quantile(fl, 0.5), RepliedPart: float64(sm.replied) / float64(runs), HookRSSMiB: float64(sm.rss) / 1024}
			if row.FloorP50ms > 0 {
				row.RatioP50 = row.P50ms / row.FloorP50ms
			}
			if pid, err := dm.PID(home); err == nil {
				row.DaemonRSSMiB = float64(PeakRSS(pid)) / 1024
			}
			rep.Rows = append(rep.Rows, row)
			if w != nil {
				fmt.Fprintf(w, "%-7s %-9s %9d B  p50 %7.2f ms  p99 %7.2f ms   floor p50 %5.2f ms   ratio %5.2fx  peak RSS hook %5.1f MiB, daemon %6.1f MiB  (%d processes, %.0f%% replied)\n",
					row.Name, row.Client, row.Bytes, row.P50ms, row.P99ms, row.FloorP50ms, row.RatioP50, row.HookRSSMiB, row.DaemonRSSMiB, runs, 100*row.RepliedPart)
			}
		}
	}
	rep.FloorP50, rep.FloorP99 = quantile(floorAll, 0.5), quantile(floorAll, 0.99)
	return rep, nil
}
