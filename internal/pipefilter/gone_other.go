//go:build !linux

package pipefilter

// WriterGoneFunc returns nil where the kernel does not list a process's
// children: the filter waits for the end of its input.
func WriterGoneFunc() func() bool { return nil }
