//go:build linux

package uring

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"clink/engine/async"
)

// Errors the Reactor reports to submitters.
var (
	// ErrQueueFull means the submission queue (or the in-flight cap) is
	// full: the awaiter is resumed with it at once instead of blocking.
	// errors.Is(err, unix.ENOMEM) holds, as with liburing's -ENOMEM.
	ErrQueueFull = fmt.Errorf("uring: submission queue full: %w", unix.ENOMEM)
	// ErrStopped is returned for work submitted after Stop, and is the
	// error of a request that the reactor failed while shutting down.
	ErrStopped = errors.New("uring: reactor stopped")
)

// OpError is a request the kernel completed with a negative errno.
type OpError struct {
	Op    string
	Errno unix.Errno
}

// Error names the operation and the errno.
func (e *OpError) Error() string { return "uring: " + e.Op + ": " + e.Errno.Error() }

// Unwrap exposes the errno, so errors.Is(err, unix.ECONNREFUSED) works.
func (e *OpError) Unwrap() error { return e.Errno }

// Result is a completed request: N is the byte count (read, write, recv,
// send) or the new descriptor (accept); Peer is the accepted peer's address.
type Result struct {
	N    int
	Peer unix.Sockaddr
	Err  error
}

// Op describes one request; build it with the *Op constructors. An Op keeps
// its buffer referenced so the memory outlives the request.
type Op struct {
	code  uint8
	fd    int
	buf   []byte
	off   int64
	flags uint32
	d     time.Duration
	sa    unix.Sockaddr
}

// NopOp is a request that completes at once (useful to measure the loop).
func NopOp() Op { return Op{code: OpNop} }

// TimeoutOp completes after d; its expiry is success, not an error.
func TimeoutOp(d time.Duration) Op { return Op{code: OpTimeout, d: max(d, 0)} }

// ReadOp reads into buf from fd at off; pass -1 for pipes and sockets.
func ReadOp(fd int, buf []byte, off int64) Op { return Op{code: OpRead, fd: fd, buf: buf, off: off} }

// WriteOp writes buf to fd at off; pass -1 for pipes and sockets.
func WriteOp(fd int, buf []byte, off int64) Op {
	return Op{code: OpWrite, fd: fd, buf: buf, off: off}
}

// AcceptOp accepts a connection on the listening socket fd; the new
// descriptor is close-on-exec.
func AcceptOp(fd int) Op { return Op{code: OpAccept, fd: fd, flags: unix.SOCK_CLOEXEC} }

// ConnectOp connects socket fd to sa (IPv4, IPv6 or Unix).
func ConnectOp(fd int, sa unix.Sockaddr) Op { return Op{code: OpConnect, fd: fd, sa: sa} }

// RecvOp receives into buf from socket fd with msg flags (usually 0).
func RecvOp(fd int, buf []byte, flags int) Op {
	return Op{code: OpRecv, fd: fd, buf: buf, flags: uint32(flags)}
}

// SendOp sends buf on socket fd with msg flags (MSG_NOSIGNAL is added).
func SendOp(fd int, buf []byte, flags int) Op {
	return Op{code: OpSend, fd: fd, buf: buf, flags: uint32(flags) | unix.MSG_NOSIGNAL}
}

// CloseOp closes fd.
func CloseOp(fd int) Op { return Op{code: OpClose, fd: fd} }

var opNames = map[uint8]string{
	OpNop: "nop", OpTimeout: "timeout", OpRead: "read", OpWrite: "write", OpAccept: "accept",
	OpConnect: "connect", OpRecv: "recv", OpSend: "send", OpClose: "close",
}

// String names the operation.
func (o Op) String() string {
	if n, ok := opNames[o.code]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", o.code)
}

// Task returns a lazy task that submits op when it is first resumed or
// awaited and completes with the op's Result (and Result.Err as its error).
// The completion is handed to s, the awaiting runner's scheduler; with a nil
// s the reactor's loop goroutine completes the task itself. A full queue or
// a stopped reactor completes the task at once, on the submitting goroutine.
func (r *Reactor) Task(op Op, s async.Scheduler) *async.Task[Result] {
	return async.New(func(t *async.Task[Result]) {
		err := r.Submit(op, s, func(res Result) { t.Complete(res, res.Err) })
		if err != nil {
			t.Complete(Result{Err: err}, err)
		}
	})
}

// Sleep is an awaitable timer on the ring, completed through the reactor's
// default scheduler.
func (r *Reactor) Sleep(d time.Duration) *async.Task[Result] { return r.Task(TimeoutOp(d), r.sched) }

// Read is an awaitable read (off -1 for pipes and sockets).
func (r *Reactor) Read(fd int, buf []byte, off int64) *async.Task[Result] {
	return r.Task(ReadOp(fd, buf, off), r.sched)
}

// Write is an awaitable write (off -1 for pipes and sockets).
func (r *Reactor) Write(fd int, buf []byte, off int64) *async.Task[Result] {
	return r.Task(WriteOp(fd, buf, off), r.sched)
}

// Accept is an awaitable accept; Result.N is the new descriptor.
func (r *Reactor) Accept(fd int) *async.Task[Result] { return r.Task(AcceptOp(fd), r.sched) }

// Connect is an awaitable connect.
func (r *Reactor) Connect(fd int, sa unix.Sockaddr) *async.Task[Result] {
	return r.Task(ConnectOp(fd, sa), r.sched)
}

// Recv is an awaitable recv.
func (r *Reactor) Recv(fd int, buf []byte) *async.Task[Result] {
	return r.Task(RecvOp(fd, buf, 0), r.sched)
}

// Send is an awaitable send.
func (r *Reactor) Send(fd int, buf []byte) *async.Task[Result] {
	return r.Task(SendOp(fd, buf, 0), r.sched)
}

// Close is an awaitable close.
func (r *Reactor) Close(fd int) *async.Task[Result] { return r.Task(CloseOp(fd), r.sched) }

// Do submits op and blocks the calling goroutine until it completes. It is
// for worker goroutines and tests, never for a runner.
func (r *Reactor) Do(op Op) Result {
	ch := make(chan Result, 1)
	if err := r.Submit(op, nil, func(res Result) { ch <- res }); err != nil {
		return Result{Err: err}
	}
	return <-ch
}
