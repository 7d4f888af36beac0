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

// --rewrite: a failing test run the narrow form takes goes through the exec
// door and is distilled, its "Exit code N" line and failure lines kept; a
// failing command it does not take stays on the untouched failure path.
func TestRunRewrite(t *testing.T) {
	var gotest strings.Builder
	gotest.WriteString("Exit code 101\n   Compiling m v0.1.0 (/p)\n    Finished `test` profile [unoptimized] target(s) in 1.00s\n" +
		"     Running unittests src/lib.rs (target/debug/deps/m-1)\n\nrunning 41 tests\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&gotest, "test tests::case_%02d ... ok\n", i)
	}
	gotest.WriteString("test tests::widest ... FAILED\n\nfailures:\n\n---- tests::widest stdout ----\n\n" +
		"thread 'tests::widest' panicked at src/lib.rs:43:9:\nassertion `left == right` failed\n  left: 4\n right: 10\n\n\n" +
		"failures:\n    tests::widest\n\ntest result: FAILED. 40 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.15s\n\n" +
		"error: test failed, to rerun pass `--lib`\n")
	lsOut := "Exit code 2\n" + strings.Repeat("ls: cannot access 'nope': No such file or directory\n", 30)
	recs := []Record{
		{Session: "proj/s1", Agent: "main", Seq: 1, Tool: "bash", Input: "cargo test", Output: gotest.String(), IsError: true},
		{Session: "proj/s1", Agent: "main", Seq: 2, Tool: "bash", Input: "ls nope", Output: lsOut, IsError: true},
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
	run := func(form bool) (*Report, []OutLine) {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		rep, err := Run(context.Background(), Options{Corpus: []string{corpus}, Home: t.TempDir(), Out: out, OpenStore: memStore, Rewrite: form}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(out)
		var ls []OutLine
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var o OutLine
			if err := json.Unmarshal(l, &o); err != nil {
				t.Fatal(err)
			}
			ls = append(ls, o)
		}
		return rep, ls
	}
	rep, ls := run(false)
	if rep.Rewritten.Calls != 0 || ls[0].Delivered != ls[0].Raw || ls[1].Delivered != ls[1].Raw {
		t.Fatalf("without --rewrite a failing call changed: %+v", rep.Rewritten)
	}
	rep, ls = run(true)
	if rep.Rewritten.Calls != 1 || rep.HookFailures != 0 {
		t.Fatalf("rewritten %d calls, %d hook failures", rep.Rewritten.Calls, rep.HookFailures)
	}
	d := ls[0].Delivered
	if ls[0].Raw != gotest.String() || !strings.HasPrefix(d, "Exit code 101\n") || len(d) >= len(ls[0].Raw) {
		t.Fatalf("cargo test under the rewrite: raw %d B, delivered %d B:\n%s", len(ls[0].Raw), len(d), d)
	}
	for _, must := range []string{"test tests::widest ... FAILED", "assertion `left == right` failed", "test result: FAILED. 40 passed; 1 failed"} {
		if !strings.Contains(d, must) {
			t.Errorf("delivered lost %q:\n%s", must, d)
		}
	}
	if ls[1].Delivered != lsOut || ls[1].Event == "rewrite:pipe" {
		t.Fatalf("ls was rewritten: %+v", ls[1])
	}
}

func TestSplitExitLine(t *testing.T) {
	three := 3
	for _, c := range []struct {
		out        string
		code       *int
		line, body string
		n          int
	}{
		{"Exit code 2\nboom\n", nil, "Exit code 2\n", "boom\n", 2},
		{"Exit code 137", nil, "Exit code 137", "", 137},
		{"boom\n", &three, "", "boom\n", 3},
		{"Exit code x\nboom", nil, "", "Exit code x\nboom", 1},
	} {
		line, body, n := SplitExitLine(c.out, c.code)
		if line != c.line || body != c.body || n != c.n {
			t.Errorf("SplitExitLine(%q) = %q %q %d", c.out, line, body, n)
		}
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
