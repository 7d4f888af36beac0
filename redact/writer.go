package redact

import (
	"bytes"
	"io"
)

// Writer redacts a stream line by line before it reaches w (the stderr of
// `omni exec`, which reaches the agent without passing the daemon). A line
// is written once its newline arrives, so a private key split across
// writes is still recognised; Close writes the last, unterminated line.
// Lines longer than 1 MiB are redacted and written in pieces.
type Writer struct {
	w     io.Writer
	buf   []byte
	st    lineState
	spans []span
	// Values counts the values replaced so far.
	Values int
}

// NewWriter returns a Writer that writes the redacted stream to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

const writerMaxLine = 1 << 20

// Write buffers p and writes every complete line, redacted. It reports
// len(p) unless w fails.
func (rw *Writer) Write(p []byte) (int, error) {
	rw.buf = append(rw.buf, p...)
	for {
		i := bytes.IndexByte(rw.buf, '\n')
		if i < 0 {
			if len(rw.buf) < writerMaxLine {
				return len(p), nil
			}
			i = pieceEnd(rw.buf)
		}
		if err := rw.line(rw.buf[:i+1]); err != nil {
			return 0, err
		}
		rw.buf = rw.buf[i+1:]
	}
}

// pieceEnd returns the index of the last byte of the piece a line longer
// than writerMaxLine is cut into: after the last byte in its final 64 KiB
// that no credential can hold (a blank, a quote, a comma, a semicolon,
// brackets), so a token is never cut in two; the whole buffer when its
// tail is one run of token characters (no credential is that long).
func pieceEnd(b []byte) int {
	const window = 64 << 10
	for k := len(b) - 1; k >= 0 && k >= len(b)-window; k-- {
		switch b[k] {
		case ' ', '\t', '\r', '"', '\'', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '|':
			return k
		}
	}
	return len(b) - 1
}

// Close writes the buffered last line (it does not close w).
func (rw *Writer) Close() error {
	if len(rw.buf) == 0 {
		return nil
	}
	err := rw.line(rw.buf)
	rw.buf = nil
	return err
}

func (rw *Writer) line(raw []byte) error {
	s := string(raw)
	body := s
	if n := len(body); n > 0 && body[n-1] == '\n' {
		body = body[:n-1]
	}
	if n := len(body); n > 0 && body[n-1] == '\r' {
		body = body[:n-1]
	}
	rw.spans = lineSpans(body, &rw.st, rw.spans[:0])
	if len(rw.spans) > 0 {
		out, n := apply(body, rw.spans, nil)
		rw.Values += n
		s = out + s[len(body):]
	}
	_, err := io.WriteString(rw.w, s)
	return err
}
