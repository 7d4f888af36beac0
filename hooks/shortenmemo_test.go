package hooks

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/pipeline"
)

// memoTexts are outputs of several shapes: a passing and a failing go
// test run, a listing, a log with a credential, near-identical lines the
// collapse folds.
func memoTexts() []string {
	var pass, fail, coll strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&pass, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
		fmt.Fprintf(&fail, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
		fmt.Fprintf(&coll, "worker %d: fetched chunk %d of 40 from cache\n", i%3, i)
	}
	pass.WriteString("PASS\nok  \texample.com/app\t0.412s\n")
	fail.WriteString("--- FAIL: TestLast (0.01s)\n    last_test.go:9: want 2, got 3\nFAIL\nFAIL\texample.com/app\t0.398s\n")
	return []string{pass.String(), fail.String(), coll.String(), i11Lines("memo", 40),
		"connecting with AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n" + explainText("creds", 30), "ok\n"}
}

// TestShortenMemoRunsOnce: an output delivered again whole with the same
// command is shortened once; another command runs the stages again.
func TestShortenMemoRunsOnce(t *testing.T) {
	runs := 0
	defer func(f func(pipeline.ShortenRequest) pipeline.ShortenResult) { shortenStage = f }(shortenStage)
	shortenStage = func(r pipeline.ShortenRequest) pipeline.ShortenResult { runs++; return pipeline.Shorten(r) }
	e := i11Engine(t, memlog.New())
	text := memoTexts()[0]
	i11Hook(t, e, bashPayload("s1", "", "go test ./...", text))
	i11Hook(t, e, bashPayload("s2", "", "go test ./...", text))
	if runs != 1 {
		t.Fatalf("the first-seen stages ran %d times for one output, want 1", runs)
	}
	i11Hook(t, e, bashPayload("s3", "", "go test -v ./...", text))
	if runs != 2 {
		t.Fatalf("another command: %d runs, want 2", runs)
	}
}

// TestShortenMemoChangesNothing: over random sequences of calls (repeated
// and new outputs, several commands and sessions), an Engine that keeps
// first-seen results replies, folds and gives reasons byte for byte as one
// whose kept results are dropped before every call. Red when the memo's
// key leaves out a field of the request.
func TestShortenMemoChangesNothing(t *testing.T) {
	texts := memoTexts()
	cmds := []string{"go test ./...", "cat build.log", "ls -R", "make"}
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		a := i11Engine(t, memlog.New())
		b := i11Engine(t, memlog.New())
		for i := 0; i < 40; i++ {
			p := bashPayload(fmt.Sprintf("s%d", r.IntN(3)), "", cmds[r.IntN(len(cmds))], texts[r.IntN(len(texts))])
			ra := i11Hook(t, a, p)
			b.shortened = [shortenMemo]shortenEntry{}
			rb := i11Hook(t, b, p)
			if !bytes.Equal(ra.Reply, rb.Reply) || ra.Delivered != rb.Delivered || ra.Reason != rb.Reason ||
				ra.Distiller != rb.Distiller || ra.ShortenReason != rb.ShortenReason || fmt.Sprint(ra.Folds) != fmt.Sprint(rb.Folds) {
				t.Fatalf("seed %d call %d: with the memo\n%s\nwithout\n%s", seed, i, ra.Delivered, rb.Delivered)
			}
		}
	}
}
