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
)

// token is a generated GitHub-token-shaped credential (not an example).
const token = "ghp_Q7mZ2xV9kL4pR8sT1wY6nB3cD5fH0jK2aE9u"

// A stream's export to the corpus format, benched again, gives the
// stream's figures (masked credentials included, which stay masked), and
// the file holds no credential.
func TestExportRoundTrip(t *testing.T) {
	corpus := writeStoreCorpus(t)
	var env strings.Builder
	fmt.Fprintf(&env, "export GITHUB_TOKEN=%s\n", token)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&env, "SETTING_%02d=value number %d of the environment file\n", i, i)
	}
	zero := 0
	extra := []Record{
		{Session: "proj/s3", Agent: "main", Seq: 0, Tool: "Read", Input: "cat .env", Output: env.String(), ExitCode: &zero},
		{Session: "proj/s3", Agent: "main", Seq: 1, Tool: "Read", Input: "cat .env", Output: env.String(), ExitCode: &zero},
	}
	f, err := os.OpenFile(corpus, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range extra {
		b, _ := json.Marshal(r)
		f.Write(append(b, '\n'))
	}
	f.Close()

	rep, log, _ := corpusRun(t, corpus, Options{Rewrite: true})
	var buf bytes.Buffer
	sum, err := Export(context.Background(), LogSource{Log: log}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Calls != rep.All.Calls || sum.Sessions != 3 {
		t.Fatalf("exported %+v, want %d calls", sum, rep.All.Calls)
	}
	if strings.Contains(buf.String(), token) || !strings.Contains(buf.String(), `"masked":1`) {
		t.Fatalf("export leaks the token or lost its mask count:\n%s", buf.String())
	}
	sr, err := RunStore(context.Background(), StoreOptions{Source: LogSource{Log: log}}, io.Discard)
	if err != nil || sr.MaskedCount != 2 || sr.Changed != 0 {
		t.Fatalf("bench --store: masked %d, changed %d, %v", sr.MaskedCount, sr.Changed, err)
	}
	exported := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(exported, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	again, _, _ := corpusRun(t, exported, Options{Rewrite: true})
	if got, want := figures(t, again), figures(t, rep); got != want {
		t.Fatalf("bench of the export differs:\n%s\nwant\n%s", got, want)
	}
	if rep.Rewritten.Calls == 0 {
		t.Fatal("the round trip exercises no rewritten call")
	}
}
