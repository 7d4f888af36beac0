package thin

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeAddr: the address file decodes exactly as json.Unmarshal
// decodes it, whatever it holds; the daemon's own shape takes the direct
// path.
func TestDecodeAddr(t *testing.T) {
	typical := Addr{Addr: "127.0.0.1:41233", Token: "0123456789abcdef0123456789abcdef", PID: 4242, Protocol: Protocol,
		Version: "0.1.0-dev", Cert: "MIIBaTCCAQ6gAwIBAgIPUK1I0yxdQZiIfehCScIHMAoGCCqGSM49BAMCMBYx+/==", Sock: "/home/u/.omni/daemon.4242.sock",
		Build: "exe:0123456789abcdef", Exe: "/usr/local/bin/omni", ExeStamp: "2049:1234:38671313:1764636361000000000", Backend: "embedded"}
	b, _ := json.Marshal(typical)
	var fast Addr
	if !decodeFlat(append(b, '\n'), &fast) || fast != typical {
		t.Fatalf("the daemon's address file did not take the direct path: %+v", fast)
	}
	inputs := []string{
		string(b) + "\n",
		`{}`, ` { } `, `{"pid":0,"protocol":4}`, `{"addr":"x","addr":"y"}`,
		`{"ADDR":"x"}`, `{"Addr":"x","pid":1}`, `{"addr":"a\"b"}`, `{"addr":"a\\b"}`, `{"addr":"\u00e9"}`,
		`{"addr":"é<&>"}`, "{\"addr\":\"a\xffb\"}", "{\"addr\":\"a\tb\"}", `{"pid":-1}`, `{"pid":01}`, `{"pid":1.5}`,
		`{"pid":1e3}`, `{"pid":"1"}`, `{"addr":1}`, `{"addr":null}`, `{"cert":true}`, `{"other":"x"}`,
		`{"other":{"a":1}}`, `{"addr":"x"} x`, `{"addr":"x",}`, `{"addr" "x"}`, `{"addr":"x"`, `[]`, ``,
		`{"pid":99999999999999999999}`, `{"sock":"/tmp/\u2028"}`, `{"exe_stamp":"1:2:3:4","backend":"nats nats://h:4222 stream EVENTS"}`,
	}
	for _, a := range []Addr{typical, {Addr: `a"b\c<d>&é` + "\u2028\x01"}, {Sock: "/tmp/\xff"}} {
		b, _ := json.Marshal(a)
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		var got, want Addr
		gerr := decodeAddr([]byte(in), &got)
		werr := json.Unmarshal([]byte(in), &want)
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: decodeAddr %+v, %v; json.Unmarshal %+v, %v", in, got, gerr, want, werr)
		}
	}
}
