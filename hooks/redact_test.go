package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/events/memlog"
	"github.com/omnictx/omni/redact/redacttest"
)

// doorPayload and leaks are redacttest.HookPayload and redacttest.Found.
func doorPayload(session, tool, event, cmd, text string) []byte {
	return redacttest.HookPayload(session, tool, event, cmd, text)
}

func leaks(s string, values []string) []string { return redacttest.Found(s, values) }

// TestNoSecretThroughAnyDoor sends every generated fake credential through
// every door twice (a hook for each tool, the failure event, a command
// carrying it, exec, pipe, distill), then looks for each value in what the
// model reads, in every event of the log (compressed inputs and archived
// blocks decoded), in the projections' checkpoint, and replays the log.
func TestNoSecretThroughAnyDoor(t *testing.T) {
	ctx := context.Background()
	log := memlog.New()
	e, err := New(ctx, log, Options{Now: fixedClock(), ProjectOf: func(string) string { return "/home/dev/proj" }})
	if err != nil {
		t.Fatal(err)
	}
	g := redacttest.New(0)
	t.Logf("seed %d", g.Seed)
	cases := g.Cases()
	var all []string
	tools := []string{"Bash", "BashOutput", "Read", "Grep", "Glob", "WebFetch", "WebSearch", "Task", "Agent", "mcp__db__query"}
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			all = append(all, c.Values...)
			if c.Command {
				r, err := e.HookResult(ctx, HookInput{Stdin: doorPayload("s1", "Bash", "PostToolUse", c.Text, "done\n")})
				if err != nil {
					t.Fatalf("%s: command hook: %v", c.Kind, err)
				}
				if l := leaks(string(r.Reply)+r.Delivered, c.Values); len(l) > 0 {
					t.Errorf("%s: command reply leaks %q", c.Kind, l)
				}
				for _, door := range []events.Door{events.DoorExec, events.DoorDistill} {
					res, err := e.Call(ctx, CallInput{Door: door, Command: c.Text, Text: "done\n", Session: "s1", Cwd: "/home/dev/proj"})
					if err != nil {
						t.Fatalf("%s: %s: %v", c.Kind, door, err)
					}
					if l := leaks(res.Delivered, c.Values); len(l) > 0 {
						t.Errorf("%s: %s delivers %q", c.Kind, door, l)
					}
				}
				continue
			}
			// Enough lines around the value that a repeat folds and
			// archives a block.
			var body strings.Builder
			for i := 0; i < 30; i++ {
				body.WriteString("config line " + c.Kind + " " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\n")
			}
			body.WriteString(c.Text)
			text := body.String()
			for _, tool := range tools {
				stdin := doorPayload("s1", tool, "PostToolUse", "cat config", text)
				r, err := e.HookResult(ctx, HookInput{Stdin: stdin})
				if err != nil {
					t.Fatalf("%s via %s: %v", c.Kind, tool, err)
				}
				seen := string(r.Reply)
				if r.Reply == nil {
					seen = string(stdin) // the host keeps its own bytes
				}
				if l := leaks(seen, c.Values); len(l) > 0 {
					t.Errorf("%s via %s: the model reads %q", c.Kind, tool, l)
				}
			}
			if _, err := e.HookResult(ctx, HookInput{Stdin: doorPayload("s1", "Bash", "PostToolUseFailure", "make deploy", text)}); err != nil {
				t.Fatalf("%s: failure event: %v", c.Kind, err)
			}
			for _, door := range []events.Door{events.DoorExec, events.DoorPipe, events.DoorDistill} {
				res, err := e.Call(ctx, CallInput{Door: door, Command: "cat config", Text: text, Session: "s1", Cwd: "/home/dev/proj"})
				if err != nil {
					t.Fatalf("%s: %s: %v", c.Kind, door, err)
				}
				if l := leaks(res.Delivered, c.Values); len(l) > 0 {
					t.Errorf("%s: %s delivers %q", c.Kind, door, l)
				}
			}
		}
	}
	// The log: every event, with compressed inputs and archived blocks
	// decoded.
	var invoked, archived int
	err = log.Read(ctx, 0, func(ev events.Event) error {
		b, _ := json.Marshal(ev)
		text := string(b)
		if ev.Invoked != nil && len(ev.Invoked.Input) > 0 {
			in, err := e.decompress(ev.Invoked.Input)
			if err != nil {
				t.Fatalf("decompress input: %v", err)
			}
			text += string(in)
			invoked++
		}
		if ev.Archived != nil {
			in, err := e.decompress(ev.Archived.Data)
			if err != nil {
				t.Fatalf("decompress block: %v", err)
			}
			text += string(in)
			archived++
		}
		if l := leaks(text, all); len(l) > 0 {
			t.Errorf("event %d.%d (%s) holds %q", ev.Seq, ev.Index, ev.Kind, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if invoked == 0 || archived == 0 {
		t.Fatalf("the test recorded %d inputs and %d blocks: it proves nothing", invoked, archived)
	}
	cp, err := e.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := cp.MarshalBinary()
	if l := leaks(string(cb), all); len(l) > 0 {
		t.Errorf("the checkpoint holds %q", l)
	}
	// Redacted inputs are stored, not withheld: every invocation replays
	// to the bytes it delivered.
	sum, err := Verify(ctx, log, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Withheld != 0 || sum.Compared == 0 || sum.Identical != sum.Compared {
		t.Errorf("verify: %d compared, %d identical, %d withheld; mismatches %v", sum.Compared, sum.Identical, sum.Withheld, sum.Mismatches)
	}
	t.Logf("%d cases (%d values), %d inputs and %d blocks recorded", len(cases), len(all)/2, invoked, archived)
}

// TestDoorGrewYAMLSaysWhy: a YAML document whose only secret is shorter
// than "[REDACTED]" grows under the door's masks; the model then reads the
// redaction marker line above it (output never grows without saying why),
// the growth is recorded (redacted_grew) and a replay decides the same.
// Red without doorRedaction.grew reaching ShortenRequest.DoorGrew.
func TestDoorGrewYAMLSaysWhy(t *testing.T) {
	ctx := context.Background()
	e, log := newTestEngine(t)
	doc := "services:\n  main:\n    image: b3log/siyuan\n    environment:\n      - TZ=America/New_York\n      - AUTH_CODE=\"soeasy\"\n"
	r, err := e.HookResult(ctx, HookInput{Stdin: doorPayload("s1", "Bash", "PostToolUse", "cat docker-compose.yml", doc)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Delivered, "soeasy") || !strings.HasPrefix(r.Delivered, "[OMNI: 1 sensitive value(s) redacted]\n") {
		t.Fatalf("delivered %q", r.Delivered)
	}
	grew := 0
	if err := log.Read(ctx, 0, func(ev events.Event) error {
		if ev.Invoked != nil && ev.Invoked.Params[string(events.ParamRedactedGrew)] == "1" {
			grew++
		}
		return nil
	}); err != nil || grew != 1 {
		t.Fatalf("invocations recorded as grown: %d (%v)", grew, err)
	}
	if rep, err := Verify(ctx, log, nil, nil); err != nil || len(rep.Mismatches) != 0 || rep.Identical != rep.Compared {
		t.Fatalf("replay: %+v %v", rep, err)
	}
}

// TestPrintedCredentialThroughDoors: the bare output of a command whose
// name says it prints a credential is masked at the hook and exec doors.
func TestPrintedCredentialThroughDoors(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, memlog.New(), Options{Now: fixedClock(), ProjectOf: func(string) string { return "/home/dev/proj" }})
	if err != nil {
		t.Fatal(err)
	}
	g := redacttest.New(0)
	t.Logf("seed %d", g.Seed)
	for _, c := range g.PrintedCases() {
		r, err := e.HookResult(ctx, HookInput{Stdin: doorPayload("s1", "Bash", "PostToolUse", c.Command, c.Text)})
		if err != nil {
			t.Fatalf("%s: %v", c.Kind, err)
		}
		seen := string(r.Reply) + r.Delivered
		if r.Reply == nil {
			t.Errorf("%s: no reply, the host shows its raw output", c.Kind)
		}
		if l := leaks(seen, c.Values); len(l) > 0 {
			t.Errorf("%s: hook reply leaks %q", c.Kind, l)
		}
		res, err := e.Call(ctx, CallInput{Door: events.DoorExec, Command: c.Command, Text: c.Text, Session: "s1", Cwd: "/home/dev/proj"})
		if err != nil {
			t.Fatalf("%s: exec: %v", c.Kind, err)
		}
		if l := leaks(res.Delivered, c.Values); len(l) > 0 {
			t.Errorf("%s: exec delivers %q", c.Kind, l)
		}
	}
}
