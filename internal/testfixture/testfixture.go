// Package testfixture is the fixed event log the golden tests of the
// command line, the stats report, the dashboard and the daemon's service
// share: hook calls that fold and that are left alone for every reason, a
// retrieve, a compaction, a subagent, terminal rows, a goal, a fact, and
// hand-made batches with distiller, collapse and redaction events. Only
// tests import it.
package testfixture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/projections/stats"
)

// Text returns n distinct lines tagged tag, each ending in a newline.
func Text(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s %03d  /srv/%s/shard-%04d.dat  size %7d  crc %08x\n", tag, i, tag, i*3, 1000+i*37, uint32(i*2654435761))
	}
	return b.String()
}

// Payload is a Claude Code hook payload of event (and tool, when not
// empty) for the reader (session, agent) in project, with extra fields.
func Payload(session, agent, project, event, tool string, extra map[string]any) []byte {
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

// Bash is a PostToolUse payload of a Bash call that printed out.
func Bash(session, agent, project, cmd, out string) []byte {
	return Payload(session, agent, project, "PostToolUse", "Bash", map[string]any{
		"tool_input":    map[string]any{"command": cmd},
		"tool_response": map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}})
}

// Read is a PostToolUse payload of a Read of path whose content is content
// (numbered from line 1).
func Read(session, project, path, content string) []byte {
	n := strings.Count(content, "\n")
	return Payload(session, "", project, "PostToolUse", "Read", map[string]any{
		"tool_input": map[string]any{"file_path": path},
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": content,
			"numLines": n, "startLine": 1, "totalLines": n}}})
}

// Clock is a synthetic clock: it starts at 2026-03-02 09:00 UTC and moves 3 minutes per call.
func Clock() func() time.Time {
	t := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(3 * time.Minute); return t }
}

// Log builds the fixed event log of the golden tests (in memory): hook calls
// that fold (whole, run, rerun-free run from another source, a Read with
// fillers, a project fold), calls left alone for every reason (floor,
// structured, failure, host cap, after a compaction), a retrieve, a
// compaction, a subagent, terminal rows (omni exec), a goal and a fact,
// and hand-made batches with Distilled events (a distiller, a collapse, a
// redaction, a distiller followed by a ledger fold).
func Log(t testing.TB) *memlog.Log {
	t.Helper()
	ctx := context.Background()
	log := memlog.New()
	e, err := hooks.New(ctx, log, hooks.Options{Now: Clock(), ProjectOf: func(d string) string { return d }})
	if err != nil {
		t.Fatal(err)
	}
	const alpha, beta = "/home/dev/alpha", "/home/dev/beta"
	big := Text("big", 40)
	bigLines := strings.SplitAfter(big, "\n")
	hook := func(p []byte) hooks.Result {
		t.Helper()
		r, err := e.HookResult(ctx, hooks.HookInput{Stdin: p})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	hook(Bash("s1", "", alpha, "cat big.txt", big))
	r := hook(Bash("s1", "", alpha, "cat big.txt", big))
	if len(r.Folds) != 1 {
		t.Fatalf("fixture: second cat did not fold (%s)", r.Reason)
	}
	wholeHandle := r.Folds[0].Handle
	hook(Bash("s1", "", alpha, "grep -n shard big.txt", "matches:\n"+strings.Join(bigLines[10:30], "")+"done\n"))
	code := Text("code", 30)
	hook(Read("s1", alpha, alpha+"/main.go", code))
	hook(Read("s1", alpha, alpha+"/main.go", code))
	hook(Bash("s1", "agent-7", alpha, "git status", "On branch main\nnothing to commit\n"))
	hook(Bash("s1", "", alpha, "cat data.json", `{"items": [`+strings.Repeat(`{"id": 1, "name": "shard"}, `, 20)+`{"id": 2}]}`+"\n"))
	hook(Payload("s1", "", alpha, "PostToolUseFailure", "Bash", map[string]any{
		"tool_input": map[string]any{"command": "go test ./..."}, "error": "Exit code 1\n--- FAIL: TestShard (0.01s)\nFAIL\n"}))
	hook(Bash("s2", "", alpha, "cat own.txt", Text("own", 20)))
	r = hook(Bash("s2", "", alpha, "cat mix.txt", Text("fresh", 20)+strings.Join(bigLines[:20], "")))
	if len(r.Folds) != 1 || r.Folds[0].Kind != "project" {
		t.Fatalf("fixture: no project fold: %+v %s", r.Folds, r.Reason)
	}
	if _, err := e.Retrieve(ctx, wholeHandle, events.Reader{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	hook(Payload("s1", "", alpha, "PreCompact", "", map[string]any{"trigger": "auto"}))
	hook(Bash("s1", "", alpha, "cat big.txt", big))
	hook(Bash("s3", "", beta, "make", strings.Repeat(Text("build", 10), 60)))
	for i := 0; i < 2; i++ {
		if _, err := e.Call(ctx, hooks.CallInput{Door: events.DoorExec, Command: "cat big.txt", Text: big, Session: "term", Cwd: alpha}); err != nil {
			t.Fatal(err)
		}
	}
	hook(Payload("s2", "", alpha, "SessionEnd", "", map[string]any{"reason": "exit"}))
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

// Service is a service over the fixture log, as a daemon would hold.
func Service(t testing.TB) *daemon.Service {
	t.Helper()
	log := Log(t)
	eng, err := hooks.New(context.Background(), log, hooks.Options{Now: Clock(), ProjectOf: func(d string) string { return d }})
	if err != nil {
		t.Fatal(err)
	}
	return daemon.ServiceOf(log, eng, "")
}

// ServiceStats calls svc's "stats" method as the daemon serves it and
// returns the decoded report and the reply's bytes.
func ServiceStats(t testing.TB, svc *daemon.Service, since time.Time) (stats.Report, []byte) {
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

// shownRe finds every number the page shows with the report path it comes
// from: <span data-json="agent.bytes_saved">2,383,998</span>.
var shownRe = regexp.MustCompile(`data-json="([^"]+)"[^>]*>([^<]*)<`)

// JSONPath returns the value at a dotted path in a decoded JSON value
// (object keys, array indexes; "" or "." is v itself); ok is false when a
// step is missing.
func JSONPath(v any, path string) (any, bool) {
	if path == "." || path == "" {
		return v, true
	}
	for _, step := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[step]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// CheckShown compares every number the page shows with the value at its
// path in the JSON report, and requires the headline figures to be shown.
// It returns how many numbers it compared; every mismatch is a test error.
func CheckShown(t testing.TB, page string, report []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(report))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("report: %v", err)
	}
	seen := map[string]bool{}
	n := 0
	for _, m := range shownRe.FindAllStringSubmatch(page, -1) {
		path, shown := m[1], strings.ReplaceAll(strings.TrimSpace(m[2]), ",", "")
		v, ok := JSONPath(doc, path)
		num, isNum := v.(json.Number)
		if !ok || !isNum {
			t.Errorf("the page shows %s = %q, the report has no number there", path, shown)
			continue
		}
		want := num.String()
		if strings.HasSuffix(path, "_pct") {
			f, _ := num.Float64()
			want = strconv.FormatFloat(f, 'f', 1, 64)
		}
		if shown != want {
			t.Errorf("the page shows %s = %q, the report %s", path, shown, want)
		}
		seen[path] = true
		n++
	}
	for _, p := range []string{"agent.bytes_saved", "agent.raw_bytes", "agent.delivered_bytes", "agent.calls", "agent.sessions",
		"agent.mechanisms.folded.bytes_saved", "agent.mechanisms.folded.saved_pct", "agent.mechanisms.folded.folds",
		"agent.mechanisms.distilled.bytes_saved", "agent.mechanisms.collapsed.bytes_saved", "agent.mechanisms.redacted.bytes_saved",
		"agent.mechanisms.left_alone.calls", "terminal.calls", "terminal.bytes_saved", "agent.lifetimes.compactions"} {
		if !seen[p] {
			t.Errorf("the page does not show %s", p)
		}
	}
	return n
}

// Explain calls the service's "explain" method for target (a sequence or a
// handle) and returns its answer; any error fails the test.
func Explain(t testing.TB, svc *daemon.Service, target string) hooks.Explanation {
	t.Helper()
	req, _ := json.Marshal(daemon.ExplainRequest{Target: target})
	b, err := svc.Handle(context.Background(), "explain", req)
	if err != nil {
		t.Fatalf("explain %s: %v", target, err)
	}
	var x hooks.Explanation
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return x
}
