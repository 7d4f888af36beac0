package main

import (
	"io"
	"strconv"
	"time"

	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// stages times one hook call for omni bench --latency (OMNI_REPORT_STAGES
// set): read is stdin read whole, call the client's side of the call
// (connect and check the peer, send, wait) with the daemon's own stages,
// reply the reply written, main the whole of run. A nil *stages times
// nothing.
type stages struct {
	start       time.Time
	read, reply time.Duration
	call        thin.Timing
}

// readDone records stdin read whole.
func (s *stages) readDone() {
	if s != nil {
		s.read = time.Since(s.start)
	}
}

// replyDone records the reply written, begun at t.
func (s *stages) replyDone(t time.Time) {
	if s != nil {
		s.reply = time.Since(t)
	}
}

// timing is where the call's stages go, nil when none are timed.
func (s *stages) timing() *thin.Timing {
	if s == nil {
		return nil
	}
	return &s.call
}

// report writes one line "omni: stages k=v ..." (microseconds) to w:
// main_us is run from its start to this report, so a process's wall time
// minus main_us is its start (exec, the loader, the runtime and package
// initialisation) and its exit. The line is built without fmt, so that
// writing it adds little to the exit it is counted in.
func (s *stages) report(w io.Writer) {
	d := s.call.Daemon
	b := make([]byte, 0, 256)
	b = append(b, "omni: stages"...)
	for _, kv := range []struct {
		k string
		v int64
	}{
		{"main_us", time.Since(s.start).Microseconds()}, {"read_us", s.read.Microseconds()},
		{"connect_us", s.call.Connect.Microseconds()}, {"send_us", s.call.Send.Microseconds()},
		{"wait_us", s.call.Wait.Microseconds()}, {"daemon_read_us", d.Read}, {"handle_us", d.Handle},
		{"redact_us", d.Redact}, {"decide_us", d.Decide}, {"append_us", d.Append}, {"reply_us", s.reply.Microseconds()},
	} {
		b = append(b, ' ')
		b = append(b, kv.k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, kv.v, 10)
	}
	b = append(b, '\n')
	_, _ = w.Write(b)
}
