package main

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
)

// latencyRow is one payload size of `omni bench --latency`.
type latencyRow struct {
	Name        string  `json:"name"`
	Bytes       int     `json:"payload_bytes"`
	N           int     `json:"processes"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	FloorP50ms  float64 `json:"floor_p50_ms"`
	RatioP50    float64 `json:"ratio_p50"`
	RepliedPart float64 `json:"replied_share"`
}

type latencyReport struct {
	Floor     string       `json:"floor"`
	FloorP50  float64      `json:"floor_p50_ms"`
	FloorP99  float64      `json:"floor_p99_ms"`
	Rows      []latencyRow `json:"rows"`
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
func corpusText(recs []corpusRecord, size int) string {
	var b strings.Builder
	for _, r := range recs {
		if r.Tool != "Bash" || r.IsError {
			continue
		}
		for _, line := range strings.SplitAfter(r.Output, "\n") {
			if b.Len()+len(line) > size {
				if b.Len() == 0 {
					continue
				}
				return b.String()
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

func timeProc(bin string, args []string, env []string, stdin []byte) (time.Duration, []byte, error) {
	c := exec.Command(bin, args...)
	c.Env = env
	c.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = io.Discard
	t0 := time.Now()
	err := c.Run()
	return time.Since(t0), out.Bytes(), err
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

// runLatency times `omni hook` processes against a warm daemon for 0.5, 16
// and 256 KB Bash payloads built from the corpus, interleaved with a floor
// binary in the same run (issue 5; JETSTREAM.md §3 for the floor).
func runLatency(ctx context.Context, corpus []string, n int, home string, w io.Writer) (*latencyReport, error) {
	recs, err := loadCorpus(corpus)
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
	env := append(os.Environ(), "OMNI_HOME="+home)
	floor, label := floorBinary(tmp)
	rep := &latencyReport{Floor: label, Binary: self}
	defer stopDaemon(context.Background(), home, 5*time.Second)
	payload := func(text string, i int) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": "latency", "cwd": tmp, "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": fmt.Sprintf("bench-cmd-%d", i%2)},
			"tool_response": map[string]any{"stdout": text, "stderr": "", "interrupted": false, "isImage": false}})
		return b
	}
	// First call: spawns the daemon.
	d, _, err := timeProc(self, []string{"hook"}, env, payload("warm up\n", 0))
	if err != nil {
		return nil, fmt.Errorf("first hook: %w", err)
	}
	rep.ColdFirst = float64(d.Microseconds()) / 1000
	var floorAll []time.Duration
	for _, sz := range []struct {
		name string
		n    int
	}{{"0.5 KB", 512}, {"16 KB", 16 << 10}, {"256 KB", 256 << 10}} {
		text := corpusText(recs, sz.n)
		var hook, fl []time.Duration
		replied := 0
		for i := 0; i < n; i++ {
			d, out, err := timeProc(self, []string{"hook"}, env, payload(text, i))
			if err != nil {
				return nil, fmt.Errorf("hook %s: %w", sz.name, err)
			}
			if len(out) > 0 {
				replied++
			}
			hook = append(hook, d)
			fd, _, _ := timeProc(floor, nil, env, nil)
			fl = append(fl, fd)
		}
		floorAll = append(floorAll, fl...)
		row := latencyRow{Name: sz.name, Bytes: len(text), N: n, P50ms: quantile(hook, 0.5), P99ms: quantile(hook, 0.99),
			FloorP50ms: quantile(fl, 0.5), RepliedPart: float64(replied) / float64(n)}
		if row.FloorP50ms > 0 {
			row.RatioP50 = row.P50ms / row.FloorP50ms
		}
		rep.Rows = append(rep.Rows, row)
		if w != nil {
			fmt.Fprintf(w, "%-7s %7d B  hook p50 %6.2f ms  p99 %6.2f ms   floor p50 %5.2f ms   ratio %.2fx  (%d processes, %.0f%% replied)\n",
				row.Name, row.Bytes, row.P50ms, row.P99ms, row.FloorP50ms, row.RatioP50, n, 100*row.RepliedPart)
		}
	}
	rep.FloorP50, rep.FloorP99 = quantile(floorAll, 0.5), quantile(floorAll, 0.99)
	return rep, nil
}
