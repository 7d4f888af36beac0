package hooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/oklog/ulid/v2"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/redact"
)

// MinForgetBytes is the shortest value omni forget erases: a shorter one
// would match unrelated text (and, inside the stored JSON, the base64 of
// line keys), so it is refused.
const MinForgetBytes = 8

// ErrForgotten: the handle's archived bytes were erased by omni forget
// (they held a forgotten value); they cannot come back. It is an
// ErrUnknownHandle.
var ErrForgotten = fmt.Errorf("%w: its archived bytes were erased by 'omni forget'", ErrUnknownHandle)

// ErrNotRewritable: the log cannot replace a batch in place (a shared
// stream on a cluster), so nothing can be forgotten.
var ErrNotRewritable = errors.New("this log cannot rewrite its batches")

// ForgetKey returns the keyed hash events.Forgotten.Key records for value:
// lowercase hex HMAC-SHA256 under key.
func ForgetKey(key, value []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(value)
	return hex.EncodeToString(m.Sum(nil))
}

// Forget erases value from every batch of log: each batch that holds it
// (in a decoded input, an archived block, or any other field) is replaced
// in place (events.Rewriter) by a copy in which an invocation that held it
// keeps no input (its replay says withheld: Params[events.ParamInput] is
// "withheld:forgotten"), an archived block that held it keeps no bytes
// (Archived.Forgotten: retrieving its handle fails with ErrForgotten), and
// every other occurrence reads [REDACTED]. Every other field, and every
// other batch, is kept, so sequences, handles, line keys and the folds of
// the projections do not change. When something was found it then appends
// one KindForgotten event naming the keyed hash of value (ForgetKey under
// key, never the value), the batches, the handles and the counts, and
// returns it with its sequence. Errors: a value under MinForgetBytes,
// ErrNotRewritable, the log's.
func Forget(ctx context.Context, log events.Log, value, key []byte, now time.Time) (events.Forgotten, events.Seq, error) {
	out := events.Forgotten{Key: ForgetKey(key, value)}
	if len(value) < MinForgetBytes {
		return out, 0, fmt.Errorf("a value of %d bytes is too short to forget (at least %d): it would match unrelated text", len(value), MinForgetBytes)
	}
	rw, ok := log.(events.Rewriter)
	if !ok {
		return out, 0, ErrNotRewritable
	}
	f, err := newForgetter(value)
	if err != nil {
		return out, 0, err
	}
	defer f.dec.Close()
	type replacement struct {
		seq   events.Seq
		batch []events.Event
	}
	var todo []replacement
	var cur []events.Event
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		batch, n, withheld, handles, err := f.scrub(cur)
		if err != nil {
			return fmt.Errorf("batch %d: %w", cur[0].Seq, err)
		}
		if n > 0 {
			todo = append(todo, replacement{cur[0].Seq, batch})
			out.Seqs = append(out.Seqs, cur[0].Seq)
			out.Occurrences += n
			out.Withheld += withheld
			out.Handles = append(out.Handles, handles...)
		}
		cur = nil
		return nil
	}
	err = log.Read(ctx, 0, func(e events.Event) error {
		if len(cur) > 0 && cur[0].Seq != e.Seq {
			if err := flush(); err != nil {
				return err
			}
		}
		cur = append(cur, e)
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return out, 0, fmt.Errorf("read log: %w", err)
	}
	for _, r := range todo {
		if err := rw.Replace(ctx, r.seq, r.batch); err != nil {
			return out, 0, fmt.Errorf("replace batch %d: %w", r.seq, err)
		}
	}
	if len(todo) == 0 {
		return out, 0, nil
	}
	ev := events.Event{ID: ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String(),
		Kind: events.KindForgotten, Time: now.UTC(), Forgotten: &out}
	seq, err := log.Append(ctx, []events.Event{ev})
	if err != nil {
		return out, 0, fmt.Errorf("record the forget: %w", err)
	}
	return out, seq, nil
}

// forgetter finds and erases one value in events.
type forgetter struct {
	value   []byte
	jsonVal []byte // value as it appears inside a JSON string
	jsonRed []byte // [REDACTED] inside a JSON string
	// forms are the encodings the value is stored in inside a decoded
	// input or block: as is, and inside a JSON string with and without
	// HTML escaping (a hook payload is JSON; "<", ">" and "&" are
	// \u003c… in Go's encoding, as is in others).
	forms [][]byte
	dec   *zstd.Decoder
}

// Forms returns the encodings of value a store may hold it in: the bytes
// themselves, and inside a JSON string with and without HTML escaping
// (each once).
func Forms(value []byte) [][]byte {
	forms := [][]byte{value}
	add := func(b []byte) {
		for _, f := range forms {
			if bytes.Equal(f, b) {
				return
			}
		}
		forms = append(forms, b)
	}
	if q, err := json.Marshal(string(value)); err == nil {
		add(q[1 : len(q)-1])
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(string(value)) == nil {
		q := bytes.TrimSpace(buf.Bytes())
		add(q[1 : len(q)-1])
	}
	return forms
}

// count returns the occurrences of the value's forms in b.
func (f *forgetter) count(b []byte) int {
	n := 0
	for _, form := range f.forms {
		n += bytes.Count(b, form)
	}
	return n
}

func newForgetter(value []byte) (*forgetter, error) {
	q, err := json.Marshal(string(value))
	if err != nil {
		return nil, err
	}
	r, _ := json.Marshal(redact.Marker)
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &forgetter{value: value, jsonVal: q[1 : len(q)-1], jsonRed: r[1 : len(r)-1], forms: Forms(value), dec: dec}, nil
}

// decoded returns stored bytes decompressed; bytes that do not decompress
// are searched as they are.
func (f *forgetter) decoded(c events.Codec, b []byte) []byte {
	if c == events.CodecZstd {
		if raw, err := f.dec.DecodeAll(b, nil); err == nil {
			return raw
		}
	}
	return b
}

// scrub returns batch without the value, how many occurrences it held,
// how many inputs it dropped and the handles whose bytes it erased.
func (f *forgetter) scrub(batch []events.Event) ([]events.Event, int, int, []string, error) {
	out := make([]events.Event, len(batch))
	n, withheld := 0, 0
	var handles []string
	for i, e := range batch {
		if iv := e.Invoked; iv != nil {
			if k := f.count(f.decoded(iv.Codec, iv.Input)); k > 0 {
				c := *iv
				c.Input, c.Codec = nil, events.CodecNone
				c.Params = make(map[string]string, len(iv.Params)+1)
				for pk, pv := range iv.Params {
					c.Params[pk] = pv
				}
				c.Params[string(events.ParamInput)] = events.InputForgotten
				e.Invoked = &c
				n += k
				withheld++
			}
		}
		if a := e.Archived; a != nil {
			if k := f.count(f.decoded(a.Codec, a.Data)); k > 0 {
				c := *a
				c.Data, c.Codec, c.Forgotten = nil, events.CodecNone, true
				e.Archived = &c
				n += k
				handles = append(handles, a.Handle)
			}
		}
		b, err := json.Marshal(e)
		if err != nil {
			return nil, 0, 0, nil, err
		}
		if k := bytes.Count(b, f.jsonVal); k > 0 {
			var c events.Event
			if err := json.Unmarshal(bytes.ReplaceAll(b, f.jsonVal, f.jsonRed), &c); err != nil {
				return nil, 0, 0, nil, fmt.Errorf("event %s: %w", e.ID, err)
			}
			e = c
			n += k
		}
		out[i] = e
	}
	return out, n, withheld, handles, nil
}
