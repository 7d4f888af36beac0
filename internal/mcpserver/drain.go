package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// DrainWait bounds how long the server keeps answering after stdin ends.
const DrainWait = 30 * time.Second

// Drain sits between the transport and stdin/stdout and holds back the
// end of stdin until every request read so far has been answered (or wait
// has passed), so that requests piped in all get their answers: the SDK
// stops serving at the end of its input.
type Drain struct {
	in   *bufio.Reader
	out  io.Writer
	wait time.Duration

	mu        sync.Mutex
	cond      *sync.Cond
	requests  int    // requests read (a method and an id)
	responses int    // responses written (an id and no method)
	pending   []byte // read but not yet returned
	partial   []byte // written, not yet a whole line
}

// NewDrain returns a Drain over in and out that waits up to wait at the end
// of in.
func NewDrain(in io.Reader, out io.Writer, wait time.Duration) *Drain {
	d := &Drain{in: bufio.NewReaderSize(in, 64<<10), out: out, wait: wait}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// rpcShape is enough of a JSON-RPC message to tell requests from responses.
type rpcShape struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (s rpcShape) hasID() bool { return len(s.ID) > 0 && string(s.ID) != "null" }

// Read returns stdin line by line, counting requests; at the end of stdin
// it waits for the outstanding answers before reporting io.EOF.
func (d *Drain) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		line, err := d.in.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 && !json.Valid(t) {
			// A line that is not JSON would end the SDK's read loop and the
			// server with it: skip it (its sender gets no answer) and go on.
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			var m rpcShape
			if json.Unmarshal(line, &m) == nil && m.hasID() && m.Method != "" {
				d.mu.Lock()
				d.requests++
				d.mu.Unlock()
			}
			d.pending = line
		} else if err != nil {
			if err == io.EOF {
				d.drain()
			}
			return 0, err
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

func (d *Drain) drain() {
	deadline := time.Now().Add(d.wait)
	t := time.AfterFunc(d.wait, func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer t.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.responses < d.requests && time.Now().Before(deadline) {
		d.cond.Wait()
	}
}

// Write passes the server's output on, counting responses.
func (d *Drain) Write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		var m rpcShape
		if json.Unmarshal(d.partial[:i], &m) == nil && m.hasID() && m.Method == "" {
			d.responses++
		}
		d.partial = d.partial[i+1:]
	}
	d.cond.Broadcast()
	d.mu.Unlock()
	return n, err
}

// Close is a no-op: stdin and stdout belong to the process.
func (d *Drain) Close() error { return nil }
