package thin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// TestFrames: a request and a reply come back as written (a small body in
// one write with its header, a large one after it; a reply with and
// without stages); a frame of the other kind, a truncated one, a header
// whose fields run past its end, or a header or body that claims more
// than the limits is refused without reading on.
func TestFrames(t *testing.T) {
	for _, n := range []int{0, 16 << 10, 300 << 10} {
		var b bytes.Buffer
		body := bytes.Repeat([]byte("x"), n)
		h := Request{Token: "tok", Method: Subject(MethodHook), TimeoutMs: 4000, Stages: true}
		if err := WriteRequest(&b, h, body); err != nil {
			t.Fatal(err)
		}
		gh, gb, err := ReadRequest(&b)
		if err != nil || gh != h || !bytes.Equal(gb, body) {
			t.Fatalf("request of %d bytes: %+v, %d bytes, %v", n, gh, len(gb), err)
		}
		b.Reset()
		rh := Reply{Error: "it failed", Code: "unknown-handle", Stages: &Stages{Read: 1, Handle: 2, Decide: 3}}
		if err := WriteReply(&b, rh, body); err != nil {
			t.Fatal(err)
		}
		gr, gb, err := ReadReply(&b)
		if err != nil || gr.Error != rh.Error || gr.Code != rh.Code || gr.Stages == nil || *gr.Stages != *rh.Stages || !bytes.Equal(gb, body) {
			t.Fatalf("reply of %d bytes: %+v, %d bytes, %v", n, gr, len(gb), err)
		}
		b.Reset()
		if err := WriteReply(&b, Reply{}, body); err != nil {
			t.Fatal(err)
		}
		if gr, gb, err := ReadReply(&b); err != nil || gr != (Reply{}) || !bytes.Equal(gb, body) {
			t.Fatalf("plain reply of %d bytes: %+v, %d bytes, %v", n, gr, len(gb), err)
		}
	}
	var b bytes.Buffer
	_ = WriteReply(&b, Reply{}, []byte("xy"))
	if _, _, err := ReadRequest(bytes.NewReader(b.Bytes())); !errors.Is(err, errFrame) {
		t.Fatalf("a reply read as a request: %v", err)
	}
	if _, _, err := ReadReply(bytes.NewReader(b.Bytes()[:b.Len()-1])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a truncated reply: %v", err)
	}
	big := append(replyMagic[:], binary.BigEndian.AppendUint32(nil, MaxFrameHeader+1)...)
	if _, _, err := ReadReply(bytes.NewReader(big)); !errors.Is(err, errFrame) {
		t.Fatalf("an oversized header: %v", err)
	}
	short := append(requestMagic[:], binary.BigEndian.AppendUint32(nil, 6)...)
	short = append(short, 0, 0, 0, 9, 'a', 'b', 0, 0, 0, 0)
	if _, _, err := ReadRequest(bytes.NewReader(short)); !errors.Is(err, errFrame) {
		t.Fatalf("a header whose string runs past its end: %v", err)
	}
	huge := append(replyMagic[:], binary.BigEndian.AppendUint32(nil, 2)...)
	huge = append(huge, "{}"...)
	huge = binary.BigEndian.AppendUint32(huge, MaxFrameBody+1)
	if _, _, err := ReadReply(bytes.NewReader(huge)); !errors.Is(err, errFrame) {
		t.Fatalf("an oversized body: %v", err)
	}
}
