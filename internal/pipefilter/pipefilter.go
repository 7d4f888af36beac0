// Package pipefilter is the reading side of `omni pipe`, the filter the
// PreToolUse rewrite puts behind a test or build runner: it holds the
// runner's output back until the runner is done, hands the whole text to
// omni's pipeline once, and prints what comes back. Whenever holding back
// would change what the host shows — the host's timeout is near, a signal
// arrived, the output is larger than omni reads, or the pipeline fails —
// it prints what it holds (redacted) and passes the rest through as it
// comes, in whole lines. It never closes its input early: the runner is
// never stopped by a broken pipe.
package pipefilter

import (
	"bytes"
	"io"
	"os"
	"time"
)

// Options configures Run.
type Options struct {
	// In is the runner's output (the pipe); Out is where the reader's
	// text goes (the host's capture).
	In  io.Reader
	Out io.Writer
	// Deliver turns the whole output into what the reader should read
	// (omni's pipeline). It must not fail: on any error it returns the
	// text redacted.
	Deliver func(text string) string
	// Through wraps Out for the text passed through without Deliver: it
	// must mask credentials as they stream (a line at a time, a private
	// key across lines); Close writes what it still holds.
	Through func(out io.Writer) io.WriteCloser
	// MaxHold is the most bytes held back (larger: pass-through).
	MaxHold int
	// Until is when holding back stops (zero: never): the host's timeout
	// less a margin, so what the runner printed so far is in the host's
	// capture when the host moves the command to the background.
	Until time.Time
	// Signals delivers the signals after which holding back stops (nil:
	// none).
	Signals <-chan os.Signal
	// WriterGone reports that no process is left that the runner's side of
	// the pipe belongs to, though the pipe is still open (a helper the
	// runner started holds it): the output is then taken as complete.
	// nil: only end of input completes it.
	WriterGone func() bool
	// Poll is how often WriterGone is asked (0: 50 ms); Grace is how long
	// input must stay quiet after WriterGone first says so (0: 200 ms).
	Poll, Grace time.Duration
}

// Outcome says how Run ended.
type Outcome int

const (
	// Delivered: the whole output went through Deliver.
	Delivered Outcome = iota
	// PassedThrough: the output was printed as it came (redacted), for the
	// reason in Run's second result.
	PassedThrough
)

// Run reads opt.In to its end (or until the runner's side is gone) and
// writes the reader's text to opt.Out. The string names why it passed
// through ("size", "timeout", "signal", "read"), or, when Delivered, "gone"
// if the input was still open (a helper holds it: the caller should keep
// it drained, so the helper never meets a broken pipe) and "" at its end.
// The error is a write error on opt.Out (the host stopped reading).
func Run(opt Options) (Outcome, string, error) {
	if opt.Poll <= 0 {
		opt.Poll = 50 * time.Millisecond
	}
	if opt.Grace <= 0 {
		opt.Grace = 200 * time.Millisecond
	}
	chunks := make(chan []byte, 16)
	readErr := make(chan error, 1)
	go func() {
		for {
			b := make([]byte, 64<<10)
			n, err := opt.In.Read(b)
			if n > 0 {
				chunks <- b[:n]
			}
			if err != nil {
				if err != io.EOF {
					readErr <- err
				}
				close(chunks)
				return
			}
		}
	}()
	var deadline <-chan time.Time
	if !opt.Until.IsZero() {
		t := time.NewTimer(time.Until(opt.Until))
		defer t.Stop()
		deadline = t.C
	}
	var poll <-chan time.Time
	if opt.WriterGone != nil {
		tk := time.NewTicker(opt.Poll)
		defer tk.Stop()
		poll = tk.C
	}
	var held bytes.Buffer
	var goneAt, lastData time.Time
	for {
		select {
		case c, ok := <-chunks:
			if !ok {
				select {
				case <-readErr:
					return passThrough(opt, &held, nil, "read")
				default:
				}
				return deliver(opt, held.String())
			}
			held.Write(c)
			lastData = time.Now()
			if held.Len() > opt.MaxHold {
				return passThrough(opt, &held, chunks, "size")
			}
		case <-deadline:
			return passThrough(opt, &held, chunks, "timeout")
		case <-opt.Signals:
			return passThrough(opt, &held, chunks, "signal")
		case now := <-poll:
			if !opt.WriterGone() {
				goneAt = time.Time{}
				continue
			}
			if goneAt.IsZero() {
				goneAt = now
			}
			if now.Sub(goneAt) >= opt.Grace && now.Sub(lastData) >= opt.Grace {
				o, _, err := deliver(opt, held.String())
				return o, "gone", err
			}
		}
	}
}

func deliver(opt Options, text string) (Outcome, string, error) {
	_, err := io.WriteString(opt.Out, opt.Deliver(text))
	return Delivered, "", err
}

// passThrough prints what is held, then the rest of the input as it comes,
// through opt.Through. chunks nil: nothing more to read. After a write
// error the input is still read to its end (the runner must never meet a
// broken pipe) and dropped.
func passThrough(opt Options, held *bytes.Buffer, chunks <-chan []byte, why string) (Outcome, string, error) {
	w := opt.Through(opt.Out)
	_, err := w.Write(held.Bytes())
	if chunks != nil {
		for c := range chunks {
			if err == nil {
				_, err = w.Write(c)
			}
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return PassedThrough, why, err
}
