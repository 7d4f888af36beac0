package redact_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/omnictx/omni/internal/sharedtest"
	"github.com/omnictx/omni/redact"
)

// corpusCall is one line of ../shared/corpus/*.jsonl.
type corpusCall struct {
	Session string `json:"session"`
	Seq     int    `json:"seq"`
	Tool    string `json:"tool"`
	Input   string `json:"input"`
	Output  string `json:"output"`
}

// TestCorpusRedactions measures redaction on the shared corpus (real agent
// sessions, ../shared/corpus): values per rule kind in outputs and inputs,
// and checks that structure holds
// (line counts; JSON stays JSON). With OMNI_REDACT_SAMPLES=FILE it writes
// every redacted line, before and after, for review.
func TestCorpusRedactions(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*.jsonl")
	if len(files) == 0 {
		sharedtest.Skip(t, "../shared/corpus")
	}
	var samples *bufio.Writer
	if p := os.Getenv("OMNI_REDACT_SAMPLES"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		samples = bufio.NewWriter(f)
		defer samples.Flush()
	}
	kinds := redact.Counts{}
	var calls, outputsHit, inputsHit, values, jsonBroken, linesChanged int
	for _, fn := range files {
		f, err := os.Open(fn)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var c corpusCall
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				continue
			}
			calls++
			for i, text := range []string{c.Output, c.Input} {
				got, n := redact.TextCounts(text, kinds)
				if n == 0 {
					continue
				}
				if i == 0 {
					outputsHit++
				} else {
					inputsHit++
				}
				values += n
				if strings.Count(got, "\n") != strings.Count(text, "\n") {
					linesChanged++
				}
				if json.Valid([]byte(text)) && !json.Valid([]byte(got)) {
					jsonBroken++
				}
				if samples != nil {
					a, b := strings.Split(text, "\n"), strings.Split(got, "\n")
					for k := range b {
						if k < len(a) && a[k] != b[k] {
							fmt.Fprintf(samples, "%s#%d %s\n- %.300s\n+ %.300s\n", c.Session, c.Seq, c.Tool, a[k], b[k])
						}
					}
				}
			}
		}
		f.Close()
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(ks)
	t.Logf("%d calls: %d outputs and %d inputs hold redacted values; %d values",
		calls, outputsHit, inputsHit, values)
	t.Logf("per kind: %s", strings.Join(ks, " "))
	if linesChanged > 0 || jsonBroken > 0 {
		t.Errorf("%d texts changed their line count, %d JSON texts stopped parsing", linesChanged, jsonBroken)
	}
}
