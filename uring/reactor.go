//go:build linux

package uring

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"clink/engine/async"
)

// DefaultEntries sizes the submission queue when Options.Entries is zero.
const DefaultEntries = 256

// stopToken is the user_data of the NOP that Stop posts; user_data 0 marks
// completions nobody waits for (cancels).
const stopToken = ^uint64(0)

// Options configures a Reactor.
type Options struct {
	// Entries is the submission queue size (rounded up to a power of two);
	// DefaultEntries when zero.
	Entries uint32
	// MaxInFlight caps requests submitted but not completed; the
	// completion queue size when zero (so the CQ cannot overflow).
	MaxInFlight int
	// Scheduler receives the completions of Sleep, Read, ... tasks; nil
	// completes them on the loop goroutine.
	Scheduler async.Scheduler
}

// Stats are the reactor's counters; Enters counts io_uring_enter calls so
// a benchmark can report system calls per operation.
type Stats struct {
	Enters     uint64 // all io_uring_enter calls
	LoopEnters uint64 // made by the loop, one per iteration at most
	WakeEnters uint64 // made by submitters while the loop slept, and by Stop
	Submitted  uint64 // requests accepted
	Completed  uint64 // completions reaped (including internal ones)
	QueueFull  uint64 // submissions refused with ErrQueueFull
	InFlight   int    // requests submitted and not yet completed
}

// slot is the per-request state the kernel's user_data points at by index.
// It owns the memory handed to the kernel (timespec, sockaddr) and pins it
// and the caller's buffer until the completion is reaped.
type slot struct {
	gen   uint32
	busy  bool
	code  uint8
	done  func(Result)
	sched async.Scheduler
	buf   []byte
	pin   runtime.Pinner
	ts    unix.Timespec
	sa    unix.RawSockaddrAny
	salen uint32
}

// Reactor owns one io_uring and the goroutine that dispatches its
// completions. Any goroutine may submit; submissions are published to the
// SQ under a lock and the loop hands them to the kernel in the one
// io_uring_enter it makes per iteration. Only when the loop is blocked in
// that wait does a submitter enter the kernel itself.
type Reactor struct {
	ring  *Ring
	sched async.Scheduler

	mu       sync.Mutex
	slots    []*slot
	free     []uint32
	inflight int
	sleeping bool // the loop is (about to be) blocked in enter
	stopped  bool

	enters, loopEnters, wakeEnters atomic.Uint64
	submitted, completed, full     atomic.Uint64

	ringLock sync.RWMutex // held for writing while Stop closes the ring
	cqes     []CQE        // loop-owned reap buffer
	stopOnce sync.Once
	done     chan struct{}
	closeErr error
}

// New sets up a ring and starts the dispatch loop. When the kernel refuses
// io_uring the error matches ErrUnsupported: fall back to Go's own I/O.
func New(opts Options) (*Reactor, error) {
	if opts.Entries == 0 {
		opts.Entries = DefaultEntries
	}
	if opts.MaxInFlight < 0 {
		return nil, fmt.Errorf("uring: MaxInFlight must not be negative, got %d", opts.MaxInFlight)
	}
	ring, err := NewRing(opts.Entries)
	if err != nil {
		return nil, err
	}
	n := int(ring.CQEntries())
	if opts.MaxInFlight > 0 {
		n = min(opts.MaxInFlight, n)
	}
	r := &Reactor{
		ring:  ring,
		sched: opts.Scheduler,
		slots: make([]*slot, n),
		free:  make([]uint32, n),
		cqes:  make([]CQE, ring.CQEntries()),
		done:  make(chan struct{}),
	}
	for i := range r.slots {
		r.slots[i] = &slot{}
		r.free[i] = uint32(n - 1 - i)
	}
	go r.loop()
	return r, nil
}

// Ring exposes the underlying ring's geometry (read-only use).
func (r *Reactor) Ring() *Ring { return r.ring }

// Enters returns the number of io_uring_enter calls made so far.
func (r *Reactor) Enters() uint64 { return r.enters.Load() }

// Stats returns a snapshot of the counters.
func (r *Reactor) Stats() Stats {
	r.mu.Lock()
	inflight := r.inflight
	r.mu.Unlock()
	return Stats{
		Enters: r.enters.Load(), LoopEnters: r.loopEnters.Load(), WakeEnters: r.wakeEnters.Load(),
		Submitted: r.submitted.Load(), Completed: r.completed.Load(), QueueFull: r.full.Load(),
		InFlight: inflight,
	}
}

// Submit queues op; done receives its Result exactly once, through
// s.ScheduleResume when s is not nil, else on the loop goroutine (keep it
// short: it delays every other completion). A nil error means done will be
// called; on error (ErrQueueFull, ErrStopped, a bad address) it will not.
func (r *Reactor) Submit(op Op, s async.Scheduler, done func(Result)) error {
	if done == nil {
		return errors.New("uring: submit " + op.String() + ": nil completion callback")
	}
	if _, ok := opNames[op.code]; !ok {
		return fmt.Errorf("uring: submit: unknown operation %d", op.code)
	}
	r.mu.Lock()
	wake, err := r.submitLocked(op, s, done)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.submitted.Add(1)
	if wake {
		// The loop is blocked waiting for a completion and will not see
		// this SQE until one arrives: hand it to the kernel now. The op
		// is already published, so done will run whatever happens here;
		// the read lock keeps Stop from closing the ring fd under us.
		r.ringLock.RLock()
		if r.ring.Fd() >= 0 {
			if err := r.enter(&r.wakeEnters, r.ring.SQEntries(), 0, 0); err != nil {
				slog.Warn("uring: submitter enter failed; the loop submits at its next wake", "op", op.String(), "err", err)
			}
		}
		r.ringLock.RUnlock()
	}
	return nil
}

func (r *Reactor) submitLocked(op Op, s async.Scheduler, done func(Result)) (wake bool, err error) {
	if r.stopped {
		return false, ErrStopped
	}
	if len(r.free) == 0 {
		r.full.Add(1)
		return false, ErrQueueFull
	}
	idx := r.free[len(r.free)-1]
	sl := r.slots[idx]
	if op.code == OpConnect {
		if sl.salen, err = encodeSockaddr(op.sa, &sl.sa); err != nil {
			return false, fmt.Errorf("uring: connect fd %d: %w", op.fd, err)
		}
	}
	sqe := r.ring.GetSQE()
	if sqe == nil {
		// Published SQEs the loop has not entered yet fill the SQ: flush
		// them once; if the kernel still has no room, refuse.
		_ = r.enter(&r.wakeEnters, r.ring.SQEntries(), 0, 0)
		if sqe = r.ring.GetSQE(); sqe == nil {
			r.full.Add(1)
			return false, ErrQueueFull
		}
	}
	r.free = r.free[:len(r.free)-1]
	sl.busy, sl.code, sl.done, sl.sched, sl.buf = true, op.code, done, s, op.buf
	sl.prep(sqe, op)
	sqe.UserData = uint64(sl.gen)<<32 | uint64(idx+1)
	r.ring.Publish()
	r.inflight++
	return r.sleeping, nil
}

// prep fills sqe for op, pointing the kernel at memory the slot pins.
func (sl *slot) prep(sqe *SQE, op Op) {
	sl.pin.Pin(sl)
	if len(op.buf) > 0 {
		sl.pin.Pin(&op.buf[0])
	}
	switch op.code {
	case OpNop:
		sqe.PrepNop()
	case OpTimeout:
		sl.ts = unix.NsecToTimespec(op.d.Nanoseconds())
		sqe.PrepTimeout(&sl.ts)
	case OpRead:
		sqe.PrepRead(op.fd, op.buf, op.off)
	case OpWrite:
		sqe.PrepWrite(op.fd, op.buf, op.off)
	case OpRecv:
		sqe.PrepRecv(op.fd, op.buf, op.flags)
	case OpSend:
		sqe.PrepSend(op.fd, op.buf, op.flags)
	case OpAccept:
		sl.sa, sl.salen = unix.RawSockaddrAny{}, unix.SizeofSockaddrAny
		sqe.PrepAccept(op.fd, &sl.sa, &sl.salen, op.flags)
	case OpConnect:
		sqe.PrepConnect(op.fd, &sl.sa, sl.salen)
	case OpClose:
		sqe.PrepClose(op.fd)
	}
}

// result turns the kernel's res into a Result.
func (sl *slot) result(res int32) Result {
	if res < 0 {
		errno := unix.Errno(-res)
		if sl.code == OpTimeout && errno == timeoutETime {
			return Result{}
		}
		return Result{Err: &OpError{Op: opNames[sl.code], Errno: errno}}
	}
	out := Result{N: int(res)}
	if sl.code == OpAccept {
		out.Peer = decodeSockaddr(&sl.sa)
	}
	return out
}

// release unpins the slot's memory and readies it for reuse.
func (sl *slot) release() {
	sl.pin.Unpin()
	sl.busy, sl.done, sl.sched, sl.buf = false, nil, nil, nil
	sl.gen++
}

// enter calls io_uring_enter and counts it; EINTR, EAGAIN and EBUSY are
// not errors for the caller, which reaps and tries again.
func (r *Reactor) enter(counter *atomic.Uint64, toSubmit, minComplete, flags uint32) error {
	r.enters.Add(1)
	counter.Add(1)
	_, err := r.ring.Enter(toSubmit, minComplete, flags)
	switch {
	case err == nil, errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EBUSY):
		return nil
	}
	return fmt.Errorf("uring: io_uring_enter: %w", err)
}

// Stop wakes the loop with a NOP, cancels every request still in flight
// (their callbacks get an ECANCELED error), waits for the loop goroutine to
// exit and releases the ring. It is idempotent. It must not be called from
// a completion callback running on the loop goroutine.
func (r *Reactor) Stop() error {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		if !r.stopped {
			r.stopped = true
			r.postStopLocked()
		}
		r.mu.Unlock()
		_ = r.enter(&r.wakeEnters, r.ring.SQEntries(), 0, 0)
		<-r.done
		r.ringLock.Lock()
		r.closeErr = r.ring.Close()
		r.ringLock.Unlock()
		r.mu.Lock()
		for _, sl := range r.slots {
			if sl.busy { // only after a loop failure: the kernel has let go now
				sl.release()
			}
		}
		r.mu.Unlock()
	})
	return r.closeErr
}

func (r *Reactor) postStopLocked() {
	for {
		if sqe := r.ring.GetSQE(); sqe != nil {
			sqe.PrepNop()
			sqe.UserData = stopToken
			r.ring.Publish()
			return
		}
		// No new work can arrive, so flushing always makes room.
		r.mu.Unlock()
		_ = r.enter(&r.wakeEnters, r.ring.SQEntries(), 0, 0)
		runtime.Gosched()
		r.mu.Lock()
	}
}
