package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/pipeline"
)

// memoCall is one call of memoScript: a hook payload, or an exec/pipe
// door's input, or a retrieve of the newest fold's handle.
type memoCall struct {
	hook     []byte
	call     *CallInput
	retrieve bool
}

// memoScript returns n calls drawn by r over outputs that take every path
// of the first-seen stages and of Decide that reads a kept result: a
// distilled go test run, a failing one, a collapsed log, a plain listing,
// a commit listing (Decide's own failure judge), a file read, a
// credential (a redaction count), outputs the stages leave whole (their
// lines and failure verdicts handed to Decide), repeated in several
// sessions, agents and doors so that they fold; and retrieves, so that a
// reader is owed a block (ShortenRequest.Owed).
func memoScript(r *rand.Rand, n int) []memoCall {
	texts := memoTexts()
	var glog strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&glog, "%07x fix: the collapse never folds a failing line (case %d)\n", i*977+0x1000000, i)
	}
	texts = append(texts, glog.String(), explainText("plain", 25)+"error: disk quota exceeded\n"+explainText("tail", 10))
	cmds := []string{"go test ./...", "cat build.log", "ls -R", "make", "git log --oneline", "go test -v ./..."}
	sessions := []string{"s1", "s2", ""}
	agents := []string{"", "", "a1"}
	// A reader given an output twice follows the second delivery's handle
	// and is owed it whole: the same request but for Owed.
	owed := bashPayload("s1", "", cmds[0], texts[0])
	out := []memoCall{{hook: owed}, {hook: owed}, {retrieve: true}, {hook: owed}}
	for i := 0; i < n; i++ {
		text := texts[r.IntN(len(texts))]
		cmd := cmds[r.IntN(len(cmds))]
		s, a := sessions[r.IntN(len(sessions))], agents[r.IntN(len(agents))]
		switch r.IntN(7) {
		case 0:
			out = append(out, memoCall{hook: readPayloadFor(s, "/home/dev/proj/notes.txt", text)})
		case 1:
			out = append(out, memoCall{call: &CallInput{Door: events.DoorExec, Command: cmd, Text: text, ExitCode: r.IntN(2),
				Session: s, Agent: a, Cwd: "/home/dev/proj"}})
		case 2:
			out = append(out, memoCall{call: &CallInput{Door: events.DoorPipe, Command: cmd, Text: text, ExitCode: ExitUnknown,
				Session: s, Agent: a, Cwd: "/home/dev/proj"}})
		case 3:
			out = append(out, memoCall{retrieve: true})
		default:
			out = append(out, memoCall{hook: bashPayload(s, a, cmd, text)})
		}
	}
	return out
}

// run makes c on e, returning what the reader was given (the reply or the
// printed text, or the retrieved bytes); folds collects the handles and
// readers a retrieve may follow (the newest is followed).
func (c memoCall) run(t *testing.T, e *Engine, folds *[]memoFold) string {
	t.Helper()
	ctx := context.Background()
	var res Result
	var err error
	switch {
	case c.retrieve:
		if len(*folds) == 0 {
			return ""
		}
		f := (*folds)[len(*folds)-1]
		b, err := e.Retrieve(ctx, f.handle, f.reader)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	case c.call != nil:
		res, err = e.Call(ctx, *c.call)
	default:
		res, err = e.HookResult(ctx, HookInput{Stdin: c.hook})
	}
	if err != nil {
		t.Fatal(err)
	}
	// Every handle the reader was given: a fold's, a rewind marker's.
	for _, m := range memoHandle.FindAllStringSubmatch(res.Delivered, -1) {
		*folds = append(*folds, memoFold{m[1], res.Reader})
	}
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%v", res.Reply, res.Delivered, res.Reason, res.Distiller, res.ShortenReason, res.Folds)
}

var memoHandle = regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)

type memoFold struct {
	handle string
	reader events.Reader
}

// memoEvents returns the log's events as JSON, their IDs (random
// entropy) left out.
func memoEvents(t *testing.T, log *memlog.Log) []string {
	t.Helper()
	ctx := context.Background()
	last, err := log.Last(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for q := events.Seq(1); q <= last; q++ {
		batch, err := log.Get(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range batch {
			ev.ID, ev.Call = "", ""
			if ev.Emitted != nil {
				em := *ev.Emitted
				em.DecideMicros = 0
				ev.Emitted = &em
			}
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	return out
}

// TestShortenMemoKeptResultsStay: after every call of a varied script
// (hooks, exec and pipe doors, file reads, retrieves, folds of every
// kind), each result the Engine keeps is deep-equal to what Shorten
// returns for its request now (its text, blocks, and the lines and
// failure verdicts Decide reads through Reuse): nothing on any door
// writes into a kept result, and Shorten read nothing but its request.
// The Engine's replies and every event it logged are those of an Engine
// whose kept results are dropped before each call. Red when Decide (or
// anything after it) writes into the lines, verdicts or blocks it was
// handed, or when a field that shapes Shorten's result is left out of
// its request.
func TestShortenMemoKeptResultsStay(t *testing.T) {
	runs := 0
	defer func(f func(pipeline.ShortenRequest) pipeline.ShortenResult) { shortenStage = f }(shortenStage)
	shortenStage = func(r pipeline.ShortenRequest) pipeline.ShortenResult { runs++; return pipeline.Shorten(r) }
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		script := memoScript(r, 60)
		la, lb := memlog.New(), memlog.New()
		a, b := i11Engine(t, la), i11Engine(t, lb)
		var fa, fb []memoFold
		hits := 0
		for i, c := range script {
			r0 := runs
			ga := c.run(t, a, &fa)
			r1 := runs
			b.shortened = [shortenMemo]shortenEntry{}
			gb := c.run(t, b, &fb)
			if r1-r0 < runs-r1 {
				hits++
			}
			if ga != gb {
				t.Fatalf("seed %d call %d: with the memo\n%q\nwithout\n%q", seed, i, ga, gb)
			}
			for k, s := range a.shortened {
				if !s.ok {
					continue
				}
				if want := pipeline.Shorten(s.req); !reflect.DeepEqual(s.res, want) {
					t.Fatalf("seed %d call %d: kept result %d changed after it was returned\nkept %+v\nnow  %+v", seed, i, k, s.res, want)
				}
			}
		}
		ea, eb := memoEvents(t, la), memoEvents(t, lb)
		if !reflect.DeepEqual(ea, eb) {
			for i := range min(len(ea), len(eb)) {
				if ea[i] != eb[i] {
					t.Fatalf("seed %d: event %d differs\nwith the memo %s\nwithout      %s", seed, i, ea[i], eb[i])
				}
			}
			t.Fatalf("seed %d: %d events with the memo, %d without", seed, len(ea), len(eb))
		}
		if hits == 0 {
			t.Fatalf("seed %d: no call was served from a kept result", seed)
		}
	}
}
