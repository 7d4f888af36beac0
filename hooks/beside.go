package hooks

// beside is work a live hook call runs on a second goroutine while its own
// goroutine decides: the zstd compression of the Invoked input and the
// token count of the raw text need nothing the decision makes, and the
// host's hook client waits idle for the reply, so on a machine of two or
// more cores they cost the call no wall time. Their results are the same
// bytes and counts as when computed in line; a panic in the goroutine is
// dropped and the work is done again in line, where the call's own
// recover sees it.
type beside[T any] struct {
	done chan struct{}
	v    T
	ok   bool
}

// besideMin is the smallest input, in bytes, worth a goroutine: under it
// the work takes a few microseconds, about what waking a second thread
// costs (BenchmarkHookDaemonSide, 1 KB against 16 KB).
const besideMin = 4 << 10

// runBeside starts f on its own goroutine.
func runBeside[T any](f func() T) *beside[T] {
	b := &beside[T]{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		defer func() { _ = recover() }()
		b.v = f()
		b.ok = true
	}()
	return b
}

// wait returns what f returned on the goroutine runBeside started, or,
// when that panicked (or b is nil), f's result computed now.
func (b *beside[T]) wait(f func() T) T {
	if b == nil {
		return f()
	}
	<-b.done
	if !b.ok {
		return f()
	}
	return b.v
}
