package thin

import (
	"encoding/binary"
	"encoding/json"
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
// uint32 length and that many bytes of JSON header, a big-endian uint32
// length and that many bytes of body.
const (
	// MaxSockPath is the longest socket path the daemon binds, in bytes:
	// a socket's name holds 104 bytes with its terminating NUL on macOS
	// (108 on Linux). A home whose socket path is longer gets no socket
	// and its clients use the TLS listener.
	MaxSockPath = 103
	// MaxFrameHeader bounds a frame's JSON header, in bytes.
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

// Request is the header of a request frame.
type Request struct {
	// Token is Addr.Token: the daemon refuses any other (CodeTokenRefused).
	Token string `json:"token"`
	// Method is the name served: Subject(m) for a versioned method, or
	// "ping" and "stop".
	Method string `json:"method"`
	// TimeoutMs is the caller's remaining time in milliseconds (0: none);
	// the handler's context is bounded by it.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
	// Stages asks the daemon to time its stages (Reply.Stages).
	Stages bool `json:"stages,omitempty"`
}

// Reply is the header of a reply frame; the body is the handler's reply,
// empty when Error is set.
type Reply struct {
	// Error is the handler's error message, "" on success.
	Error string `json:"error,omitempty"`
	// Code names the error's kind (CodeTokenRefused, CodeNoMethod, or a
	// handler's code such as "unknown-handle"), "" when it has none.
	Code string `json:"code,omitempty"`
	// Stages is the daemon's timing of the request when Request.Stages
	// asked for it.
	Stages *Stages `json:"stages,omitempty"`
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
	return writeFrame(w, requestMagic, h, body)
}

// ReadRequest reads one request frame from r. Errors: r's, or a malformed
// or oversized frame.
func ReadRequest(r io.Reader) (Request, []byte, error) {
	var h Request
	body, err := readFrame(r, requestMagic, &h)
	return h, body, err
}

// WriteReply writes one reply frame to w. Errors: w's.
func WriteReply(w io.Writer, h Reply, body []byte) error {
	return writeFrame(w, replyMagic, h, body)
}

// ReadReply reads one reply frame from r. Errors: r's, or a malformed or
// oversized frame.
func ReadReply(r io.Reader) (Reply, []byte, error) {
	var h Reply
	body, err := readFrame(r, replyMagic, &h)
	return h, body, err
}

// writeFrame writes the magic, the header and the body's length in one
// write and a small body with them (one system call for a hook payload of
// tens of KiB), a large one in a second write.
func writeFrame(w io.Writer, magic [4]byte, h any, body []byte) error {
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
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
		_, err = w.Write(buf)
		return err
	}
	if _, err := w.Write(buf); err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

func readFrame(r io.Reader, magic [4]byte, h any) ([]byte, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, err
	}
	if [4]byte(pre[:4]) != magic {
		return nil, errFrame
	}
	hn := binary.BigEndian.Uint32(pre[4:])
	if hn > MaxFrameHeader {
		return nil, fmt.Errorf("%w: header of %d bytes", errFrame, hn)
	}
	hb := make([]byte, hn+4)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(hb[:hn], h); err != nil {
		return nil, fmt.Errorf("%w: %v", errFrame, err)
	}
	bn := binary.BigEndian.Uint32(hb[hn:])
	if bn > MaxFrameBody {
		return nil, fmt.Errorf("%w: body of %d bytes", errFrame, bn)
	}
	body := make([]byte, bn)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
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
