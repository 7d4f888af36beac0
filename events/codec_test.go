package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// allKinds lists every event kind with a payload. TestEveryPayloadHasAKind
// fails when a payload field is added to Event without being listed here,
// so the round trip below covers it.
var allKinds = []Kind{KindInvoked, KindEmitted, KindFolded, KindArchived, KindCompacted, KindRetrieved,
	KindReaderStarted, KindSessionEnded, KindDistilled, KindGoalSet, KindRemembered, KindPruned, KindLost, KindForgotten}

var codecTime = time.Date(2026, 11, 29, 12, 34, 56, 789012345, time.UTC)

// payloadFields maps each payload's JSON name (the Kind it carries) to its
// field index in Event.
func payloadFields() map[Kind]int {
	out := map[Kind]int{}
	et := reflect.TypeFor[Event]()
	for i := 0; i < et.NumField(); i++ {
		f := et.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out[Kind(name)] = i
		}
	}
	return out
}

// fill sets every exported field reachable from v to a non-zero value,
// with strings that need JSON escaping.
func fill(v reflect.Value, name string, seed int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d <&> \u2028 é \"q\" \\ \t\n", name, seed))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(1000 + seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(2000 + seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5 + float64(seed))
	case reflect.Slice:
		switch v.Type().Elem().Kind() {
		case reflect.Uint8:
			v.SetBytes([]byte{0, 1, 0xff, '"', byte(seed)})
		case reflect.Uint64:
			if !reflect.TypeFor[[]uint64]().ConvertibleTo(v.Type()) {
				s := reflect.MakeSlice(v.Type(), 2, 2)
				for i := 0; i < 2; i++ {
					fill(s.Index(i), name, seed+i)
				}
				v.Set(s)
				return
			}
			v.Set(reflect.ValueOf([]uint64{0, 1, 1 << 63, math.MaxUint64, uint64(seed)}).Convert(v.Type()))
		default:
			s := reflect.MakeSlice(v.Type(), 2, 2)
			for i := 0; i < 2; i++ {
				fill(s.Index(i), name, seed+i)
			}
			v.Set(s)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 3; i++ {
			k := reflect.New(v.Type().Key()).Elem()
			fill(k, name+"-key", seed+i)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, name+"-val", seed+i)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), name, seed)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(codecTime.Add(time.Duration(seed) * time.Second)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fill(v.Field(i), f.Name, seed+i)
		}
	}
}

// fullEvent returns an event of kind k with every envelope field and its
// payload's every field set.
func fullEvent(k Kind, seed int) Event {
	var e Event
	ev := reflect.ValueOf(&e).Elem()
	for i := 0; i < ev.NumField(); i++ {
		f := ev.Type().Field(i)
		if f.Tag.Get("json") == "-" || f.Type.Kind() == reflect.Pointer {
			continue
		}
		fill(ev.Field(i), f.Name, seed+i)
	}
	fill(ev.Field(payloadFields()[k]), string(k), seed)
	e.Kind = k
	return e
}

func TestEveryPayloadHasAKind(t *testing.T) {
	fields := payloadFields()
	listed := map[Kind]bool{}
	for _, k := range allKinds {
		listed[k] = true
		if _, ok := fields[k]; !ok {
			t.Errorf("kind %q has no payload field named %q in Event", k, k)
		}
	}
	for k := range fields {
		if !listed[k] {
			t.Errorf("payload %q is not in allKinds: add its Kind so the codec tests cover it", k)
		}
	}
}

// TestRoundTripEveryKind: every kind, every field set, encodes and decodes
// to the same values, sets Seq and Index, and re-encodes to the same bytes.
func TestRoundTripEveryKind(t *testing.T) {
	var batch []Event
	for i, k := range allKinds {
		batch = append(batch, fullEvent(k, 10*i))
	}
	// One event with every payload at once.
	all := fullEvent(KindEmitted, 500)
	av := reflect.ValueOf(&all).Elem()
	for k, i := range payloadFields() {
		fill(av.Field(i), string(k), 600)
	}
	batch = append(batch, all, Event{}) // and an empty event
	for _, b := range [][]Event{batch, batch[:1], {}} {
		enc, err := Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(enc, []byte(`{"v":1,"events":[`)) {
			t.Fatalf("envelope: %.40s", enc)
		}
		got, err := Decode(enc, 42)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(b) {
			t.Fatalf("%d events, want %d", len(got), len(b))
		}
		for i := range got {
			if got[i].Seq != 42 || got[i].Index != i {
				t.Fatalf("event %d: Seq %d Index %d", i, got[i].Seq, got[i].Index)
			}
			if !got[i].Time.Equal(b[i].Time) {
				t.Fatalf("event %d: time %v, want %v", i, got[i].Time, b[i].Time)
			}
			want, g := b[i], got[i]
			want.Seq, want.Index, want.Time, g.Time = 42, i, time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, want) {
				t.Fatalf("event %d (%s) differs after the round trip:\n got %+v\nwant %+v", i, b[i].Kind, g, want)
			}
		}
		again, err := Encode(got)
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("re-encoding differs (%v):\n%s\n%s", err, again, enc)
		}
	}
}

// v1Batch is a batch encoded by the version 1 codec. The
// encoding is stable: fields may be added, never renamed or retyped, so this
// must keep decoding to the same values.
const v1Batch = `{"v":1,"events":[` +
	`{"id":"01KB6Z0000AAAAAAAAAAAAAAAA","kind":"invoked","time":"2026-11-29T12:34:56.789012345Z","project":"/home/dev/proj","session":"s1","agent":"a1","invoked":{"door":"hook","host":"claude-code","codec":"zstd","input":"KLUv/QQAAQAAAA==","input_bytes":17,"params":{"exit_code":"0"}}},` +
	`{"id":"01KB6Z0000BBBBBBBBBBBBBBBB","kind":"emitted","time":"2026-11-29T12:34:56.789012345Z","project":"/home/dev/proj","session":"s1","call":"01KB6Z0000AAAAAAAAAAAAAAAA","emitted":{"tool":"Bash","source":"go test ./...","lines":"AQAAAAAAAAD//////////w==","raw_bytes":2048,"delivered_bytes":300,"raw_lines":40,"delivered_lines":5,"output":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","replied":true,"reason":"floor:264","failed":true,"unrecorded":true,"paid":["0123456789abcdef"],"repeat_bytes":1700}},` +
	`{"id":"01KB6Z0000CCCCCCCCCCCCCCCC","kind":"folded","time":"2026-11-29T12:34:56Z","folded":{"marker":"run","scope":"session","handle":"0123456789abcdef","first_line":3,"lines":30,"bytes":1800,"marker_bytes":62,"from":"cat a.go","source":"cat a.go"}},` +
	`{"id":"01KB6Z0000DDDDDDDDDDDDDDDD","kind":"archived","time":"2026-11-29T12:34:56Z","archived":{"handle":"0123456789abcdef","lines":30,"bytes":1800,"codec":"zstd","data":"AAEC"}},` +
	`{"id":"01KB6Z0000EEEEEEEEEEEEEEEE","kind":"compacted","time":"2026-11-29T12:34:56Z","session":"s1","compacted":{"trigger":"PreCompact"}},` +
	`{"id":"01KB6Z0000FFFFFFFFFFFFFFFF","kind":"retrieved","time":"2026-11-29T12:34:56Z","session":"s1","retrieved":{"handle":"0123456789abcdef","found":true}},` +
	`{"id":"01KB6Z0000GGGGGGGGGGGGGGGG","kind":"reader_started","time":"2026-11-29T12:34:56Z","session":"s1","agent":"a2","reader_started":{"source":"SubagentStart"}},` +
	`{"id":"01KB6Z0000HHHHHHHHHHHHHHHH","kind":"session_ended","time":"2026-11-29T12:34:56Z","session":"s1","session_ended":{"reason":"logout"}}]}`

// TestV1BatchStillDecodes: the version 1 bytes decode to the values they
// were written with, and re-encode to a superset of the same JSON (fields
// may be added, never renamed or retyped).
func TestV1BatchStillDecodes(t *testing.T) {
	evs, err := Decode([]byte(v1Batch), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 8 {
		t.Fatalf("%d events", len(evs))
	}
	em := evs[1].Emitted
	if em == nil || em.Source != "go test ./..." || len(em.Lines) != 2 || em.Lines[0] != 1 || em.Lines[1] != math.MaxUint64 ||
		em.RawBytes != 2048 || !em.Failed || em.Paid[0] != "0123456789abcdef" || em.RepeatBytes != 1700 {
		t.Fatalf("emitted %+v", em)
	}
	if f := evs[2].Folded; f == nil || f.Scope != ScopeSession || f.FirstLine != 3 || f.MarkerBytes != 62 {
		t.Fatalf("folded %+v", f)
	}
	if a := evs[3].Archived; a == nil || a.Codec != CodecZstd || !bytes.Equal(a.Data, []byte{0, 1, 2}) {
		t.Fatalf("archived %+v", a)
	}
	if inv := evs[0].Invoked; inv == nil || inv.Door != DoorHook || inv.Params[string(ParamExitCode)] != "0" || inv.InputBytes != 17 {
		t.Fatalf("invoked %+v", inv)
	}
	if evs[6].Reader() != (Reader{Session: "s1", Agent: "a2"}) || !evs[0].Time.Equal(codecTime) {
		t.Fatal("envelope fields")
	}
	re, err := Encode(evs)
	if err != nil {
		t.Fatal(err)
	}
	var old, now any
	if err := json.Unmarshal([]byte(v1Batch), &old); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(re, &now); err != nil {
		t.Fatal(err)
	}
	if path, ok := jsonSubset(old, now, "$"); !ok {
		t.Fatalf("re-encoding lost or changed %s", path)
	}
}

// jsonSubset reports whether every value in a is in b at the same place.
func jsonSubset(a, b any, path string) (string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := jsonSubset(v, w, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := jsonSubset(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(a, b)
}

func TestKeysJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	big := make(Keys, 1000)
	for i := range big {
		big[i] = r.Uint64()
	}
	for _, k := range []Keys{nil, {}, {0}, {1}, {1, 2, math.MaxUint64, 1 << 63}, big} {
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		var got Keys
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if len(got) != len(k) || (len(k) > 0 && !reflect.DeepEqual(got, k)) {
			t.Fatalf("round trip of %d keys gave %d", len(k), len(got))
		}
		if b2, _ := json.Marshal(got); !bytes.Equal(b2, b) {
			t.Fatalf("re-encoding differs: %s vs %s", b2, b)
		}
	}
	// The documented form: base64 of 8 little-endian bytes per key.
	if b, _ := json.Marshal(Keys{1, 0x0102030405060708}); string(b) != `"AQAAAAAAAAAIBwYFBAMCAQ=="` {
		t.Fatalf("Keys encoding %s", b)
	}
	for _, bad := range []string{`"AQ=="`, `"AQAAAAAAAAAB"`, `"!!!!"`, `123`, `["AQAAAAAAAAA="]`, `{}`} {
		var k Keys
		if err := json.Unmarshal([]byte(bad), &k); err == nil {
			t.Errorf("Keys accepted %s", bad)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{`{"v":2,"events":[]}`, `{"events":[]}`, `{"v":0}`, `null`, `{"v":-1,"events":[{"kind":"emitted"}]}`} {
		if _, err := Decode([]byte(in), 1); !errors.Is(err, ErrVersion) {
			t.Errorf("Decode(%s) = %v, want ErrVersion", in, err)
		}
	}
	for _, in := range []string{``, `not json`, `{`, `[]`, `"v"`, `{"v":"1"}`, `{"v":1,"events":{}}`,
		`{"v":1,"events":[{"time":"yesterday"}]}`, `{"v":1,"events":[{"emitted":{"lines":"AQ=="}}]}`,
		`{"v":1,"events":[{"archived":{"data":"@@@"}}]}`, `{"v":1,"events":[{"folded":{"lines":"3"}}]}`,
		"{\"v\":1,\"events\":[]}\x00", `{"v":1,"events":[]} {}`} {
		_, err := Decode([]byte(in), 1)
		if err == nil {
			t.Errorf("Decode(%q) succeeded", in)
		} else if errors.Is(err, ErrVersion) {
			t.Errorf("Decode(%q): malformed input reported as ErrVersion", in)
		}
	}
	if evs, err := Decode([]byte(`{"v":1,"events":[]}`), 1); err != nil || len(evs) != 0 {
		t.Fatalf("empty batch: %v %v", evs, err)
	}
}

// FuzzDecode: Decode never panics, and whatever decodes re-encodes, decodes
// again and re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for i, k := range allKinds {
		b, _ := Encode([]Event{fullEvent(k, i)})
		f.Add(b)
	}
	f.Add([]byte(v1Batch))
	for _, s := range []string{``, `null`, `{"v":1}`, `{"v":1,"events":[null,{}]}`, `{"v":2}`, `{"V":1,"Events":[{"KIND":"x"}]}`,
		`{"v":1,"events":[{"time":"2026-01-01T00:00:00+05:30","emitted":{"lines":""}}]}`, "{\"v\":1,\"events\":[{\"id\":\"\xff\"}]}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := Decode(data, 9)
		if err != nil {
			return
		}
		b1, err := Encode(evs)
		if err != nil {
			t.Fatalf("decoded %q but cannot re-encode: %v", data, err)
		}
		evs2, err := Decode(b1, 9)
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v\n%s", err, b1)
		}
		b2, err := Encode(evs2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("not stable (%v):\n%s\n%s", err, b1, b2)
		}
	})
}
