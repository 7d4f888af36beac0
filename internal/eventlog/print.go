package eventlog

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/omnictx/omni/events"
)

// Source reads one page of the log from sequence from (ReadPage, through
// the daemon or in-process).
type Source func(ctx context.Context, q Query, from events.Seq) (Page, error)

// Options shape Print.
type Options struct {
	Query Query
	// JSON prints one JSON object per event (Decoder's shape); otherwise
	// one summary line (Summary).
	JSON bool
	// Follow keeps reading new batches after the end of the log, every
	// Poll, until ctx ends or the query's upper bound is reached.
	Follow bool
	// Poll is the interval between reads while following (0: 500 ms).
	Poll time.Duration
}

// Print writes the events of src that o.Query selects to w, one line each,
// in stream order, flushing after every page. With o.Follow it then waits
// for new batches until ctx ends (which is not an error) or o.Query.To is
// passed. Errors: src's, or a write error.
func Print(ctx context.Context, w io.Writer, src Source, o Options) error {
	poll := o.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	dec := NewDecoder()
	defer dec.Close()
	from := o.Query.From
	for {
		p, err := src(ctx, o.Query, from)
		if err != nil {
			if o.Follow && ctx.Err() != nil {
				return bw.Flush()
			}
			return err
		}
		for _, e := range p.Entries {
			if o.JSON {
				b, err := dec.JSON(e)
				if err != nil {
					return err
				}
				bw.Write(b)
				bw.WriteByte('\n')
			} else {
				bw.WriteString(Summary(e))
				bw.WriteByte('\n')
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		from = max(p.Next, from)
		if !p.Done(o.Query) {
			continue
		}
		if !o.Follow || (o.Query.To != 0 && from > o.Query.To) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// Decoder renders entries as JSON with their compressed bytes decoded. It
// is not safe for concurrent use.
type Decoder struct {
	z *zstd.Decoder
}

// NewDecoder returns a Decoder; Close releases it.
func NewDecoder() *Decoder {
	z, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	return &Decoder{z: z}
}

// Close releases the decoder.
func (d *Decoder) Close() { d.z.Close() }

// textInvoked is an Invoked payload with its input decoded: input_text
// when the bytes are UTF-8, else input as base64 of the decoded bytes.
type textInvoked struct {
	events.Invoked
	Input       json.RawMessage `json:"input,omitempty"`
	InputText   *string         `json:"input_text,omitempty"`
	DecodeError string          `json:"decode_error,omitempty"`
}

// textArchived is an Archived payload with its block decoded: text when
// the bytes are UTF-8, else data as base64 of the decoded bytes.
type textArchived struct {
	events.Archived
	Data        json.RawMessage `json:"data,omitempty"`
	Text        *string         `json:"text,omitempty"`
	DecodeError string          `json:"decode_error,omitempty"`
}

// jsonEntry is an Entry whose byte payloads are decoded (its Invoked and
// Archived fields shadow the event's).
type jsonEntry struct {
	Entry
	Invoked  *textInvoked  `json:"invoked,omitempty"`
	Archived *textArchived `json:"archived,omitempty"`
}

// JSON renders e as one JSON object (no newline): the event's own fields
// (as the log encodes them: events.Encode) plus "seq" and "index"; an
// invoked event's input becomes "input_text" and an archived block's data
// "text", decompressed, with the codec dropped. Bytes that are not UTF-8
// stay base64 ("input", "data") after decompression; bytes that do not
// decompress stay as stored, with "decode_error". Errors: JSON encoding's.
func (d *Decoder) JSON(e Entry) ([]byte, error) {
	out := jsonEntry{Entry: e}
	if iv := e.Event.Invoked; iv != nil {
		t := &textInvoked{Invoked: *iv}
		t.Input, t.InputText, t.Codec, t.DecodeError = d.text(iv.Codec, iv.Input)
		out.Invoked = t
	}
	if ar := e.Event.Archived; ar != nil {
		t := &textArchived{Archived: *ar}
		t.Data, t.Text, t.Codec, t.DecodeError = d.text(ar.Codec, ar.Data)
		out.Archived = t
	}
	return json.Marshal(out)
}

// text decodes stored bytes: the text, or base64 JSON of the bytes, the
// codec left on them, and the decode error.
func (d *Decoder) text(c events.Codec, b []byte) (json.RawMessage, *string, events.Codec, string) {
	if len(b) == 0 {
		return nil, nil, events.CodecNone, "" // nothing stored (withheld, forgotten)
	}
	raw := b
	if c == events.CodecZstd {
		var err error
		if raw, err = d.z.DecodeAll(b, nil); err != nil {
			enc, _ := json.Marshal(b)
			return enc, nil, c, err.Error()
		}
	} else if c != events.CodecNone {
		enc, _ := json.Marshal(b)
		return enc, nil, c, fmt.Sprintf("unknown codec %q", c)
	}
	if utf8.Valid(raw) {
		s := string(raw)
		return nil, &s, events.CodecNone, ""
	}
	enc, _ := json.Marshal(raw)
	return enc, nil, events.CodecNone, ""
}

// Summary renders e as one line for people: sequence.index, time (UTC, to
// the second), kind, reader ("-" without a session) and what the event
// says, shortened. Every part a payload wrote (ids, commands, sources) is
// made printable (events.Printable): an id holding a newline or an escape
// sequence cannot forge a line or act on the terminal.
func Summary(e Entry) string {
	reader := e.Reader().String()
	if reader == "" {
		reader = "-"
	}
	return events.Printable(fmt.Sprintf("%d.%d %s %-14s %s %s", e.Seq, e.Index, e.Time.UTC().Format(time.RFC3339),
		e.Kind, reader, about(e.Event)))
}

// about says in a few words what one event records.
func about(e events.Event) string {
	switch {
	case e.Invoked != nil:
		iv := e.Invoked
		s := fmt.Sprintf("door=%s input=%dB", iv.Door, iv.InputBytes)
		if c := iv.Params[string(events.ParamCommand)]; c != "" {
			s += " command=" + clip(c)
		}
		if v := iv.Params[string(events.ParamInput)]; v != "" {
			s += " input=" + v
		}
		return s
	case e.Emitted != nil:
		em := e.Emitted
		s := fmt.Sprintf("tool=%s %dB→%dB", em.Tool, em.RawBytes, em.DeliveredBytes)
		if em.Source != "" {
			s += " source=" + clip(em.Source)
		}
		if em.Reason != "" {
			s += " reason=" + em.Reason
		}
		return s
	case e.Folded != nil:
		f := e.Folded
		return fmt.Sprintf("marker=%s scope=%s lines=%d handle=%s", f.Marker, f.Scope, f.Lines, f.Handle)
	case e.Archived != nil:
		a := e.Archived
		return fmt.Sprintf("handle=%s lines=%d bytes=%d", a.Handle, a.Lines, a.Bytes)
	case e.Compacted != nil:
		return "trigger=" + e.Compacted.Trigger
	case e.Retrieved != nil:
		return fmt.Sprintf("handle=%s found=%t", e.Retrieved.Handle, e.Retrieved.Found)
	case e.ReaderStarted != nil:
		return "source=" + e.ReaderStarted.Source
	case e.SessionEnded != nil:
		return "reason=" + e.SessionEnded.Reason
	case e.Distilled != nil:
		d := e.Distilled
		s := fmt.Sprintf("%dB→%dB", d.RawBytes, d.DeliveredBytes)
		if d.Distiller != "" {
			s = "distiller=" + d.Distiller + " " + s
		}
		if d.Redacted > 0 {
			s += fmt.Sprintf(" redacted=%d", d.Redacted)
		}
		if d.Reason != "" {
			s += " reason=" + d.Reason
		}
		return s
	case e.GoalSet != nil:
		return "goal=" + clip(e.GoalSet.Text)
	case e.Remembered != nil:
		return "fact=" + clip(e.Remembered.Fact)
	case e.Pruned != nil:
		return fmt.Sprintf("before=%d kept=%d", e.Pruned.Before, len(e.Pruned.Kept))
	case e.Forgotten != nil:
		f := e.Forgotten
		return fmt.Sprintf("batches=%d occurrences=%d withheld=%d blocks=%d", len(f.Seqs), f.Occurrences, f.Withheld, len(f.Handles))
	case e.Lost != nil:
		return fmt.Sprintf("batches=%d reason=%s", len(e.Lost.Seqs), e.Lost.Reason)
	}
	return ""
}

// clip quotes s on one line, cut to 80 runes with "…".
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:79]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
