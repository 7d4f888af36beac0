package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// writeCorpus writes a small corpus: one session runs the same long
// listing three times, then fails once.
func writeCorpus(t *testing.T) string {
	t.Helper()
	var long strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&long, "pkg/file_%03d.go: the quick brown fox jumps over the lazy dog\n", i)
	}
	zero, one := 0, 1
	recs := []Record{
		{Session: "proj/s1", Agent: "main", Seq: 1, Tool: "bash", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 2, Tool: "bash", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 3, Tool: "bash", Input: "ls -R", Output: long.String(), ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 4, Tool: "bash", Input: "make", Output: "error: boom\n", ExitCode: &one, IsError: true},
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func memStore(context.Context, string) (events.Log, func() error, error) {
	return memlog.New(), func() error { return nil }, nil
}

// Two runs over one corpus give byte-identical --out files; repeats fold
// and the totals add up.
func TestRunDeterministic(t *testing.T) {
	corpus := writeCorpus(t)
	var outs [][]byte
	var rep *Report
	for i := 0; i < 2; i++ {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		var err error
		rep, err = Run(context.Background(), Options{Corpus: []string{corpus}, Home: t.TempDir(), Out: out, OpenStore: memStore}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("two runs differ:\n%s\n%s", outs[0], outs[1])
	}
	if rep.All.Calls != 4 || rep.HookFailures != 0 {
		t.Fatalf("calls %d, hook failures %d", rep.All.Calls, rep.HookFailures)
	}
	if rep.All.Folds == 0 || rep.All.BytesSaved <= 0 || rep.All.RawBytes != rep.All.DeliveredBytes+rep.All.BytesSaved {
		t.Fatalf("report %+v", rep.All)
	}
	lines := bytes.Split(bytes.TrimSpace(outs[0]), []byte("\n"))
	var last OutLine
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil || last.Delivered != "error: boom\n" {
		t.Fatalf("the failed call was changed: %+v %v", last, err)
	}
	var p bytes.Buffer
	Print(&p, rep)
	if !strings.HasPrefix(p.String(), "calls 4 in ") {
		t.Fatalf("print:\n%s", p.String())
	}
}

// TestOutRawIsTheHostView: an out line's raw is the text the host showed
// the hook, before the door redaction (what a checker compares with the
// corpus): a Bash output holding a credential keeps it in raw while the
// delivered text is redacted; a Claude Code Read is the file content
// without the transcript's numbering and reminder. Red when raw is the
// engine's redacted raw.
func TestOutRawIsTheHostView(t *testing.T) {
	zero := 0
	secret := "ghp_" + strings.Repeat("A1b2", 9)
	bash := "export GITHUB_TOKEN=" + secret + "\nother line\n"
	read := "     1→package main\n     2→\n     3→func main() {}\n\n<system-reminder>\nbe careful\n</system-reminder>\n"
	recs := []Record{
		{Session: "proj/s1", Agent: "main", Seq: 1, Tool: "bash", Input: "cat .env", Output: bash, ExitCode: &zero},
		{Session: "proj/s1", Agent: "main", Seq: 2, Tool: "Read", RawTool: "Read", Input: "/p/main.go", Output: read},
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(corpus, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if _, err := Run(context.Background(), Options{Corpus: []string{corpus}, Home: t.TempDir(), Out: out, OpenStore: memStore}, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var o1, o2 OutLine
	if err := json.Unmarshal(lines[0], &o1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lines[1], &o2); err != nil {
		t.Fatal(err)
	}
	if o1.Raw != bash || strings.Contains(o1.Delivered, secret) {
		t.Fatalf("bash raw %q delivered %q", o1.Raw, o1.Delivered)
	}
	if want := "package main\n\nfunc main() {}\n"; o2.Raw != want {
		t.Fatalf("read raw %q, want %q", o2.Raw, want)
	}
}
