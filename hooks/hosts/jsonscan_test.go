package hosts

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
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

// FuzzJSONValid: jsonValid agrees with json.Valid wherever it decides.
func FuzzJSONValid(f *testing.F) {
	for _, s := range jsonScanSeeds {
		f.Add(s)
	}
	for _, s := range []string{`"0123456789abcdef\"x\\y\u00e9z0123456789"`, "\"0123456789abcdé\x01fg\"", `["0123456789abcdefgh","0123456789\q"]`,
		"\"0123456789abcdef\x7f\xff\x80\"", `"0123456789abcdef`, `-0.5e+3`, `01`, `1.`, `-`, `1e`, `[1,]`, `{"a":1,}`, `"\u00"`, `"\uZZZZ"`, "\"\x01\"", `tru`, `nulll`, ` [ ] `, `{"a":[1,{"b":null}],"c":-1.0E-2}`, "\"\xff\xfe\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		valid, known := jsonValid([]byte(s))
		if known && valid != json.Valid([]byte(s)) {
			t.Fatalf("jsonValid(%q) = %v, json.Valid %v", s, valid, !valid)
		}
	})
}

// FuzzDecodePayload: DecodePayload decodes every payload as json.Unmarshal
// does, with the same error; each "@" of the input is also tried as 600
// bytes, so tool_input, tool_response and error values take the path that
// validates them apart.
func FuzzDecodePayload(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"@"},"tool_response":{"stdout":"@\n","stderr":""}}`,
		`{"tool_response":"@","TOOL_RESPONSE":"x"}`, `{"tool_response":"@","tool_response":{"a":"@"}}`, `{"tool_resp\u006fnse":"@"}`,
		`{"error":"@","Error":1}`, `{"tool_response":["@",1,-2.5e3,true,null]} `, `{"tool_response":"@\u0001"}`, "{\"tool_response\":\"@\x01\"}",
		`{"tool_response":{"stdout":"@"}`, `{"tool_response":{"stdout":"@"}}}`, `{"session_id":5,"tool_response":"@"}`, `{"tool_response":[@]}`,
		`{"tool_input":"@","tool_response":"@","error":"@","cwd":"/w"}`, `{"tool_response":01,"x":"@"}`, `{"tool_response":"\@"}`,
		`{"hook_event_name":"PostToolUse","tool_response":"turn_id rollout-@","transcript_path":"/h/s.jsonl"}`,
		`{"hook_event_name":"PostToolUse","TURN_ID":"t","tool_response":"@"}`, `{"hook_event_name":"PostToolUse","turn_id":null,"turn_id":"t"}`,
		`{"hook_event_name":"SessionStart","transcript_path":"/h/rollout\u002d1.jsonl"}`, `{"hook_event_name":"SessionStart","Transcript_Path":"/h/rollout-1.jsonl"}`,
		`{"hook_event_name":"PostToolUse","turn\u005fid":"t"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range []string{s, strings.ReplaceAll(s, "@", strings.Repeat("a", 600))} {
			var want, got Payload
			werr := json.Unmarshal([]byte(d), &want)
			gerr := DecodePayload([]byte(d), &got)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("%q: DecodePayload error %v, json.Unmarshal %v", d, gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: DecodePayload %+v, json.Unmarshal %+v", d, got, want)
			}
			if werr == nil && Detect(want.Signature()) == Codex && !mayBeCodex([]byte(d)) {
				t.Fatalf("%q: Codex's payload, and mayBeCodex says it is not", d)
			}
		}
	})
}

// TestDecodePayloadCuts: a large tool_response takes the fast path (its
// field aliases the payload), and a payload whose second, differently
// cased tool_response key would win in encoding/json does not.
func TestDecodePayloadCuts(t *testing.T) {
	big := strings.Repeat("a", 2*payloadCutMin)
	b := []byte(`{"hook_event_name":"PostToolUse","tool_response":{"stdout":"` + big + `"}}`)
	var p Payload
	if err := DecodePayload(b, &p); err != nil || len(p.ToolResponse) == 0 || &p.ToolResponse[0] != &b[bytes.Index(b, []byte(`{"stdout"`))] {
		t.Fatalf("large tool_response not kept aside: %v", err)
	}
	b = []byte(`{"tool_response":"` + big + `","Tool_Response":"late"}`)
	if err := DecodePayload(b, &p); err != nil || string(p.ToolResponse) != `"late"` {
		t.Fatalf("the later key lost: %q, %v", p.ToolResponse, err)
	}
}

// FuzzReplyJSON: replyJSON writes Marshal's bytes (replyJSONMarshal), and
// fails where it fails. The input's lines are the keys and values of the
// tool_response it renders, in turn.
func FuzzReplyJSON(f *testing.F) {
	for _, s := range []string{
		"stdout\n\"a\\nb\"\nstderr\n\"\"", "k\n \"x\" \nb\n{ \"a\" : [1, 2] }", "a\n\"<&>\u2028\"\nb\n\"\\u2028\"",
		"a\n\"x\" \"y\"\nb\ntrue", "a\n\"bad\x01\"", "a\n{\"x\":1", "é\n\"\xff\"\n<k>\n12", "a\n\n", "",
	} {
		f.Add(s, "PostToolUse")
	}
	f.Fuzz(func(t *testing.T, s, ev string) {
		out := map[string]json.RawMessage{}
		parts := strings.Split(s, "\n")
		for i := 0; i+1 < len(parts); i += 2 {
			out[parts[i]] = json.RawMessage(parts[i+1])
			if parts[i+1] == "" {
				out[parts[i]] = nil
			}
		}
		for _, m := range []map[string]json.RawMessage{out, nil} {
			got, gerr := replyJSON(ev, m)
			want, werr := replyJSONMarshal(ev, m)
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%q: replyJSON %q, %v; Marshal %q, %v", s, got, gerr, want, werr)
			}
		}
	})
}

// FuzzContainsQuoted: containsQuoted is bytes.Contains of the quoted word.
func FuzzContainsQuoted(f *testing.F) {
	f.Add(`{"a":"x\"PostToolUse\" y","hook_event_name":"PostToolUse"}`, "PostToolUse")
	f.Add(`PostToolUse"PostToolUse""`, "PostToolUse")
	f.Add(`""x"`, "x")
	f.Add(`x"`, "x")
	f.Fuzz(func(t *testing.T, b, w string) {
		if strings.Contains(w, `"`) {
			return
		}
		if got, want := containsQuoted([]byte(b), w), strings.Contains(b, `"`+w+`"`); got != want {
			t.Fatalf("containsQuoted(%q, %q) = %v, want %v", b, w, got, want)
		}
	})
}

// strSpecial8 finds a quote, a backslash or a byte under 0x20 at any of
// its eight places, whatever the other bytes, and nothing else.
func TestStrSpecial8(t *testing.T) {
	ref := func(x uint64) bool {
		for i := range 8 {
			if c := byte(x >> (8 * i)); c == '"' || c == '\\' || c < 0x20 {
				return true
			}
		}
		return false
	}
	for _, fill := range []byte{'a', 0xff, 0x80, 0x21, 0x5d, 0x5b, 0x23} {
		for pos := range 8 {
			for c := range 256 {
				var x uint64
				for i := range 8 {
					b := fill
					if i == pos {
						b = byte(c)
					}
					x |= uint64(b) << (8 * i)
				}
				if got := strSpecial8(x); got != ref(x) {
					t.Fatalf("strSpecial8(%#x) = %v", x, got)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		if x := r.Uint64(); strSpecial8(x) != ref(x) {
			t.Fatalf("strSpecial8(%#x) = %v", x, !ref(x))
		}
	}
}
