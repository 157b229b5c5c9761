// Package uring is clink's io_uring binding and reactor, written directly on
// golang.org/x/sys/unix.
//
// The binding (Ring, SQE, CQE) maps the kernel's submission and completion
// rings and prepares the few operations the engine needs: nop, timeout,
// read, write, accept, connect, recv, send, close and cancel. The Reactor
// owns one ring and one dispatch goroutine; any goroutine submits under a
// lock and the loop batches every pending submission into the single
// io_uring_enter it makes per iteration. Executor adapts the reactor to
// async.Executor. Where the kernel refuses io_uring, New returns an error
// that matches ErrUnsupported and callers fall back to Go's own stack.
//
// The package is Linux only; see docs/uring.md.
package uring
