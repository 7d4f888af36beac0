package main

import (
	"fmt"
	"io"
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
// main_us is run from its start to now, so a process's wall time minus
// main_us is its start (exec, the loader, the runtime and package
// initialisation) and its exit.
func (s *stages) report(w io.Writer) {
	us := func(d time.Duration) int64 { return d.Microseconds() }
	d := s.call.Daemon
	fmt.Fprintf(w, "omni: stages main_us=%d read_us=%d connect_us=%d send_us=%d wait_us=%d daemon_read_us=%d handle_us=%d redact_us=%d decide_us=%d append_us=%d reply_us=%d\n",
		us(time.Since(s.start)), us(s.read), us(s.call.Connect), us(s.call.Send), us(s.call.Wait),
		d.Read, d.Handle, d.Redact, d.Decide, d.Append, us(s.reply))
}
