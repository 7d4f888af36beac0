package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/omnictx/omni/internal/daemon/wire"
)

const (
	// queueGroup is the queue group every RPC subscription joins, so two
	// servers of one method (never expected) share the load rather than
	// both answering.
	queueGroup = "omni"
	// maxErrorLen caps the error message sent in wire.ErrorHeader, in bytes.
	maxErrorLen = 8 << 10
	// closeGrace bounds how long closing the RPC server waits for running
	// handlers before it cancels their contexts.
	closeGrace = 5 * time.Second
)

// rpcHandler answers one RPC request: it gets the request body and returns
// the reply body, or an error that the caller receives as a
// *wire.RemoteError (with a code when codeOf knows it). ctx ends when the
// caller's deadline passes (wire.TimeoutHeader) or when the server closes.
type rpcHandler func(ctx context.Context, req []byte) ([]byte, error)

// rpcServer answers requests on "omni.rpc.<name>" over one NATS
// connection (the store's own, jetstream.Store.Conn).
type rpcServer struct {
	nc *nats.Conn
	// baseCtx is the parent of every handler context; cancelled by close
	// so handlers that outlive the grace are told to stop.
	baseCtx    context.Context
	cancelBase context.CancelFunc

	mu      sync.Mutex
	serving bool // false once stop ran: serve is refused
	subs    []*nats.Subscription
	// local is the listener of the local socket (serveLocal), nil when
	// none; stop closes it.
	local io.Closer
	// localHeal, when set (serveLocal), makes the local socket again when
	// its file was removed or replaced.
	localHeal func()
	flight    inflight
}

// healLocal makes the local socket again when its file was removed or
// replaced (serveLocal); nothing without a local socket.
func (st *rpcServer) healLocal() {
	st.mu.Lock()
	heal := st.localHeal
	st.mu.Unlock()
	if heal != nil {
		heal()
	}
}

func newRPCServer(nc *nats.Conn) *rpcServer {
	ctx, cancel := context.WithCancel(context.Background())
	return &rpcServer{nc: nc, baseCtx: ctx, cancelBase: cancel, serving: true}
}

// serve answers requests on "omni.rpc.<name>" with h until stop or
// close. Each request runs h on its own goroutine, so h may run
// concurrently with itself and with other handlers; h's result (or its
// error, in ErrorHeader with an empty body) is sent as the reply. A panic
// in h becomes an error reply. name is one or more dot-separated tokens
// without spaces or wildcards. When Serve returns nil the subscription is
// known to the server. Errors: a bad name, errServerStopped after stop,
// or a wrapped subscribe error.
func (st *rpcServer) serve(name string, h rpcHandler) error {
	if err := wire.CheckName(name); err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.serving {
		return fmt.Errorf("serve %s: %w", name, errServerStopped)
	}
	sub, err := st.nc.QueueSubscribe(wire.RPCPrefix+name, queueGroup, func(m *nats.Msg) {
		st.flight.add()
		go func() {
			defer st.flight.done()
			st.handle(m, h)
		}()
	})
	if err != nil {
		return fmt.Errorf("serve %s: %w", name, err)
	}
	// Requests are handed to goroutines at once; the limits only guard
	// against a flood.
	_ = sub.SetPendingLimits(1<<16, 1<<30)
	if err := st.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("serve %s: %w", name, err)
	}
	st.subs = append(st.subs, sub)
	return nil
}

// stop stops every RPC subscription made by serve and closes the local
// socket: new requests get "no responders" (wire.ErrNoResponders at the
// caller) or no connection, while requests already
// received are still answered. It waits until their handlers have returned
// or ctx ends (then it returns ctx's error; the handlers keep running until
// close cancels their contexts). The connection stays usable; serve fails
// afterwards. Calling it twice is harmless.
func (st *rpcServer) stop(ctx context.Context) error {
	st.mu.Lock()
	st.serving = false
	subs := st.subs
	st.subs = nil
	if st.local != nil {
		_ = st.local.Close() // removes the socket file
		st.local, st.localHeal = nil, nil
	}
	st.mu.Unlock()
	for _, sub := range subs {
		closed := sub.StatusChanged(nats.SubscriptionClosed)
		if err := sub.Drain(); err != nil {
			continue // already gone with the connection
		}
		select {
		case <-closed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return st.flight.wait(ctx)
}

// close stops serving, waiting up to closeGrace for running handlers, then
// cancels their contexts.
func (st *rpcServer) close() {
	gctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	_ = st.stop(gctx)
	cancel()
	st.cancelBase()
}

// handle runs h for one request and sends the reply: the body, or the
// error's message in wire.ErrorHeader and its code in wire.CodeHeader.
func (st *rpcServer) handle(m *nats.Msg, h rpcHandler) {
	ctx, cancel := st.baseCtx, context.CancelFunc(func() {})
	if v := m.Header.Get(wire.TimeoutHeader); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		}
	}
	defer cancel()
	resp, err := callHandler(ctx, h, m.Data)
	if m.Reply == "" {
		return
	}
	out := nats.NewMsg(m.Reply)
	if err != nil {
		out.Header.Set(wire.ErrorHeader, headerValue(err.Error()))
		if code := codeOf(err); code != "" {
			out.Header.Set(wire.CodeHeader, code)
		}
	} else {
		out.Data = resp
	}
	if err := m.RespondMsg(out); errors.Is(err, nats.ErrMaxPayload) {
		out = nats.NewMsg(m.Reply)
		out.Header.Set(wire.ErrorHeader, fmt.Sprintf("reply of %d bytes exceeds the maximum payload", len(resp)))
		_ = m.RespondMsg(out)
	}
}

// callHandler runs h, turning a panic into an error.
func callHandler(ctx context.Context, h rpcHandler, req []byte) (resp []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("handler panic: %v", r)
		}
	}()
	return h(ctx, req)
}

// headerValue makes s a valid, bounded, non-empty header value.
func headerValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxErrorLen {
		s = s[:maxErrorLen]
	}
	if strings.TrimSpace(s) == "" {
		s = "error"
	}
	return s
}

// inflight counts running handlers so stop can wait for them.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns when no handler runs, or with ctx's error.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	ch := f.idle
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errServerStopped: serve after stop.
var errServerStopped = errors.New("rpc server stopped")
