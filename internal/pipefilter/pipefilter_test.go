package pipefilter

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type nop struct{ io.Writer }

func (nop) Close() error { return nil }

// upper marks pass-through text so a test can tell it from Deliver's.
type upper struct{ w io.Writer }

func (u upper) Write(p []byte) (int, error) { return u.w.Write(bytes.ToUpper(p)) }
func (upper) Close() error                  { return nil }

func opts(in io.Reader, out io.Writer) Options {
	return Options{In: in, Out: out, MaxHold: 1 << 20,
		Deliver: func(t string) string { return "<" + t + ">" },
		Through: func(w io.Writer) io.WriteCloser { return upper{w} }}
}

func TestDeliverAtEnd(t *testing.T) {
	var out bytes.Buffer
	o, why, err := Run(opts(strings.NewReader("a\nb\n"), &out))
	if o != Delivered || why != "" || err != nil || out.String() != "<a\nb\n>" {
		t.Fatalf("got %v %q %v %q", o, why, err, out.String())
	}
}

// Over MaxHold the output passes through, whole and in order.
func TestPassThroughOverSize(t *testing.T) {
	in := strings.Repeat("line of output\n", 1000)
	var out bytes.Buffer
	opt := opts(strings.NewReader(in), &out)
	opt.MaxHold = 100
	o, why, err := Run(opt)
	if o != PassedThrough || why != "size" || err != nil || out.String() != strings.ToUpper(in) {
		t.Fatalf("got %v %q %v, %d bytes", o, why, err, out.Len())
	}
}

// slowWriter feeds a pipe: first, then (after release) second, then EOF.
func slowWriter(first, second string) (io.Reader, chan struct{}) {
	r, w := io.Pipe()
	release := make(chan struct{})
	go func() {
		_, _ = w.Write([]byte(first))
		<-release
		_, _ = w.Write([]byte(second))
		_ = w.Close()
	}()
	return r, release
}

// At the host's timeout what was held is printed and the rest streams.
func TestPassThroughAtDeadline(t *testing.T) {
	in, release := slowWriter("partial\n", "rest\n")
	pr, pw := io.Pipe()
	opt := opts(in, pw)
	opt.Until = time.Now().Add(20 * time.Millisecond)
	done := make(chan string)
	go func() {
		o, why, _ := Run(opt)
		_ = pw.Close()
		done <- why
		_ = o
	}()
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(pr, buf, len("PARTIAL\n"))
	if got := string(buf[:n]); got != "PARTIAL\n" {
		t.Fatalf("before the runner ended, the reader got %q", got)
	}
	close(release)
	rest, _ := io.ReadAll(pr)
	if string(rest) != "REST\n" || <-done != "timeout" {
		t.Fatalf("after: %q", rest)
	}
}

func TestPassThroughOnSignal(t *testing.T) {
	in, release := slowWriter("a\n", "b\n")
	var out bytes.Buffer
	opt := opts(in, &out)
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt
	opt.Signals = sigs
	go func() { time.Sleep(10 * time.Millisecond); close(release) }()
	o, why, err := Run(opt)
	if o != PassedThrough || why != "signal" || err != nil || out.String() != "A\nB\n" {
		t.Fatalf("got %v %q %v %q", o, why, err, out.String())
	}
}

// A helper the runner left behind holds the pipe open: once the runner's
// side is gone and the input quiet, what arrived is delivered.
func TestWriterGoneCompletes(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close() // never closed before Run returns: the helper holds it
	go func() { _, _ = w.Write([]byte("done\n")) }()
	var gone atomic.Bool
	var out bytes.Buffer
	opt := opts(r, &out)
	opt.Poll, opt.Grace = 5*time.Millisecond, 20*time.Millisecond
	opt.WriterGone = func() bool { return gone.Load() }
	go func() { time.Sleep(30 * time.Millisecond); gone.Store(true) }()
	o, _, err := Run(opt)
	if o != Delivered || err != nil || out.String() != "<done\n>" {
		t.Fatalf("got %v %v %q", o, err, out.String())
	}
}

type failing struct{}

func (failing) Write(p []byte) (int, error) { return 0, errors.New("host gone") }

// The runner never meets a broken pipe: when the host stops reading, the
// input is still read to its end.
func TestNeverStopsReading(t *testing.T) {
	r, w := io.Pipe()
	wrote := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 200 && err == nil; i++ {
			_, err = w.Write(bytes.Repeat([]byte("x"), 4096))
		}
		wrote <- err
		_ = w.Close()
	}()
	opt := opts(r, failing{})
	opt.MaxHold = 1000 // pass through at once, into a writer that fails
	opt.Through = func(w io.Writer) io.WriteCloser { return nop{w} }
	if _, why, err := Run(opt); why != "size" || err == nil {
		t.Fatalf("why %q err %v", why, err)
	}
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("the writer met %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer is blocked: the filter stopped reading")
	}
}
