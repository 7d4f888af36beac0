package hooks

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
)

// settingCase is one invocation recorded under a setting, and the
// parameter that records it: a rerun that ignores the parameter decides
// differently (checked), so every rerun path must honour it.
type settingCase struct {
	name  string
	param string
	opt   Options
	run   func(t *testing.T, e *Engine)
}

// tokenLine is an output line holding a generated GitHub token.
func tokenLine(seed uint64) string { return "export GITHUB_TOKEN=" + genToken(seed) + "\n" }

// distillable is an output the first-seen stages shorten (a passing go
// test run: the runners' distiller keeps the verdict).
func distillable() string {
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	b.WriteString("PASS\nok  \texample.com/pkg\t0.012s\n")
	return b.String()
}

func settingCases() []settingCase {
	hook := func(session, cmd, text string) func(t *testing.T, e *Engine) {
		return func(t *testing.T, e *Engine) {
			t.Helper()
			if _, err := e.HookResult(context.Background(), HookInput{Stdin: bashPayload(session, "", cmd, text)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	call := func(in CallInput) func(t *testing.T, e *Engine) {
		return func(t *testing.T, e *Engine) {
			t.Helper()
			in.Door = events.DoorExec
			if _, err := e.Call(context.Background(), in); err != nil {
				t.Fatal(err)
			}
		}
	}
	twice := func(f func(t *testing.T, e *Engine)) func(t *testing.T, e *Engine) {
		return func(t *testing.T, e *Engine) { f(t, e); f(t, e) }
	}
	medium := explainText("floor", 30) // about 2.2 KB: folds on a repeat
	return []settingCase{
		{"hook ledger-only", string(events.ParamLedgerOnly), Options{LedgerOnly: true}, hook("s1", "go test ./...", distillable())},
		{"hook keep-secrets", string(events.ParamKeepSecrets), Options{KeepSecrets: true}, hook("s2", "cat .env", tokenLine(1)+explainText("env", 5))},
		{"hook redaction count", string(events.ParamRedacted), Options{}, hook("s3", "cat .env", tokenLine(2)+explainText("red", 5))},
		{"hook fold floor", string(events.ParamFoldFloor), Options{FoldFloor: 5000}, twice(hook("s4", "cat big.txt", medium))},
		{"exec ledger-only", string(events.ParamLedgerOnly), Options{LedgerOnly: true}, call(CallInput{Command: "go test ./...", Text: distillable(), Session: "s5"})},
		{"exec keep-secrets", string(events.ParamKeepSecrets), Options{}, call(CallInput{Command: "cat .env", Text: tokenLine(3) + explainText("x", 5), Session: "s6", KeepSecrets: true})},
		{"exec redaction count", string(events.ParamRedacted), Options{}, call(CallInput{Command: "cat .env", Text: tokenLine(4) + explainText("y", 5), Session: "s7"})},
		{"exec fold floor", string(events.ParamFoldFloor), Options{FoldFloor: 5000}, twice(call(CallInput{Command: "cat big.txt", Text: medium, Session: "s8"}))},
	}
}

// Every rerun path (replay --at, replay --verify, diff, bench --store's
// chained Rerun) reproduces decisions recorded under ledger-only,
// keep-secrets, a redaction count and a fold floor: red when one of them
// stops honouring the recorded setting. Each case is first checked to
// depend on its setting (a rerun without the parameter differs).
func TestRerunPathsHonourRecordedSettings(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	var seqs []events.Seq
	names := map[events.Seq]settingCase{}
	for _, c := range settingCases() {
		c.opt.Now = fixedClock()
		e, err := New(ctx, log, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := log.Last(ctx)
		c.run(t, e)
		after, _ := log.Last(ctx)
		for q := before + 1; q <= after; q++ {
			seqs = append(seqs, q)
			names[q] = c
		}
	}
	// Each case depends on its setting: its last batch, rerun without the
	// parameter on the recorded state, differs.
	for _, c := range settingCases() {
		var q events.Seq
		for _, s := range seqs {
			if names[s].name == c.name {
				q = s
			}
		}
		batch, err := log.Get(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(log, Options{})
		e.dry = true
		if err := e.foldAll(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
		rec, err := e.Recorded(batch)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Params[c.param] == "" {
			t.Fatalf("%s: batch %d does not record %s: %v", c.name, q, c.param, rec.Params)
		}
		rec.Params = maps.Clone(rec.Params)
		delete(rec.Params, c.param)
		_, out, err := e.rerunRecorded(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if sha(out) == rec.Emitted.Output {
			t.Fatalf("%s: a rerun without %s decides the same: the case does not test it", c.name, c.param)
		}
	}

	sum, err := Verify(ctx, log, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Compared != len(seqs) || sum.Identical != sum.Compared {
		t.Errorf("replay --verify: %d of %d identical, differing %v", sum.Identical, sum.Compared, sum.Mismatches)
	}
	for _, q := range seqs {
		r, err := Replay(ctx, log, q, nil)
		if err != nil || !r.Match {
			t.Errorf("replay --at %d (%s): match %v, %v", q, names[q].name, r.Match, err)
		}
		d, err := Diff(ctx, log, q, nil)
		if err != nil || !d.Match {
			t.Errorf("diff %d (%s): match %v, %v", q, names[q].name, d.Match, err)
		}
	}
	// bench --store: a chained rerun into a scratch log.
	scratch, err := New(ctx, memlog.New(), Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	err = replayBatches(ctx, log, func(batch []events.Event) error {
		rec, err := scratch.Recorded(batch)
		if err != nil {
			return err
		}
		_, out, err := scratch.Rerun(ctx, rec)
		if err != nil {
			return err
		}
		if sha(out) != rec.Emitted.Output {
			t.Errorf("chained rerun %d (%s) differs", rec.Seq, names[rec.Seq].name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replayBatches calls fn with every batch of log, in order.
func replayBatches(ctx context.Context, log events.Log, fn func([]events.Event) error) error {
	var cur []events.Event
	err := log.Read(ctx, 1, func(e events.Event) error {
		if len(cur) > 0 && cur[0].Seq != e.Seq {
			if err := fn(cur); err != nil {
				return err
			}
			cur = nil
		}
		cur = append(cur, e)
		return nil
	})
	if err != nil || len(cur) == 0 {
		return err
	}
	return fn(cur)
}
