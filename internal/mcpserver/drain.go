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

	wmu       sync.Mutex // one writer of out at a time
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

// MaxLine is the longest request line the server reads, in bytes: a
// longer line is read through and answered with an error, never buffered
// whole. Requests are tool calls of a handle or a command line; the SDK
// ends its connection at its own cap (16 MiB, mcp.DefaultMaxLineLength),
// which this stays under.
const MaxLine = 4 << 20

// Read returns stdin line by line, counting requests; at the end of stdin
// it waits for the outstanding answers before reporting io.EOF. A line the
// SDK would end its connection on (not JSON, a batch array, an id that is
// neither a string nor an integer, no "jsonrpc":"2.0", over MaxLine) never
// reaches it: the sender gets a JSON-RPC error and the server goes on with
// the lines after it.
func (d *Drain) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		line, long, err := d.readLine()
		if long {
			d.reject(nil, -32600, "request line longer than the server's limit")
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if id, ok, msg := wellFormed(t); !ok {
				if msg != "" {
					d.reject(id, -32600, msg)
				}
				if err == nil {
					continue
				}
				line = nil
			}
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

// readLine returns the next line of stdin; long reports a line over
// MaxLine, which was read through to its end and dropped.
func (d *Drain) readLine() (line []byte, long bool, err error) {
	for {
		chunk, err := d.in.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			long = true
			line = nil
		}
		if !long {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long && err == nil {
			return nil, true, nil
		}
		return line, long, err
	}
}

// wellFormed reports whether line is one JSON-RPC 2.0 message the SDK
// reads without ending its connection. When it is not, id is the
// request's id if one could be read (else nil: the answer's id is null)
// and msg says why ("" for a line to drop without an answer: a
// notification, which gets none).
func wellFormed(line []byte) (id json.RawMessage, ok bool, msg string) {
	if !json.Valid(line) {
		return nil, false, "parse error: the line is not JSON"
	}
	if line[0] == '[' {
		return nil, false, "JSON-RPC batches are not supported: send one message per line"
	}
	if line[0] != '{' {
		return nil, false, "a message is a JSON object"
	}
	var m struct {
		Version json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil, false, "a message is a JSON object"
	}
	okID := len(m.ID) == 0 || string(m.ID) == "null" || m.ID[0] == '"' || integerID(m.ID)
	if okID {
		id = m.ID
	}
	if string(m.Version) != `"2.0"` {
		return id, false, `"jsonrpc" must be "2.0"`
	}
	if !okID {
		return nil, false, "an id is a string or an integer"
	}
	if len(m.Method) > 0 && m.Method[0] != '"' {
		return id, false, "a method is a string"
	}
	if len(m.Method) == 0 && (len(m.ID) == 0 || string(m.ID) == "null") {
		return nil, false, "a message has a method or an id"
	}
	return nil, true, ""
}

// integerID reports a JSON number that is an integer within int64.
func integerID(b json.RawMessage) bool {
	var n json.Number
	if json.Unmarshal(b, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// reject answers a line the server does not read with a JSON-RPC error
// (id null when the line's id could not be read). The answer is written
// between the SDK's messages, never inside one.
func (d *Drain) reject(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Version: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	clean := len(d.partial) == 0
	d.mu.Unlock()
	if clean {
		_, _ = d.out.Write(append(b, '\n'))
	}
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
	d.wmu.Lock()
	defer d.wmu.Unlock()
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
