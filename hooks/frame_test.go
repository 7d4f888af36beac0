package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/omnictx/omni/events"
)

// frameCase is one host's shell result in its own frame: payload builds a
// successful call of session that printed body (n distinguishes the
// frame's volatile part between calls), text reads the model's text out of
// a reply, and frameLines are lines of the frame, never content.
type frameCase struct {
	name       string
	payload    func(t *testing.T, session, body string, n int) []byte
	text       func(t *testing.T, reply []byte) string
	frameLines []string
}

func frameCases() []frameCase {
	reason := func(t *testing.T, reply []byte) string {
		var r struct{ Reason string }
		if err := json.Unmarshal(reply, &r); err != nil {
			t.Fatalf("reply %s: %v", reply, err)
		}
		return r.Reason
	}
	return []frameCase{
		{"gemini", func(t *testing.T, session, body string, n int) []byte {
			text := fmt.Sprintf("<untrusted_context>\nOutput: %sProcess Group PGID: %d\n</untrusted_context>", body, 4000+n)
			p := withValue(t, hostsGeminiShell, "tool_response.llmContent", text)
			return withValue(t, string(p), "session_id", session)
		}, reason, []string{"Process Group PGID: ", "Output: ", "untrusted_context>"}},
		{"codex", func(t *testing.T, session, body string, n int) []byte {
			text := fmt.Sprintf("Warning: truncated output (original token count: %d)\nTotal output lines: %d\n\n%s", 9000+n, 300+n, body)
			p := withValue(t, string(codexPayload(t, 0)), "tool_response", text)
			return withValue(t, string(p), "session_id", session)
		}, func(t *testing.T, reply []byte) string {
			return strings.TrimPrefix(reason(t, reply), "Process exited with code 0\nOutput:\n")
		}, []string{"Warning: truncated output", "Total output lines: "}},
		{"copilot", func(t *testing.T, session, body string, n int) []byte {
			return copilotBash(session, "", body, 0, "success")
		}, copilotText, []string{"<shellId: "}},
	}
}

// onlyMarkers reports whether every non-blank line of text is a marker,
// and whether one of them is project scope.
func onlyMarkers(text string) (only, project bool) {
	only = true
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "[OMNI: "):
			project = project || strings.Contains(l, "not shown here")
		default:
			only = false
		}
	}
	return only, project
}

// A second session on the same store runs a command the first one showed,
// after it was shown part of it itself: the lines of the host's frame
// (Gemini's "Output: " and "Process Group PGID", Codex's truncation
// header, Copilot's exit line) are not content, so they never keep the
// output from being only markers when one is project scope: the project
// fold is dropped and its lines delivered. Red when a frame line is handed
// to the ledger (the reply is then the frame around a "not shown here"
// marker and an "already shown" one: the Gemini CLI case).
func TestHostFrameNeverContent(t *testing.T) {
	for _, c := range frameCases() {
		t.Run(c.name, func(t *testing.T) {
			e, log := newTestEngine(t)
			defer func() {
				// Every decision replays byte for byte, the frame split included.
				if s, err := Verify(context.Background(), log, nil, nil); err != nil || s.Compared == 0 || s.Identical != s.Compared {
					t.Errorf("replay --verify: %+v %v", s, err)
				}
			}()
			ctx := context.Background()
			newPart, shared := longText(c.name+"-new", 40), longText(c.name+"-seen", 40)
			call := func(session, body string, n int) Result {
				t.Helper()
				r, err := e.HookResult(ctx, HookInput{Stdin: c.payload(t, session, body, n)})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range c.frameLines {
					if strings.Contains(r.Raw, f) {
						t.Fatalf("the ledger was handed the frame line %q:\n%s", f, r.Raw)
					}
				}
				return r
			}
			call("first", newPart+shared, 1)
			call("second", shared, 2)
			r := call("second", newPart+shared, 3)
			if r.Reply == nil {
				t.Fatalf("nothing folded (reason %q): the shown part should fold", r.Reason)
			}
			text := c.text(t, r.Reply)
			body := text
			for _, f := range c.frameLines {
				var kept []string
				for _, l := range strings.Split(body, "\n") {
					if i := strings.Index(l, f); i >= 0 && (f == "Output: " || f == "untrusted_context>") {
						l = l[:i] + l[i+len(f):]
						if f == "untrusted_context>" {
							l = strings.Trim(l, "</")
						}
					} else if i >= 0 {
						continue
					}
					kept = append(kept, l)
				}
				body = strings.Join(kept, "\n")
			}
			if only, project := onlyMarkers(body); only && project {
				t.Fatalf("the model reads only markers, one of them project scope:\n%s", text)
			}
			if !strings.Contains(text, c.name+"-new line 000") || !strings.Contains(text, "[OMNI: 40 lines already shown") {
				t.Fatalf("want the project lines delivered and the session's own lines folded:\n%s", text)
			}
			for _, f := range c.frameLines {
				if f != "untrusted_context>" && !strings.Contains(text, f) {
					t.Fatalf("the frame line %q is not in the reply:\n%s", f, text)
				}
			}
		})
	}
}

// A failing command's result passes whole, and the host's exit line is
// not recorded as a line the model read: Copilot's closing line, Cline's
// opening one, Gemini's status lines. Red when the ledger is handed one.
func TestHostFrameNotRecordedOnFailure(t *testing.T) {
	body := longText("fail", 30)
	for _, c := range []struct {
		name, frame string
		payload     []byte
	}{
		{"copilot", "<shellId: ", copilotBash("s", "", body, 2, "success")},
		{"cline", "[Command exited with code", withValue(t, hostsClineRun, "tool_response", map[string]any{"output": "[Command exited with code 2]\n" + body, "success": false})},
		{"gemini", "Exit Code: ", withValue(t, hostsGeminiShell, "tool_response.llmContent", "<untrusted_context>\nOutput: "+body+"Exit Code: 2\nProcess Group PGID: 7\n</untrusted_context>")},
	} {
		e, _ := newTestEngine(t)
		r, err := e.HookResult(context.Background(), HookInput{Stdin: c.payload})
		if err != nil || r.Reply != nil {
			t.Fatalf("%s: a failing command was answered: %s %v", c.name, r.Reply, err)
		}
		if strings.Contains(r.Raw, c.frame) || !strings.Contains(r.Raw, "fail line 029") {
			t.Fatalf("%s: the ledger was handed the frame, or lost the output:\n%s", c.name, r.Raw)
		}
	}
}

// A Gemini call recorded before omni split its frame (no host_frame
// param) replays with the frame inside the text, as it was decided then;
// a live call records the param, and its replay splits the frame again.
func TestGeminiFrameReplay(t *testing.T) {
	ctx := context.Background()
	body := longText("rp", 60)
	p := withValue(t, hostsGeminiShell, "tool_response.llmContent", "<untrusted_context>\nOutput: "+body+"Process Group PGID: 77\n</untrusted_context>")
	e, _ := newTestEngine(t)
	for i := 0; i < 2; i++ {
		r, err := e.hookAt(ctx, HookInput{Stdin: p}, fixedClock()(), &replayCtx{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(r.Raw, "rp line") {
			t.Fatalf("a replay without host_frame split the frame:\n%s", r.Raw[:40])
		}
	}
	e, log := newTestEngine(t)
	r, err := e.HookResult(ctx, HookInput{Stdin: p})
	if err != nil || !strings.HasPrefix(r.Raw, "rp line 000") {
		t.Fatalf("live call: %v %q", err, r.Raw[:20])
	}
	recorded := false
	if err := log.Read(ctx, 0, func(ev events.Event) error {
		recorded = recorded || (ev.Invoked != nil && ev.Invoked.Params[string(events.ParamHostFrame)] == "1")
		return nil
	}); err != nil || !recorded {
		t.Fatalf("the live call did not record %s (%v)", string(events.ParamHostFrame), err)
	}
}
