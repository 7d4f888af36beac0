package eventstest

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/omnictx/omni/events"
)

// RandomBatches returns n batches of random events over small pools of
// sessions, agents, projects, tools, sources, line keys and handles, with
// event times that mostly advance by seconds and sometimes jump by days (so
// pruning and series coarsening run) or step back.
func RandomBatches(seed int64, n int) []events.Event {
	rng := rand.New(rand.NewSource(seed))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	handles := []string{"h000000000000001", "h000000000000002", "h000000000000003", "h000000000000004", "h000000000000005"}
	var out []events.Event
	id := 0
	next := func() string { id++; return fmt.Sprintf("%026d", id) }
	for seq := events.Seq(1); seq <= events.Seq(n); seq++ {
		switch r := rng.Intn(100); {
		case r < 3:
			t = t.Add(time.Duration(rng.Intn(20)) * 24 * time.Hour)
		case r < 6:
			t = t.Add(-time.Duration(rng.Intn(3600)) * time.Second)
		default:
			t = t.Add(time.Duration(rng.Intn(600)) * time.Second)
		}
		base := events.Event{Seq: seq, Time: t, Project: pick("/p1", "/p2", ""), Session: pick("s1", "s2", "s3", ""),
			Agent: pick("", "", "a1")}
		var batch []events.Event
		add := func(ev events.Event) {
			ev.Index = len(batch)
			ev.ID = next()
			batch = append(batch, ev)
		}
		switch k := rng.Intn(10); {
		case k < 6: // an invocation
			inv := base
			inv.Kind = events.KindInvoked
			inv.Invoked = &events.Invoked{Door: events.Door(pick("hook", "exec", "pipe")), Host: pick("", "claude-code"),
				Params: map[string]string{string(events.ParamTTY): pick("", "0", "1")}}
			add(inv)
			call := batch[0].ID
			nf := rng.Intn(3)
			for i := 0; i < nf; i++ {
				h := handles[rng.Intn(len(handles))]
				ev := base
				ev.Call, ev.Kind = call, events.KindArchived
				ev.Archived = &events.Archived{Handle: h, Lines: rng.Intn(50), Bytes: rng.Intn(5000)}
				add(ev)
			}
			if rng.Intn(2) == 0 {
				ev := base
				ev.Call, ev.Kind = call, events.KindDistilled
				ev.Distilled = &events.Distilled{Distiller: pick("", "go-test", "git"), RawBytes: 1000 + rng.Intn(1000),
					DeliveredBytes: rng.Intn(1000), Redacted: rng.Intn(2), Collapsed: rng.Intn(4) == 0,
					Truncated: rng.Intn(4) == 0, Passthrough: rng.Intn(4) == 0, Reason: pick("", "not-smaller")}
				add(ev)
			}
			folded := func() {
				ev := base
				ev.Call, ev.Kind = call, events.KindFolded
				ev.Folded = &events.Folded{Marker: pick("session", "project", "run"), Handle: handles[rng.Intn(len(handles))],
					Lines: rng.Intn(40), Bytes: rng.Intn(4000), MarkerBytes: rng.Intn(80)}
				add(ev)
			}
			for i := 0; i < nf; i++ {
				folded()
			}
			em := &events.Emitted{Tool: pick("Bash", "Read", "Grep"), Source: pick("go test ./...", "/a.go", "/b.go", ""),
				LineSource: pick("", "", "/a.go"), RawBytes: rng.Intn(5000), DeliveredBytes: rng.Intn(3000),
				Replied: rng.Intn(2) == 0, Reason: pick("", "floor:264", "failed"), Failed: rng.Intn(5) == 0,
				Unrecorded: rng.Intn(10) == 0, DecideMicros: int64(rng.Intn(60000)), RepeatBytes: rng.Intn(100)}
			for i, m := 0, rng.Intn(30); i < m; i++ {
				em.Lines = append(em.Lines, uint64(rng.Intn(200)))
			}
			if rng.Intn(4) == 0 {
				em.Paid = []string{handles[rng.Intn(len(handles))]}
			}
			if rng.Intn(3) == 0 {
				em.Handles = []string{handles[rng.Intn(len(handles))]}
			}
			ev := base
			ev.Call, ev.Kind, ev.Emitted = call, events.KindEmitted, em
			add(ev)
			if rng.Intn(5) == 0 { // a fold recorded after its Emitted event
				folded()
			}
		case k < 7:
			ev := base
			ev.Kind = events.KindRetrieved
			ev.Retrieved = &events.Retrieved{Handle: handles[rng.Intn(len(handles))], Found: rng.Intn(5) != 0}
			add(ev)
		case k < 8:
			ev := base
			ev.Kind = events.KindCompacted
			ev.Compacted = &events.Compacted{Trigger: pick("auto", "manual")}
			add(ev)
		case k < 9:
			ev := base
			ev.Kind = events.KindGoalSet
			ev.GoalSet = &events.GoalSet{Text: pick("", "ship it")}
			add(ev)
			ev = base
			ev.Kind = events.KindRemembered
			ev.Remembered = &events.Remembered{Fact: pick("uses gob", "tests are slow")}
			add(ev)
		default:
			if rng.Intn(3) == 0 { // omni gc: a cut, a kept block archived again
				ev := base
				ev.Kind = events.KindPruned
				kept := handles[rng.Intn(len(handles))]
				ev.Pruned = &events.Pruned{Before: seq - events.Seq(rng.Intn(int(seq))), Cutoff: t.Add(-24 * time.Hour), Kept: []string{kept}}
				add(ev)
				ev = base
				ev.Kind = events.KindArchived
				ev.Archived = &events.Archived{Handle: kept, Lines: rng.Intn(50), Bytes: rng.Intn(5000)}
				add(ev)
				break
			}
			ev := base
			ev.Kind = events.KindSessionEnded
			ev.SessionEnded = &events.SessionEnded{Reason: pick("", "exit")}
			add(ev)
		}
		out = append(out, batch...)
	}
	return out
}
