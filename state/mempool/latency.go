package mempool

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/async"
	"clink/state"
)

// LatencyPool decorates a pool with a simulated network round-trip per
// read, drawn from a Latency on an injected Clock. Its async face
// (state.AsyncPool) completes a read from a clock callback, so thousands of
// concurrent slow reads hold no thread; under an async.Sim the delays are
// virtual and deterministic. Commits, restores and hot keys pass through.
type LatencyPool struct {
	state.RemotePool
	split splitReader // the inner pool when it is a *Pool, else nil
	clock async.Clock

	mu      sync.Mutex
	rng     *rand.Rand
	lat     async.Latency
	pending map[uint64]*pendingRead
	nextID  uint64
	closed  bool
}

type pendingRead struct {
	fired atomic.Bool
	stop  func() bool
	done  func([]state.Lookup, error)
}

// claim reports whether the caller is the one to complete r.
func (r *pendingRead) claim() bool { return r.fired.CompareAndSwap(false, true) }

var _ interface {
	state.RemotePool
	state.AsyncPool
	Faults
} = (*LatencyPool)(nil)

// WithLatency wraps inner; delays are sampled from lat with a generator
// seeded by seed, and timed on clock (nil: wall time).
func WithLatency(inner state.RemotePool, lat async.Latency, clock async.Clock, seed uint64) *LatencyPool {
	if clock == nil {
		clock = async.RealClock{}
	}
	if lat == nil {
		lat = async.Fixed(0)
	}
	p := &LatencyPool{
		RemotePool: inner, clock: clock, lat: lat,
		rng:     rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)),
		pending: map[uint64]*pendingRead{},
	}
	p.split, _ = inner.(splitReader)
	return p
}

// splitReader is a pool whose read has a request half (counters, injected
// faults, cancellation), done when the read is issued, and a response half
// (the values), done when its round-trip completes: *Pool.
type splitReader interface {
	admitRead(ctx context.Context, n int) error
	serve(keys []state.Key) ([]state.Lookup, error)
}

// SetLatency changes the distribution of later reads.
func (p *LatencyPool) SetLatency(l async.Latency) {
	p.mu.Lock()
	p.lat = l
	p.mu.Unlock()
}

// Latency returns the current distribution.
func (p *LatencyPool) Latency() async.Latency {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lat
}

func (p *LatencyPool) sample() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lat.Sample(p.rng)
}

// Inner returns the decorated pool.
func (p *LatencyPool) Inner() state.RemotePool { return p.RemotePool }

// GetMany blocks the caller for one sampled round-trip on a wall clock,
// then reads. On a virtual clock it reads at once: nothing would advance
// the clock while the caller waits, so only the async face is delayed.
func (p *LatencyPool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	if _, wall := p.clock.(async.RealClock); !wall {
		return p.RemotePool.GetMany(ctx, keys)
	}
	if d := p.sample(); d > 0 {
		ch := make(chan struct{})
		stop := p.clock.AfterFunc(d, func() { close(ch) })
		select {
		case <-ch:
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
	}
	return p.RemotePool.GetMany(ctx, keys)
}

// GetManyAsync delivers the values of keys one sampled round-trip later
// from a clock callback. Cancelling ctx or closing the pool delivers an
// error at once instead. Over a *Pool the read is split like a real
// store's: the request (its counters and any injected fault) is decided
// now, in issue order, and the values are read when the round-trip
// completes, as of the pool's head then, on the clock's goroutine rather
// than the caller's; keys must stay unchanged until done is called. Over
// any other pool the values are read now, on the caller's goroutine.
//
// Reading at completion is what a remote store does (it serves a request
// when it arrives, not when it was sent), and it cannot show a reader an
// older value than reading at issue: the backend's own commits of a key
// being loaded are of a value written while the load was in flight, which
// the fill keeps over the loaded one, and a Restore that overtakes a load
// makes its result stale either way.
func (p *LatencyPool) GetManyAsync(ctx context.Context, keys []state.Key, done func([]state.Lookup, error)) {
	var res []state.Lookup
	var err error
	if p.split != nil {
		err = p.split.admitRead(ctx, len(keys))
	} else {
		res, err = p.RemotePool.GetMany(ctx, keys)
	}
	d := p.sample()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		done(nil, ErrClosed)
		return
	}
	if d <= 0 {
		p.mu.Unlock()
		if p.split != nil && err == nil {
			res, err = p.split.serve(keys)
		}
		done(res, err)
		return
	}
	p.nextID++
	id := p.nextID
	r := &pendingRead{done: done}
	p.pending[id] = r
	// The timer callback takes p.mu (in forget) before it calls unhook, so
	// it cannot see unhook unset: both are assigned before p.mu is released.
	var unhook func() bool
	r.stop = p.clock.AfterFunc(d, func() {
		if r.claim() {
			p.forget(id)
			unhook()
			if p.split != nil && err == nil {
				res, err = p.split.serve(keys)
			}
			done(res, err)
		}
	})
	unhook = context.AfterFunc(ctx, func() {
		if r.stop() && r.claim() {
			p.forget(id)
			done(nil, ctx.Err())
		}
	})
	p.mu.Unlock()
}

func (p *LatencyPool) forget(id uint64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// InFlight returns the number of reads waiting on their round-trip.
func (p *LatencyPool) InFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// Close fails every pending read with ErrClosed and closes the inner pool.
func (p *LatencyPool) Close() error {
	p.mu.Lock()
	p.closed = true
	pend := p.pending
	p.pending = map[uint64]*pendingRead{}
	p.mu.Unlock()
	for _, r := range pend {
		if r.stop() && r.claim() {
			r.done(nil, ErrClosed)
		}
	}
	return p.RemotePool.Close()
}

// FailReads forwards to the inner pool when it injects faults.
func (p *LatencyPool) FailReads(n int, err error) {
	if f, ok := p.RemotePool.(Faults); ok {
		f.FailReads(n, err)
	}
}

// FailCommits forwards to the inner pool when it injects faults.
func (p *LatencyPool) FailCommits(n int, err error) {
	if f, ok := p.RemotePool.(Faults); ok {
		f.FailCommits(n, err)
	}
}

// Throttle forwards to the inner pool when it injects faults.
func (p *LatencyPool) Throttle(n int) {
	if f, ok := p.RemotePool.(Faults); ok {
		f.Throttle(n)
	}
}
