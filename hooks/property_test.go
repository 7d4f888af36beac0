package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/pipeline"
)

// propFailures are lines that state a failure in the words of the
// vocabulary table (pipeline.IsFailureLine holds for each; checked below).
var propFailures = []string{
	"FAILURE: Squashed migration is still marked as applied!",
	"FAILED tests/test_api.py::test_login - AssertionError",
	"Traceback (most recent call last):",
	"thread 'main' panicked at src/lib.rs:41:9",
	"npm ERR! code ELIFECYCLE",
	"Exception in thread \"main\" java.lang.IllegalStateException",
	"error[E0382]: borrow of moved value: `cfg`",
	"  ✖ renders the settings page",
	"--- FAIL: TestLedgerFold (0.01s)",
	"Tests run: 12, Failures: 2, Errors: 0",
	"make: *** [Makefile:12: test] Error 2",
	"  3 failing",
}

var propHandleRE = regexp.MustCompile(`omni retrieve ([0-9a-f]{16})`)

// propChunks builds the pool outputs are drawn from: runs of ordinary lines
// (some shared between chunks, so runs split and sources differ), and
// chunks with a failure line in the middle.
func propChunks(r *rand.Rand) []string {
	var chunks []string
	for c := 0; c < 14; c++ {
		var b strings.Builder
		n := 4 + r.IntN(14)
		for i := 0; i < n; i++ {
			if r.IntN(9) == 0 {
				b.WriteString("\n") // blank lines travel with runs
			}
			fmt.Fprintf(&b, "chunk %02d line %02d: /srv/app/pkg_%02d/file_%02d.go handled %d requests\n", c, i, (c*7+i)%11, i, (c+1)*(i+3))
		}
		if c%3 == 1 {
			b.WriteString(propFailures[r.IntN(len(propFailures))] + "\n")
			fmt.Fprintf(&b, "chunk %02d after the failure: cleanup done\n", c)
		}
		chunks = append(chunks, b.String())
	}
	return chunks
}

// TestPropertyRandomSessions runs random sessions (three sessions of one
// project, a subagent, Bash and Read calls drawn from shared chunks,
// compactions, retrieves of printed handles) through the Engine on a real
// ledger, in both modes, and checks after every call:
//
//  1. no output is only markers when one of its markers is project scope;
//  2. no failure line (the vocabulary table) is inside a fold;
//  3. after a reader retrieves a handle (of a ledger fold or a first-seen
//     cut), the next delivery to it whose text holds all of the block's
//     lines delivers them; the repeat after that may fold again.
func TestPropertyRandomSessions(t *testing.T) {
	for _, l := range propFailures {
		if !pipeline.IsFailureLine(l) {
			t.Fatalf("%q is not a failure line by the table", l)
		}
	}
	var n propCounts
	for _, ledgerOnly := range []bool{true, false} {
		for seed := uint64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("ledger-only=%v/seed=%d", ledgerOnly, seed), func(t *testing.T) {
				propSession(t, seed, ledgerOnly, &n)
			})
		}
	}
	// The sessions exercise what the properties are about.
	t.Logf("%+v", n)
	if n.project == 0 || n.session == 0 || n.paid == 0 || n.failures == 0 || n.dropped == 0 {
		t.Fatalf("the random sessions do not exercise every property: %+v", n)
	}
}

// propCounts counts what the random sessions exercised: project and session
// folds, deliveries that paid a retrieve's debt, outputs holding failure
// lines beside folds, and outputs where a project fold was dropped because
// it would have left only markers.
type propCounts struct{ project, session, paid, failures, dropped int }

type propReader struct{ session, agent string }

func propSession(t *testing.T, seed uint64, ledgerOnly bool, n *propCounts) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 11))
	e, err := New(ctx, memlog.New(), Options{Now: fixedClock(), LedgerOnly: ledgerOnly})
	if err != nil {
		t.Fatal(err)
	}
	chunks := propChunks(r)
	readers := []propReader{{"s1", ""}, {"s2", ""}, {"s3", ""}, {"s1", "agent-7"}}
	owed := map[propReader][]string{} // reader -> retrieved blocks not yet paid
	lastHandles := map[propReader][]string{}
	for call := 0; call < 90; call++ {
		rd := readers[r.IntN(len(readers))]
		switch r.IntN(14) {
		case 0: // compaction
			b, _ := json.Marshal(map[string]any{"session_id": rd.session, "cwd": "/home/dev/proj", "hook_event_name": "PreCompact", "trigger": "auto"})
			if _, err := e.HookResult(ctx, HookInput{Stdin: b}); err != nil {
				t.Fatal(err)
			}
			for k := range owed {
				if k.session == rd.session {
					// The debt outlives a compaction; a delivery still pays it.
					_ = k
				}
			}
			continue
		case 1: // retrieve a handle this reader was shown
			hs := lastHandles[rd]
			if len(hs) == 0 {
				continue
			}
			h := hs[r.IntN(len(hs))]
			b, err := e.Retrieve(ctx, h, events.Reader{Session: rd.session, Agent: rd.agent})
			if err != nil {
				t.Fatalf("call %d: a printed handle does not retrieve: %v", call, err)
			}
			owed[rd] = append(owed[rd], string(b))
			continue
		}
		// An output: 1-4 chunks, sometimes a Read of a "file" made of chunks.
		var text strings.Builder
		k := 1 + r.IntN(4)
		first := r.IntN(len(chunks))
		for i := 0; i < k; i++ {
			text.WriteString(chunks[(first+i*(1+r.IntN(2)))%len(chunks)])
		}
		out := text.String()
		var stdin []byte
		if r.IntN(6) == 0 {
			// A verbose test run a distiller cuts (full mode): its handle
			// names a first-seen cut.
			var g strings.Builder
			for i := 0; i < 40; i++ {
				fmt.Fprintf(&g, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i+first, i+first)
			}
			g.WriteString("PASS\nok  \texample.com/app/pkg\t0.101s\n")
			out = g.String()
			stdin = bashPayload(rd.session, rd.agent, "go test -v ./pkg", out)
		} else if r.IntN(3) == 0 {
			path := fmt.Sprintf("/home/dev/proj/file_%d.go", first%4)
			p := map[string]any{"session_id": rd.session, "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse", "tool_name": "Read",
				"tool_input": map[string]any{"file_path": path},
				"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": out,
					"numLines": strings.Count(out, "\n"), "startLine": 1, "totalLines": strings.Count(out, "\n")}}}
			if rd.agent != "" {
				p["agent_id"] = rd.agent
			}
			stdin, _ = json.Marshal(p)
		} else {
			stdin = bashPayload(rd.session, rd.agent, fmt.Sprintf("make check-%d", first%5), out)
		}
		res, err := e.HookResult(ctx, HookInput{Stdin: stdin})
		if err != nil {
			t.Fatal(err)
		}
		propCheck(t, call, res, ledgerOnly)
		for _, f := range res.Folds {
			if f.Scope == pipeline.ScopeProject {
				n.project++
			} else {
				n.session++
			}
		}
		if len(res.Folds) > 0 {
			for _, l := range propFailures {
				if strings.Contains(res.Raw, l) {
					n.failures++
					break
				}
			}
		}
		if ledgerOnly && len(res.Folds) > 0 && onlyMarkersWithProject(e, rd, res.Raw) {
			n.dropped++
		}
		{
			// 3. Every owed block whose lines the raw text holds arrives
			// whole (in full mode too: the first-seen stages see the debt).
			var still []string
			for _, blk := range owed[rd] {
				if !holdsLines(out, blk) {
					still = append(still, blk)
					continue
				}
				for _, ln := range nonBlank(blk) {
					if !containsLine(res.Delivered, ln) {
						t.Fatalf("call %d: after a retrieve, line %q of the block was not delivered:\n%s", call, ln, res.Delivered)
					}
				}
				n.paid++
			}
			owed[rd] = still
		}
		// Every handle printed (ledger folds and first-seen cuts) may be
		// retrieved next.
		lastHandles[rd] = nil
		for _, m := range propHandleRE.FindAllStringSubmatch(res.Delivered, -1) {
			lastHandles[rd] = append(lastHandles[rd], m[1])
		}
	}
}

func propCheck(t *testing.T, call int, res Result, ledgerOnly bool) {
	t.Helper()
	project := false
	for _, f := range res.Folds {
		if f.Scope == pipeline.ScopeProject {
			project = true
		}
		// 2. No failure line inside a fold: none of the table's (checked
		// with the function) and none of propFailures (checked by text, so
		// an entry lost from the table turns this red).
		for _, ln := range strings.Split(f.Block, "\n") {
			if pipeline.IsFailureLine(ln) {
				t.Fatalf("call %d: failure line %q inside a %s fold", call, ln, f.Kind)
			}
			for _, fl := range propFailures {
				if strings.TrimSpace(ln) == strings.TrimSpace(fl) {
					t.Fatalf("call %d: failure line %q inside a %s fold", call, ln, f.Kind)
				}
			}
		}
	}
	// 1. Never only markers when one is project scope.
	if project {
		content := 0
		for _, ln := range strings.Split(res.Delivered, "\n") {
			s := strings.TrimSpace(ln)
			if s != "" && s != pipeline.Filler && !strings.HasPrefix(s, "[OMNI") {
				content++
			}
		}
		if content == 0 {
			t.Fatalf("call %d: an output of markers only, one of them project scope:\n%s", call, res.Delivered)
		}
	}
	// The raw comes back: in ledger-only mode every fold's block is a
	// substring of the raw text.
	if ledgerOnly {
		for _, f := range res.Folds {
			if !strings.Contains(res.Raw, f.Block) {
				t.Fatalf("call %d: a fold's block is not in the raw text", call)
			}
		}
	}
}

// onlyMarkersWithProject reports whether every non-blank line of text was
// shown before (to this reader, or to another of the project) with at least
// one of them only to another: the case where project folds are dropped.
func onlyMarkersWithProject(e *Engine, rd propReader, text string) bool {
	project := false
	for _, l := range pipeline.SplitLines(nil, text) {
		if l.Key == 0 {
			continue
		}
		s, _ := e.ledger.Lookup(events.Reader{Session: rd.session, Agent: rd.agent}, "/home/dev/proj", l.Key, fixedClock()())
		switch s {
		case 0:
			return false
		case 2:
			project = true
		}
	}
	return project
}

func nonBlank(s string) []string {
	var out []string
	for _, ln := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(ln); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func containsLine(text, line string) bool {
	for _, ln := range strings.Split(text, "\n") {
		if strings.TrimSpace(ln) == line {
			return true
		}
	}
	return false
}

func holdsLines(text, block string) bool {
	for _, ln := range nonBlank(block) {
		if !containsLine(text, ln) {
			return false
		}
	}
	return true
}
