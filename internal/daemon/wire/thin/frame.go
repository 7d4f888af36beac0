package thin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The local socket's protocol. A client connects to Addr.Sock, checks the
// peer's credentials from the kernel (the daemon's uid and pid) and only
// then writes one request frame; the daemon checks the client's uid from
// the kernel and the token, runs the method and writes one reply frame;
// the connection then closes. A frame is a 4-byte magic, a big-endian
// uint32 length and that many bytes of header, a big-endian uint32 length
// and that many bytes of body. A header is fixed fields in order: strings
// as a big-endian uint32 length and their bytes, integers as big-endian
// uint64, flags as one byte (see Request and Reply). It is not JSON, so a
// hook process pays no encoding/json for it.
const (
	// MaxSockPath is the longest socket path the daemon binds, in bytes:
	// a socket's name holds 104 bytes with its terminating NUL on macOS
	// (108 on Linux). A home whose socket path is longer gets no socket
	// and its clients use the TLS listener.
	MaxSockPath = 103
	// MaxFrameHeader bounds a frame's header, in bytes.
	MaxFrameHeader = 64 << 10
	// MaxFrameBody bounds a frame's body, in bytes: the NATS listener's
	// maximum payload (32 MiB), above the hook's 16 MiB input limit.
	MaxFrameBody = 32 << 20
	// CodeTokenRefused is the Reply.Code of a request whose token is not
	// the daemon's.
	CodeTokenRefused = "token-refused"
	// CodeNoMethod is the Reply.Code of a request for a method the daemon
	// does not serve (another protocol, or a daemon that is stopping).
	CodeNoMethod = "no-method"
)

var (
	requestMagic = [4]byte{'o', 'm', 'q', '1'}
	replyMagic   = [4]byte{'o', 'm', 'r', '1'}
)

// SockPath is the local socket of the daemon of home with process id pid:
// "<home>/daemon.<pid>.sock". One name per daemon, so a client that read
// an older address file never reaches a newer daemon's socket (its pid
// check would refuse it) and never the reverse.
func SockPath(home string, pid int) string {
	return filepath.Join(home, "daemon."+strconv.Itoa(pid)+".sock")
}

// Request is the header of a request frame: Token, Method, TimeoutMs, and
// a flags byte whose bit 0 is Stages.
type Request struct {
	// Token is Addr.Token: the daemon refuses any other (CodeTokenRefused).
	Token string
	// Method is the name served: Subject(m) for a versioned method, or
	// "ping" and "stop".
	Method string
	// TimeoutMs is the caller's remaining time in milliseconds (0: none);
	// the handler's context is bounded by it.
	TimeoutMs int64
	// Stages asks the daemon to time its stages (Reply.Stages).
	Stages bool
}

// Reply is the header of a reply frame: Error, Code, and a flags byte
// whose bit 0 says that the five Stages follow. The body is the handler's
// reply, empty when Error is set.
type Reply struct {
	// Error is the handler's error message, "" on success.
	Error string
	// Code names the error's kind (CodeTokenRefused, CodeNoMethod, or a
	// handler's code such as "unknown-handle"), "" when it has none.
	Code string
	// Stages is the daemon's timing of the request when Request.Stages
	// asked for it.
	Stages *Stages
}

// Stages is the daemon's side of one request, in microseconds (0: not
// measured): reading the request from the socket after the connection was
// accepted, the handler in all, and within a hook handler its redaction,
// its decision (parse, distillers, ledger) and its append to the log with
// the fold of the appended batch.
type Stages struct {
	Read   int64 `json:"read_us"`
	Handle int64 `json:"handle_us"`
	Redact int64 `json:"redact_us,omitempty"`
	Decide int64 `json:"decide_us,omitempty"`
	Append int64 `json:"append_us,omitempty"`
}

// errFrame: a frame that is not one of this protocol's.
var errFrame = errors.New("local socket: malformed frame")

// WriteRequest writes one request frame to w. Errors: w's.
func WriteRequest(w io.Writer, h Request, body []byte) error {
	hb := appendString(nil, h.Token)
	hb = appendString(hb, h.Method)
	hb = binary.BigEndian.AppendUint64(hb, uint64(h.TimeoutMs))
	flags := byte(0)
	if h.Stages {
		flags |= 1
	}
	return writeFrame(w, requestMagic, append(hb, flags), body)
}

// ReadRequest reads one request frame from r. Errors: r's, or a malformed
// or oversized frame.
func ReadRequest(r io.Reader) (Request, []byte, error) {
	var h Request
	hb, body, err := readFrame(r, requestMagic)
	if err != nil {
		return h, nil, err
	}
	d := headerReader{b: hb}
	h.Token, h.Method, h.TimeoutMs = d.str(), d.str(), int64(d.u64())
	h.Stages = d.byte()&1 != 0
	if !d.done() {
		return Request{}, nil, fmt.Errorf("%w: request header", errFrame)
	}
	return h, body, nil
}

// WriteReply writes one reply frame to w. Errors: w's.
func WriteReply(w io.Writer, h Reply, body []byte) error {
	hb := appendString(nil, h.Error)
	hb = appendString(hb, h.Code)
	if h.Stages == nil {
		hb = append(hb, 0)
	} else {
		hb = append(hb, 1)
		for _, v := range []int64{h.Stages.Read, h.Stages.Handle, h.Stages.Redact, h.Stages.Decide, h.Stages.Append} {
			hb = binary.BigEndian.AppendUint64(hb, uint64(v))
		}
	}
	return writeFrame(w, replyMagic, hb, body)
}

// ReadReply reads one reply frame from r. Errors: r's, or a malformed or
// oversized frame.
func ReadReply(r io.Reader) (Reply, []byte, error) {
	var h Reply
	hb, body, err := readFrame(r, replyMagic)
	if err != nil {
		return h, nil, err
	}
	d := headerReader{b: hb}
	h.Error, h.Code = d.str(), d.str()
	if d.byte()&1 != 0 {
		h.Stages = &Stages{Read: int64(d.u64()), Handle: int64(d.u64()), Redact: int64(d.u64()), Decide: int64(d.u64()), Append: int64(d.u64())}
	}
	if !d.done() {
		return Reply{}, nil, fmt.Errorf("%w: reply header", errFrame)
	}
	return h, body, nil
}

// appendString appends s as a big-endian uint32 length and its bytes.
func appendString(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
}

// headerReader reads a header's fields in order; a field past the end
// marks it bad (done reports false).
type headerReader struct {
	b   []byte
	bad bool
}

func (d *headerReader) take(n int) []byte {
	if d.bad || n < 0 || n > len(d.b) {
		d.bad = true
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *headerReader) str() string {
	n := d.take(4)
	if n == nil {
		return ""
	}
	return string(d.take(int(binary.BigEndian.Uint32(n))))
}

func (d *headerReader) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (d *headerReader) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

// done reports whether every field was there and nothing follows them.
func (d *headerReader) done() bool { return !d.bad && len(d.b) == 0 }

// writeFrame writes the magic, the header and the body's length in one
// write and a small body with them (one system call for a hook payload of
// tens of KiB), a large one in a second write.
func writeFrame(w io.Writer, magic [4]byte, hb, body []byte) error {
	const inline = 256 << 10
	n := 12 + len(hb)
	if len(body) <= inline {
		n += len(body)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, magic[:]...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(hb)))
	buf = append(buf, hb...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)))
	if len(body) <= inline {
		buf = append(buf, body...)
		_, err := w.Write(buf)
		return err
	}
	if _, err := w.Write(buf); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// readFrame reads one frame of magic and returns its header and body.
func readFrame(r io.Reader, magic [4]byte) ([]byte, []byte, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, nil, err
	}
	if [4]byte(pre[:4]) != magic {
		return nil, nil, errFrame
	}
	hn := binary.BigEndian.Uint32(pre[4:])
	if hn > MaxFrameHeader {
		return nil, nil, fmt.Errorf("%w: header of %d bytes", errFrame, hn)
	}
	hb := make([]byte, hn+4)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, nil, err
	}
	bn := binary.BigEndian.Uint32(hb[hn:])
	if bn > MaxFrameBody {
		return nil, nil, fmt.Errorf("%w: body of %d bytes", errFrame, bn)
	}
	body := make([]byte, bn)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, nil, err
	}
	return hb[:hn], body, nil
}

// DefaultCallTimeout bounds a Call whose context has no deadline.
const DefaultCallTimeout = time.Minute

// Timing is the client's side of one call on the local socket, for omni
// bench --latency: Connect from the call's start (address file, checks,
// connect and the peer's credentials) to the connection trusted, Send the
// request written, Wait from then to the reply read whole, and the
// daemon's own stages.
type Timing struct {
	Connect, Send, Wait time.Duration
	Daemon              Stages
}

// callable runs the checks before any call: the back-off, the address
// file (CheckPrivate), the protocol, the build and the backend. Errors:
// Call's.
func callable(home string) (Addr, error) {
	if b, on := ReadBackoff(home); on && b.Hard {
		return Addr{}, BackoffError(b)
	}
	ad, err := ReadAddr(home)
	if errors.Is(err, ErrUnsafeHome) {
		return ad, err
	}
	if err != nil {
		return ad, fmt.Errorf("%w: %w", ErrNoDaemon, err)
	}
	if ad.Protocol != Protocol {
		return ad, fmt.Errorf("%w: daemon pid %d speaks protocol %d", ErrNoDaemon, ad.PID, ad.Protocol)
	}
	if why := ad.Stale(); why != "" {
		return ad, fmt.Errorf("%w: daemon pid %d: %s", ErrNoDaemon, ad.PID, why)
	}
	want, err := ReadCluster(home, os.LookupEnv)
	if err != nil {
		return ad, err
	}
	if why := ad.BackendMismatch(want.Backend()); why != "" {
		return ad, fmt.Errorf("%w: daemon pid %d: %s", ErrNoDaemon, ad.PID, why)
	}
	return ad, nil
}
