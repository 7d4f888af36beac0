package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/projections/stats"
	"github.com/omnictx/omni/replay"
)

// update rewrites the golden files under testdata/ (go test ./cmd/omni -update).
var update = flag.Bool("update", false, "rewrite golden files")

// checkGolden compares got with testdata/<name>, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/omni -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fixtureText returns n distinct lines tagged tag.
func fixtureText(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s %03d  /srv/%s/shard-%04d.dat  size %7d  crc %08x\n", tag, i, tag, i*3, 1000+i*37, uint32(i*2654435761))
	}
	return b.String()
}

func fixturePayload(session, agent, project, event, tool string, extra map[string]any) []byte {
	p := map[string]any{"session_id": session, "cwd": project, "hook_event_name": event}
	if tool != "" {
		p["tool_name"] = tool
	}
	if agent != "" {
		p["agent_id"] = agent
	}
	for k, v := range extra {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	return b
}

func fixtureBash(session, agent, project, cmd, out string) []byte {
	return fixturePayload(session, agent, project, "PostToolUse", "Bash", map[string]any{
		"tool_input":    map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
}

func fixtureRead(session, project, path, content string) []byte {
	n := strings.Count(content, "\n")
	return fixturePayload(session, "", project, "PostToolUse", "Read", map[string]any{
		"tool_input": map[string]any{"file_path": path},
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": content,
			"numLines": n, "startLine": 1, "totalLines": n}}})
}

// fixtureClock starts at 2026-03-02 09:00 UTC and moves 3 minutes per call.
func fixtureClock() func() time.Time {
	t := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(3 * time.Minute); return t }
}

// fixtureLog builds the fixed event log of the golden tests: hook calls
// that fold (whole, run, rerun-free run from another source, a Read with
// fillers, a project fold), calls left alone for every reason (floor,
// structured, failure, host cap, after a compaction), a retrieve, a
// compaction, a subagent, terminal rows (omni exec), a goal and a fact,
// and hand-made batches with Distilled events (a distiller, a collapse, a
// redaction, a distiller followed by a ledger fold).
func fixtureLog(t *testing.T) *memlog.Log {
	t.Helper()
	ctx := context.Background()
	log := memlog.New()
	e, err := hooks.New(ctx, log, hooks.Options{Now: fixtureClock(), ProjectOf: func(d string) string { return d }})
	if err != nil {
		t.Fatal(err)
	}
	const alpha, beta = "/home/dev/alpha", "/home/dev/beta"
	big := fixtureText("big", 40)
	bigLines := strings.SplitAfter(big, "\n")
	hook := func(p []byte) hooks.Result {
		t.Helper()
		r, err := e.HookResult(ctx, hooks.HookInput{Stdin: p})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	hook(fixtureBash("s1", "", alpha, "cat big.txt", big))
	r := hook(fixtureBash("s1", "", alpha, "cat big.txt", big))
	if len(r.Folds) != 1 {
		t.Fatalf("fixture: second cat did not fold (%s)", r.Reason)
	}
	wholeHandle := r.Folds[0].Handle
	hook(fixtureBash("s1", "", alpha, "grep -n shard big.txt", "matches:\n"+strings.Join(bigLines[10:30], "")+"done\n"))
	code := fixtureText("code", 30)
	hook(fixtureRead("s1", alpha, alpha+"/main.go", code))
	hook(fixtureRead("s1", alpha, alpha+"/main.go", code))
	hook(fixtureBash("s1", "agent-7", alpha, "git status", "On branch main\nnothing to commit\n"))
	hook(fixtureBash("s1", "", alpha, "cat data.json", `{"items": [`+strings.Repeat(`{"id": 1, "name": "shard"}, `, 20)+`{"id": 2}]}`+"\n"))
	hook(fixturePayload("s1", "", alpha, "PostToolUseFailure", "Bash", map[string]any{
		"tool_input": map[string]any{"command": "go test ./..."}, "error": "Exit code 1\n--- FAIL: TestShard (0.01s)\nFAIL\n"}))
	hook(fixtureBash("s2", "", alpha, "cat own.txt", fixtureText("own", 20)))
	r = hook(fixtureBash("s2", "", alpha, "cat mix.txt", fixtureText("fresh", 20)+strings.Join(bigLines[:20], "")))
	if len(r.Folds) != 1 || r.Folds[0].Kind != "project" {
		t.Fatalf("fixture: no project fold: %+v %s", r.Folds, r.Reason)
	}
	if _, err := e.Retrieve(ctx, wholeHandle, events.Reader{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	hook(fixturePayload("s1", "", alpha, "PreCompact", "", map[string]any{"trigger": "auto"}))
	hook(fixtureBash("s1", "", alpha, "cat big.txt", big))
	hook(fixtureBash("s3", "", beta, "make", strings.Repeat(fixtureText("build", 10), 60)))
	for i := 0; i < 2; i++ {
		if _, err := e.Call(ctx, hooks.CallInput{Door: events.DoorExec, Command: "cat big.txt", Text: big, Session: "term", Cwd: alpha}); err != nil {
			t.Fatal(err)
		}
	}
	hook(fixturePayload("s2", "", alpha, "SessionEnd", "", map[string]any{"reason": "exit"}))
	if _, err := e.SetGoal(ctx, alpha, events.Reader{Session: "s1"}, "fold less, explain more"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Remember(ctx, alpha, events.Reader{}, "the fixture is fixed"); err != nil {
		t.Fatal(err)
	}

	// Batches as the distiller work will record them.
	at := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
	n := 0
	distilled := func(session, src string, d events.Distilled, fold *events.Folded, delivered int) {
		t.Helper()
		n++
		at = at.Add(3 * time.Minute)
		id := func(k int) string { return fmt.Sprintf("01KFIXTURE%08d%08d", n, k) }
		base := events.Event{Time: at, Project: beta, Session: session, Call: id(0)}
		inv := base
		inv.ID, inv.Kind, inv.Call = id(0), events.KindInvoked, ""
		inv.Invoked = &events.Invoked{Door: events.DoorHook, Host: hooks.HostClaudeCode, InputBytes: d.RawBytes}
		dv := base
		dv.ID, dv.Kind, dv.Distilled = id(1), events.KindDistilled, &d
		batch := []events.Event{inv, dv}
		if fold != nil {
			fv := base
			fv.ID, fv.Kind, fv.Folded = id(2), events.KindFolded, fold
			batch = append(batch, fv)
		}
		em := base
		em.ID, em.Kind = id(3), events.KindEmitted
		em.Emitted = &events.Emitted{Tool: "Bash", Source: src, RawBytes: d.RawBytes, DeliveredBytes: delivered,
			RawLines: d.RawBytes / 50, DeliveredLines: delivered / 50, Replied: true}
		batch = append(batch, em)
		if _, err := log.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	distilled("s4", "pytest -q", events.Distilled{Distiller: "pytest", RawBytes: 5000, DeliveredBytes: 1200}, nil, 1200)
	distilled("s4", "find . -name '*.go'", events.Distilled{Collapsed: true, RawBytes: 3000, DeliveredBytes: 900}, nil, 900)
	distilled("s4", "env", events.Distilled{Redacted: 2, RawBytes: 800, DeliveredBytes: 790}, nil, 790)
	distilled("s4", "git log", events.Distilled{Distiller: "git-log", RawBytes: 4000, DeliveredBytes: 1000},
		&events.Folded{Marker: "run", Scope: events.ScopeSession, Handle: "00000000000000aa", Lines: 8, Bytes: 600, MarkerBytes: 80}, 480)
	return log
}

// fixtureService is a service over the fixture log, as a daemon would hold.
func fixtureService(t *testing.T) *daemon.Service {
	t.Helper()
	log := fixtureLog(t)
	eng, err := hooks.New(context.Background(), log, hooks.Options{Now: fixtureClock(), ProjectOf: func(d string) string { return d }})
	if err != nil {
		t.Fatal(err)
	}
	return daemon.ServiceOf(log, eng, "")
}

// serviceStats calls the "stats" method and decodes its reply.
func serviceStats(t *testing.T, svc *daemon.Service, since time.Time) (stats.Report, []byte) {
	t.Helper()
	req, _ := json.Marshal(daemon.StatsRequest{Since: since})
	b, err := svc.Handle(context.Background(), "stats", req)
	if err != nil {
		t.Fatal(err)
	}
	var rep stats.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, b
}

func TestStatsGolden(t *testing.T) {
	svc := fixtureService(t)
	rep, _ := serviceStats(t, svc, time.Time{})
	var js bytes.Buffer
	if err := writeStatsJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "stats/report.json", js.Bytes())
	for _, c := range []struct {
		name string
		o    statsOptions
	}{
		{"summary", statsOptions{view: "summary", top: 15}},
		{"detail", statsOptions{view: "detail", top: 3}},
		{"folds", statsOptions{view: "folds"}},
		{"projects", statsOptions{view: "projects"}},
		{"terminal", statsOptions{view: "summary", terminal: true}},
	} {
		var b bytes.Buffer
		renderStats(&b, rep, c.o)
		checkGolden(t, "stats/"+c.name+".txt", b.Bytes())
	}

	// The figures the golden files hold, checked by hand.
	a := rep.Agent
	if a.Calls != 16 || rep.Terminal.Calls != 2 || a.BytesSaved != a.RawBytes-a.DeliveredBytes {
		t.Errorf("calls %d (terminal %d), saved %d", a.Calls, rep.Terminal.Calls, a.BytesSaved)
	}
	m := a.Mechanisms
	if sum := m.Folded.BytesSaved + m.Distilled.BytesSaved + m.Collapsed.BytesSaved + m.Redacted.BytesSaved + m.Cut.BytesSaved; sum != a.BytesSaved {
		t.Errorf("mechanism bytes add to %d, headline %d", sum, a.BytesSaved)
	}
	if m.Distilled.Calls != 2 || m.Distilled.BytesSaved != 3800+3000 || m.Distilled.BaseBytes != 9000 {
		t.Errorf("distilled %+v", m.Distilled)
	}
	if m.Collapsed.Calls != 1 || m.Collapsed.BytesSaved != 2100 || m.Redacted.RedactedValues != 2 || m.Redacted.BytesSaved != 10 {
		t.Errorf("collapsed %+v redacted %+v", m.Collapsed, m.Redacted)
	}
	if m.Folded.Calls != 5 || m.Folded.Folds != 5 || m.LeftAlone.Calls != 8 {
		t.Errorf("folded %+v, left alone %+v", m.Folded, m.LeftAlone)
	}
	if l := a.Lifetimes; l.Compactions != 1 || l.CallsBeforeCompaction.Max != 8 {
		t.Errorf("lifetimes %+v", l)
	}

	// --since keeps the later events only, folded afresh.
	since := time.Date(2026, 3, 2, 9, 40, 0, 0, time.UTC)
	rs, _ := serviceStats(t, svc, since)
	if rs.Since != "2026-03-02T09:40:00Z" || rs.Agent.Calls != 5 || rs.Terminal.Calls != 2 {
		t.Errorf("since: %s, %d agent calls, %d terminal", rs.Since, rs.Agent.Calls, rs.Terminal.Calls)
	}
	var b bytes.Buffer
	renderStats(&b, rs, statsOptions{view: "summary"})
	checkGolden(t, "stats/since.txt", b.Bytes())
}

// The live projection (the Engine's, appended batch by batch) and a fresh
// fold of the same log give the same report.
func TestStatsLiveEqualsFold(t *testing.T) {
	svc := fixtureService(t)
	live, _ := serviceStats(t, svc, time.Time{})
	folded, err := statsSince(context.Background(), svc.Log(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(live)
	b, _ := json.Marshal(folded)
	if !bytes.Equal(a, b) {
		t.Fatalf("live and folded reports differ:\n%s\n%s", a, b)
	}
}

func TestParseSince(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 3, 2, 15, 30, 0, 0, loc)
	for _, c := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "1h", want: now.Add(-time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "3d", want: now.Add(-72 * time.Hour)},
		{in: "2w", want: now.Add(-14 * 24 * time.Hour)},
		{in: "today", want: time.Date(2026, 3, 2, 0, 0, 0, 0, loc)},
		{in: "Week", want: now.Add(-7 * 24 * time.Hour)},
		{in: "month", want: now.Add(-30 * 24 * time.Hour)},
		{in: "2026-01-31", want: time.Date(2026, 1, 31, 0, 0, 0, 0, loc)},
		{in: "2026-01-31T10:00:00Z", want: time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)},
		{in: "yesterday", bad: true},
		{in: "-1h", bad: true},
		{in: "0d", bad: true},
	} {
		got, err := parseSince(c.in, now)
		if c.bad {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestNumAndSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 24160293: "24,160,293"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1500: "1.5 kB", 2383998: "2.4 MB", -2500: "-2.5 kB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}

// Every command of this issue documents its flags, exit codes and an
// example in --help.
func TestStatsFamilyHelp(t *testing.T) {
	for _, args := range [][]string{{"stats"}, {"diff"}, {"explain"}, {"dashboard"}, {"goal"}, {"remember"}, {"session"}} {
		var out, errb bytes.Buffer
		code := run(append(args, "--help"), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		h := out.String()
		if code != 0 || errb.Len() != 0 {
			t.Errorf("%v --help: exit %d, stderr %q", args, code, errb.String())
		}
		for _, want := range []string{"Usage:", "Flags:", "Exit codes", "Examples:", "  omni " + args[0]} {
			if !strings.Contains(h, want) {
				t.Errorf("%v --help lacks %q:\n%s", args, want, h)
			}
		}
	}
}

func TestStatsBadFlags(t *testing.T) {
	t.Setenv("OMNI_HOME", t.TempDir())
	t.Setenv("OMNI_NO_DAEMON", "1")
	for _, args := range [][]string{{"stats", "--view", "pie"}, {"stats", "--since", "soon"}} {
		var out, errb bytes.Buffer
		if code := run(args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

// openHome opens a home's store in-process for the test, closed at cleanup.
func openHome(t *testing.T, home string) *daemon.Service {
	t.Helper()
	svc, closeFn, err := daemon.OpenLocal(context.Background(), configOf(home), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	return svc
}

// After `omni bench --corpus ../shared/corpus/*.jsonl --home H`, the stats
// of H — through the service and through `omni stats` itself — equal the
// bench's own totals exactly: calls, raw, delivered and saved bytes, folds
// per marker kind, and the per-project rows.
func TestStatsEqualBench(t *testing.T) {
	b := sharedBench(t)
	if b.rep.HookFailures != 0 {
		t.Fatalf("bench had %d hook failures", b.rep.HookFailures)
	}
	check := func(where string, rep stats.Report) {
		t.Helper()
		a, all := rep.Agent, b.rep.All
		if a.Calls != all.Calls || a.RawBytes != all.RawBytes || a.DeliveredBytes != all.DeliveredBytes ||
			a.BytesSaved != all.BytesSaved || a.Mechanisms.Folded.Folds != all.Folds {
			t.Errorf("%s: stats calls %d raw %d delivered %d saved %d folds %d; bench %+v", where, a.Calls, a.RawBytes,
				a.DeliveredBytes, a.BytesSaved, a.Mechanisms.Folded.Folds, all)
		}
		if rep.Terminal.Calls != 0 {
			t.Errorf("%s: %d terminal rows from a bench", where, rep.Terminal.Calls)
		}
		kinds := map[string]int{}
		for _, f := range a.Folds {
			kinds[f.Marker] = f.Folds
		}
		if fmt.Sprint(kinds) != fmt.Sprint(b.rep.FoldsByKind) {
			t.Errorf("%s: folds by marker %v, bench %v", where, kinds, b.rep.FoldsByKind)
		}
		if len(a.ByProject) != len(b.rep.BySource) {
			t.Errorf("%s: %d projects, bench %d sources", where, len(a.ByProject), len(b.rep.BySource))
		}
		for _, r := range a.ByProject {
			s := b.rep.BySource[r.Name]
			if s == nil || r.Calls != s.Calls || r.RawBytes != s.RawBytes || r.DeliveredBytes != s.DeliveredBytes || r.Folds != s.Folds {
				t.Errorf("%s: project %s: %+v, bench %+v", where, r.Name, r, s)
			}
		}
	}
	svc, closeFn, err := daemon.OpenLocal(context.Background(), configOf(b.home), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := serviceStats(t, svc, time.Time{})
	check("service", rep)
	// The same numbers from a fresh fold (the --since path).
	folded, err := statsSince(context.Background(), svc.Log(), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	check("fold", folded)

	// And through the command, as a person would run it.
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OMNI_HOME", b.home)
	t.Setenv("OMNI_NO_DAEMON", "1")
	var out, errb bytes.Buffer
	if code := run([]string{"stats", "--json"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("omni stats --json: exit %d: %s", code, errb.String())
	}
	var cli stats.Report
	if err := json.Unmarshal(out.Bytes(), &cli); err != nil {
		t.Fatal(err)
	}
	check("omni stats --json", cli)
	out.Reset()
	if code := run([]string{"stats"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("omni stats: exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{
		num(b.rep.All.BytesSaved) + " B never reached the model",
		num(b.rep.All.Calls) + " calls in ",
		num(b.rep.All.Folds) + " folds",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("omni stats lacks %q:\n%s", want, text)
		}
	}
	t.Logf("omni stats after the corpus bench:\n%s", text)
}

// statsSince folds the whole log into stats that ignore events before since.
func statsSince(ctx context.Context, log events.Log, since time.Time) (stats.Report, error) {
	st := stats.NewSince(since)
	if _, err := replay.Fold(ctx, log, 0, 0, st); err != nil {
		return stats.Report{}, err
	}
	return st.Report(), nil
}
