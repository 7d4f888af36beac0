package hooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var jsonScanSeeds = []string{
	`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}] ,"d":"x\"}y"} `, `{"a":1,"a":2}`, `{"k\u0065y":"v","":null}`,
	`{"sessionId":"s","toolName":"bash","toolResult":{"textResultForLlm":"ok"}}`,
	`{"ſessionId":"s","toolName":"bash","toolResult":{"a":1}}`, `{"SESSIONID":"s"}`, `{"sess\u0069onId":"s"}`,
	`{"session_id":"s","hook_event_name":"PostToolUse","tool_response":{"stdout":"a\\\"\n\u00e9\ud83d\ude00","stderr":""}}`,
	`[1,2]`, `"str"`, `null`, `{"a":"\\"}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `{"a":1}x`, `{"\ud800":1}`, "{\"\xff\":1}",
	`"a\u0000b"`, `"\ud800x"`, `"\ud83d\ude00"`, `"é\t"`, `12`, `{"a":"b"`, `{"a":[}`,
}

// FuzzJSONScan: on valid JSON the scanner's readings are encoding/json's
// (an object's members with the last repeat winning, a string's text, and
// any key encoding/json would read into a sessionId field counts for
// mayHaveKey); on anything else it never panics.
func FuzzJSONScan(f *testing.F) {
	for _, s := range jsonScanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		got, ok := jsonObject(b)
		_, _ = jsonText(b)
		may := mayHaveKey(b, "sessionid")
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		isObj := json.Unmarshal(b, &want) == nil && want != nil
		if ok != isObj {
			t.Fatalf("%q: jsonObject ok %v, encoding/json object %v", s, ok, isObj)
		}
		if ok {
			if len(got) != len(want) {
				t.Fatalf("%q: %d members, want %d", s, len(got), len(want))
			}
			for k, v := range want {
				if g, in := got[k]; !in || !bytes.Equal(g, v) {
					t.Fatalf("%q: member %q = %q, want %q", s, k, g, v)
				}
			}
		}
		if dm, err := decodeObject(b); (err == nil) != (json.Unmarshal(b, &want) == nil) || (err == nil && len(dm) != len(want)) {
			t.Fatalf("%q: decodeObject %v (%d), encoding/json %v", s, err, len(dm), want)
		}
		gs, gerr := jsonText(b)
		var ws string
		werr := json.Unmarshal(b, &ws)
		if (gerr == nil) != (werr == nil) || gs != ws {
			t.Fatalf("%q: jsonText %q, %v; encoding/json %q, %v", s, gs, gerr, ws, werr)
		}
		var c copilotIn
		if json.Unmarshal(b, &c) == nil && c.SessionID != nil && !may {
			t.Fatalf("%q: encoding/json reads a sessionId, mayHaveKey says none", s)
		}
	})
}

// TestCopilotPayloadKeyFolding: encoding/json reads a Copilot payload's
// sessionId under any case and through escapes and Unicode's folding
// special cases, so the quick key test in front of CopilotPayload must
// let all of them through (red if it matched the key's bytes only), and a
// Claude Code payload skips the decode and comes back as it was.
func TestCopilotPayloadKeyFolding(t *testing.T) {
	for _, key := range []string{"sessionId", "SESSIONID", `sess\u0069onId`, "ſessionId"} {
		in := []byte(`{"` + key + `":"s1","toolName":"bash","toolArgs":{"command":"ls"},"toolResult":{"textResultForLlm":"a\n"}}`)
		out := CopilotPayload(in)
		if !bytes.Contains(out, []byte(`"hook_event_name":"PostToolUse"`)) || !strings.Contains(string(out), `"session_id":"s1"`) {
			t.Errorf("key %s: not read as Copilot's: %s", key, out)
		}
	}
	cc := []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":"x"}}`)
	if out := CopilotPayload(cc); !bytes.Equal(out, cc) {
		t.Fatalf("Claude Code payload changed: %s", out)
	}
}
