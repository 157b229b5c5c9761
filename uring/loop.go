//go:build linux

package uring

import (
	"log/slog"
	"runtime"

	"clink/engine/async"
)

// completion is a reaped request on its way to its waiter.
type completion struct {
	done  func(Result)
	sched async.Scheduler
	res   Result
}

// loop is the dispatch goroutine. Each iteration reaps every waiting CQE,
// hands the results out, and then makes at most one io_uring_enter: it
// submits everything published since the last one and, when nothing is
// ready, waits for at least one completion.
func (r *Reactor) loop() {
	defer close(r.done)
	var comps []completion
	stopping, cancelled := false, false
	for {
		var sawStop bool
		comps, sawStop = r.reap(comps[:0])
		stopping = stopping || sawStop
		r.dispatch(comps)
		if len(comps) > 0 {
			// Let the goroutines just readied run (and submit their next
			// request) before this goroutine blocks in the kernel: a
			// goroutine readied onto a P whose goroutine sits in a syscall
			// otherwise waits for sysmon to retake the P.
			runtime.Gosched()
		}
		clear(comps)
		if stopping {
			if r.inFlight() == 0 {
				return
			}
			if !cancelled {
				r.cancelAll()
				cancelled = true
			}
		}
		if err := r.iterate(); err != nil {
			r.fail(err)
			return
		}
	}
}

// reap copies the waiting CQEs out of the ring and frees their slots.
func (r *Reactor) reap(out []completion) ([]completion, bool) {
	n := r.ring.Reap(r.cqes)
	if n == 0 {
		return out, false
	}
	r.completed.Add(uint64(n))
	sawStop := false
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cqe := range r.cqes[:n] {
		switch cqe.UserData {
		case 0:
			continue
		case stopToken:
			sawStop = true
			continue
		}
		idx := int(uint32(cqe.UserData)) - 1
		if idx < 0 || idx >= len(r.slots) {
			continue
		}
		sl := r.slots[idx]
		if !sl.busy || sl.gen != uint32(cqe.UserData>>32) {
			continue
		}
		out = append(out, completion{done: sl.done, sched: sl.sched, res: sl.result(cqe.Res)})
		sl.release()
		r.free = append(r.free, uint32(idx))
		r.inflight--
	}
	return out, sawStop
}

// dispatch hands each result to its waiter: through its scheduler, or
// directly on this goroutine. A panicking callback is logged, not fatal to
// the loop.
func (r *Reactor) dispatch(comps []completion) {
	for _, c := range comps {
		if c.sched != nil {
			done, res := c.done, c.res
			c.sched.ScheduleResume(async.HandleFunc(func() { done(res) }), 0)
			continue
		}
		r.call(c.done, c.res)
	}
}

func (r *Reactor) call(done func(Result), res Result) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("uring: completion callback panicked", "panic", p)
		}
	}()
	done(res)
}

func (r *Reactor) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight
}

// iterate makes this iteration's one enter: submit only, when completions
// are already waiting, or submit and wait for one.
func (r *Reactor) iterate() error {
	r.mu.Lock()
	if r.ring.Ready() > 0 {
		pending := r.ring.Pending()
		r.mu.Unlock()
		if pending == 0 {
			return nil
		}
		return r.enter(&r.loopEnters, pending, 0, 0)
	}
	r.sleeping = true
	pending := r.ring.Pending()
	r.mu.Unlock()
	err := r.enter(&r.loopEnters, pending, 1, EnterGetEvents)
	r.mu.Lock()
	r.sleeping = false
	r.mu.Unlock()
	return err
}

// cancelAll asks the kernel to cancel every request in flight; each then
// completes (usually with ECANCELED) and is dispatched as usual.
func (r *Reactor) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for idx, sl := range r.slots {
		if !sl.busy {
			continue
		}
		sqe := r.ring.GetSQE()
		for sqe == nil {
			r.ring.Publish()
			r.mu.Unlock()
			_ = r.enter(&r.loopEnters, r.ring.SQEntries(), 0, 0)
			r.mu.Lock()
			sqe = r.ring.GetSQE()
		}
		sqe.PrepCancel(uint64(sl.gen)<<32 | uint64(idx+1))
		sqe.UserData = 0
	}
	r.ring.Publish()
}

// fail ends the loop after an unexpected enter error: every waiter gets
// the error, and the slots stay pinned until Stop has closed the ring.
func (r *Reactor) fail(err error) {
	slog.Error("uring: reactor loop failed", "err", err)
	r.mu.Lock()
	r.stopped = true
	var comps []completion
	for _, sl := range r.slots {
		if sl.busy && sl.done != nil {
			comps = append(comps, completion{done: sl.done, sched: sl.sched, res: Result{Err: err}})
			sl.done = nil
		}
	}
	r.mu.Unlock()
	r.dispatch(comps)
}
