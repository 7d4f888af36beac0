package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/internal/daemon/wire"
)

// RPC conventions.
const (
	// RPCPrefix is prepended to a method name to form its subject:
	// Serve("hook", h) answers "omni.rpc.hook" (wire.RPCPrefix).
	RPCPrefix = wire.RPCPrefix
	// ErrorHeader is the reply header that carries a handler's error
	// message; a reply with it has an empty body (wire.ErrorHeader).
	ErrorHeader = wire.ErrorHeader
	// TimeoutHeader carries the caller's remaining time in milliseconds;
	// the handler's context is bounded by it (wire.TimeoutHeader).
	TimeoutHeader = wire.TimeoutHeader
	// queueGroup is the queue group every RPC subscription joins, so two
	// servers of one method (never expected) share the load rather than
	// both answering.
	queueGroup = "omni"
	// maxErrorLen caps the error message sent in ErrorHeader, in bytes.
	maxErrorLen = 8 << 10
)

// Handler answers one RPC request: it gets the request body and returns
// the reply body, or an error that the caller receives as a *RemoteError.
// ctx ends when the caller's deadline passes (TimeoutHeader) or when the
// store stops serving for good (Close).
type Handler func(ctx context.Context, req []byte) ([]byte, error)

// Serve answers requests on "omni.rpc.<name>" with h until StopServing or
// Close. Each request runs h on its own goroutine, so h may run
// concurrently with itself and with other handlers; h's result (or its
// error, in ErrorHeader with an empty body) is sent as the reply. A panic
// in h becomes an error reply. name is one or more dot-separated tokens
// without spaces or wildcards. When Serve returns nil the subscription is
// known to the server. Errors: a bad name, events.ErrClosed after
// StopServing or Close, or a wrapped subscribe error.
func (st *Store) Serve(name string, h Handler) error {
	if err := checkName(name); err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closing || !st.serving {
		return fmt.Errorf("serve %s: %w", name, events.ErrClosed)
	}
	sub, err := st.nc.QueueSubscribe(RPCPrefix+name, queueGroup, func(m *nats.Msg) {
		st.flight.add()
		go func() {
			defer st.flight.done()
			st.handle(m, h)
		}()
	})
	if err != nil {
		return fmt.Errorf("serve %s: %w", name, st.mapErr(err))
	}
	// Requests are handed to goroutines at once; the limits only guard
	// against a flood.
	_ = sub.SetPendingLimits(1<<16, 1<<30)
	if err := st.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("serve %s: %w", name, st.mapErr(err))
	}
	st.subs = append(st.subs, sub)
	return nil
}

// StopServing stops every RPC subscription made by Serve: new requests
// get "no responders" (ErrNoResponders at the caller) while requests
// already received are still answered. It waits until their handlers have
// returned or ctx ends (then it returns ctx's error; the handlers keep
// running until Close cancels their contexts). The store stays usable as a
// log; Serve fails afterwards. Calling it twice is harmless.
func (st *Store) StopServing(ctx context.Context) error {
	st.mu.Lock()
	st.serving = false
	subs := st.subs
	st.subs = nil
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

// handle runs h for one request and sends the reply.
func (st *Store) handle(m *nats.Msg, h Handler) {
	ctx, cancel := st.baseCtx, context.CancelFunc(func() {})
	if v := m.Header.Get(TimeoutHeader); v != "" {
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
		out.Header.Set(ErrorHeader, headerValue(err.Error()))
	} else {
		out.Data = resp
	}
	if err := m.RespondMsg(out); errors.Is(err, nats.ErrMaxPayload) {
		out = nats.NewMsg(m.Reply)
		out.Header.Set(ErrorHeader, fmt.Sprintf("reply of %d bytes exceeds the maximum payload", len(resp)))
		_ = m.RespondMsg(out)
	}
}

// callHandler runs h, turning a panic into an error.
func callHandler(ctx context.Context, h Handler, req []byte) (resp []byte, err error) {
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

// checkName validates an RPC method name.
func checkName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.ContainsAny(name, " \t\r\n*>") {
		return fmt.Errorf("rpc method %q: invalid name", name)
	}
	return nil
}

// inflight counts running handlers so StopServing can wait for them.
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
