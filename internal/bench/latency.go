package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Stages is where one call's time went (p50 of each stage over the
	// row's processes), for a client that reports them (omni-hook on a
	// platform with the daemon's local socket); nil otherwise.
	Stages *LatencyStages `json:"stages,omitempty"`
}

// LatencyStages is the p50, in milliseconds, of each stage of one hook
// process, as the process and the daemon measured them
// (OMNI_REPORT_STAGES=1) in report processes run beside the timed ones
// (every other turn, a session of their own): Start is the process's wall time outside its
// run (exec, the loader, the runtime and package initialisation, exit);
// Read the payload read from stdin; Connect the address file, its checks,
// the connect and the peer's credentials; Request the request written and
// read by the daemon; Redact, Decide and Append the daemon's hook handler
// (hooks.Timing); Reply the reply's way back and onto stdout (the wait
// minus the daemon's read and handler, plus the write). The p50s of the
// stages need not add up to the row's p50.
type LatencyStages struct {
	Start   float64 `json:"start_ms"`
	Read    float64 `json:"read_ms"`
	Connect float64 `json:"connect_ms"`
	Request float64 `json:"request_ms"`
	Redact  float64 `json:"redact_ms"`
	Decide  float64 `json:"decide_ms"`
	Append  float64 `json:"append_ms"`
	Reply   float64 `json:"reply_ms"`
}

// stageSample is one process's stage report: the "omni: stages k=v ..."
// line omni-hook writes to stderr (microseconds), with the process's wall
// time.
type stageSample map[string]int64

// parseStages reads the stage line of a hook's stderr, nil when there is
// none.
func parseStages(stderr string, wall time.Duration) stageSample {
	_, line, ok := strings.Cut(stderr, "omni: stages ")
	if !ok {
		return nil
	}
	line, _, _ = strings.Cut(line, "\n")
	st := stageSample{"wall_us": wall.Microseconds()}
	for _, kv := range strings.Fields(line) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(v, "%d", &n); err == nil {
			st[k] = n
		}
	}
	return st
}

// stagesOf returns the p50 of each stage over samples, nil without any.
func stagesOf(samples []stageSample) *LatencyStages {
	if len(samples) == 0 {
		return nil
	}
	p50 := func(f func(stageSample) int64) float64 {
		d := make([]time.Duration, 0, len(samples))
		for _, s := range samples {
			d = append(d, time.Duration(max(0, f(s)))*time.Microsecond)
		}
		return quantile(d, 0.5)
	}
	return &LatencyStages{
		Start:   p50(func(s stageSample) int64 { return s["wall_us"] - s["main_us"] }),
		Read:    p50(func(s stageSample) int64 { return s["read_us"] }),
		Connect: p50(func(s stageSample) int64 { return s["connect_us"] }),
		Request: p50(func(s stageSample) int64 { return s["send_us"] + s["daemon_read_us"] }),
		Redact:  p50(func(s stageSample) int64 { return s["redact_us"] }),
		Decide:  p50(func(s stageSample) int64 { return s["decide_us"] }),
		Append:  p50(func(s stageSample) int64 { return s["append_us"] }),
		Reply: p50(func(s stageSample) int64 {
			return s["wait_us"] - s["daemon_read_us"] - s["handle_us"] + s["reply_us"]
		}),
	}
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
	d, out, _, _, err := timeProcRSS(bin, args, env, stdin)
	return d, out, err
}

// timeProcRSS runs bin once and returns its wall time, stdout, and the
// peak RSS in KiB that an omni hook reports on stderr under
// OMNI_REPORT_RSS=1 (its own VmHWM: a child's ru_maxrss on Linux starts at
// the spawner's, here the bench's, so it cannot be used), 0 if none, and
// its stage report (OMNI_REPORT_STAGES=1), nil if none.
func timeProcRSS(bin string, args []string, env []string, stdin []byte) (time.Duration, []byte, int64, stageSample, error) {
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
	return d, out.Bytes(), rss, parseStages(errOut.String(), d), err
}

// PeakRSS returns a process's peak resident set in KiB
// (platform.PeakRSS: VmHWM on Linux), 0 when unknown.
func PeakRSS(pid int) int64 { return platform.PeakRSS(pid) >> 10 }

// renumber returns text with each ASCII digit replaced by one drawn from a
// generator seeded with call: the same lines, shapes and words as text,
// with other numbers (times, counts, ids), as a command run again prints;
// the calls' texts differ wherever text has a digit. Deterministic for
// one (text, call).
func renumber(text string, call uint64) string {
	r := rand.New(rand.NewPCG(call, 0x6f6d6e69))
	b := []byte(text)
	for i, c := range b {
		if c >= '0' && c <= '9' {
			b[i] = '0' + byte(r.IntN(10))
		}
	}
	return string(b)
}

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
// it sits beside this binary) against a warm daemon for 1, 16, 64 and 256
// KB Bash payloads built from the corpus, n processes each, interleaved
// with a floor binary in the same run: a trivial Go program's start is the
// least a hook process can cost, so each row's ratio says what omni adds
// to it. A client that reports its stages (omni-hook) gets a row of their
// p50s (LatencyStages).
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
	// The timed processes run as a host runs them; their peak RSS and
	// stages come from report processes beside them (reportEnv), whose
	// reports would otherwise count in the time.
	env := append(os.Environ(), "OMNI_HOME="+home)
	reportEnv := append(slices.Clone(env), "OMNI_REPORT_RSS=1", "OMNI_REPORT_STAGES=1")
	floor, label := floorBinary(tmp)
	rep := &LatencyReport{Floor: label, Binary: self}
	defer dm.Stop(context.Background(), home, 5*time.Second)
	payloadOf := func(session, text string, i int) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": tmp, "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": fmt.Sprintf("bench-cmd-%d", i%2)},
			"tool_response": map[string]any{"stdout": text, "stderr": "", "interrupted": false, "isImage": false}})
		return b
	}
	payload := func(text string, i int) []byte { return payloadOf("latency", text, i) }
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
	// The "16 KB new" row gives every call new content (renumbered), as
	// an agent's outputs mostly are; the others repeat one text, which the
	// ledger folds whole after the first two calls.
	for _, sz := range []struct {
		name  string
		n     int
		lines int
		fresh bool
	}{{"1 KB", 1 << 10, 0, false}, {"16 KB", 16 << 10, 0, false}, {"16 KB new", 16 << 10, 0, true}, {"64 KB", 64 << 10, 0, false},
		{"256 KB", 256 << 10, 0, false}, {"20k ln", 0, 20000, false}, {"15 MiB", 15 << 20, 0, false}} {
		text := corpusText(recs, sz.n)
		runs := n
		if sz.lines > 0 {
			text = corpusLines(recs, sz.lines)
		}
		textOf := func(i int) string {
			if sz.fresh {
				return renumber(text, uint64(i))
			}
			return text
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
			stages  []stageSample
		}
		samples := make([]sample, len(clients))
		var fl []time.Duration
		for i := 0; i < runs; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for ci, c := range clients {
				d, out, err := timeProc(c.bin, c.args, env, payload(textOf(i), i))
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", c.name, sz.name, err)
				}
				if len(out) > 0 {
					samples[ci].replied++
				}
				samples[ci].d = append(samples[ci].d, d)
				if i%2 != 0 {
					continue
				}
				// A report process on every other turn, with a session of
				// its own so the timed session's calls stay as they were.
				_, _, kb, st, err := timeProcRSS(c.bin, c.args, reportEnv, payloadOf("latency-report", textOf(runs+i), i/2))
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", c.name, sz.name, err)
				}
				if st != nil {
					samples[ci].stages = append(samples[ci].stages, st)
				}
				samples[ci].rss = max(samples[ci].rss, kb)
			}
			fd, _, _ := timeProc(floor, nil, env, nil)
			fl = append(fl, fd)
		}
		floorAll = append(floorAll, fl...)
		for ci, c := range clients {
			sm := samples[ci]
			row := LatencyRow{Name: sz.name, Client: c.name, Bytes: len(text), N: runs, P50ms: quantile(sm.d, 0.5), P99ms: quantile(sm.d, 0.99),
				FloorP50ms: quantile(fl, 0.5), RepliedPart: float64(sm.replied) / float64(runs), HookRSSMiB: float64(sm.rss) / 1024,
				Stages: stagesOf(sm.stages)}
			if row.FloorP50ms > 0 {
				row.RatioP50 = row.P50ms / row.FloorP50ms
			}
			if pid, err := dm.PID(home); err == nil {
				row.DaemonRSSMiB = float64(PeakRSS(pid)) / 1024
			}
			rep.Rows = append(rep.Rows, row)
			if w != nil {
				fmt.Fprintf(w, "%-9s %-9s %9d B  p50 %7.2f ms  p99 %7.2f ms   floor p50 %5.2f ms   ratio %5.2fx  peak RSS hook %5.1f MiB, daemon %6.1f MiB  (%d processes, %.0f%% replied)\n",
					row.Name, row.Client, row.Bytes, row.P50ms, row.P99ms, row.FloorP50ms, row.RatioP50, row.HookRSSMiB, row.DaemonRSSMiB, runs, 100*row.RepliedPart)
				if g := row.Stages; g != nil {
					fmt.Fprintf(w, "          stages p50 (ms): start %.2f  read %.2f  connect %.2f  request %.2f  redact %.2f  decide %.2f  append %.2f  reply %.2f\n",
						g.Start, g.Read, g.Connect, g.Request, g.Redact, g.Decide, g.Append, g.Reply)
				}
			}
		}
	}
	rep.FloorP50, rep.FloorP99 = quantile(floorAll, 0.5), quantile(floorAll, 0.99)
	return rep, nil
}
