package state_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"clink/engine/event"
	"clink/state"
	"clink/state/mempool"
)

// fakeClock is an injected clock that only moves when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// delayPool answers every read exactly delay after it was sent, on the
// injected clock; async selects its AsyncPool face.
type delayPool struct {
	*mempool.Pool
	clock *fakeClock
	delay time.Duration
}

func (p *delayPool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	p.clock.advance(p.delay)
	return p.Pool.GetMany(ctx, keys)
}

type asyncDelayPool struct{ *delayPool }

func (p asyncDelayPool) GetManyAsync(ctx context.Context, keys []state.Key, done func([]state.Lookup, error)) {
	done(p.GetMany(ctx, keys))
}

// TestReadDoneTimesPoolApartFromQueueing reads through a pool that takes
// exactly delay and a runner that resumes queue later than the answer:
// the ReadDone's round trip is the pool's delay alone, its suspension
// the delay plus the queueing, for single, batched and coalesced reads,
// through the pool's async face and through the executor.
func TestReadDoneTimesPoolApartFromQueueing(t *testing.T) {
	const delay, queue = 3 * time.Millisecond, 40 * time.Millisecond
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1000, 0)}
			dp := &delayPool{Pool: seedPool(t, 8, 0), clock: clock, delay: delay}
			var pool state.RemotePool = dp
			if async {
				pool = asyncDelayPool{dp}
			}
			if err := pool.Restore(ctx, 1); err != nil {
				t.Fatal(err)
			}
			bus := event.NewBus()
			sb := newSimBackend(t, nil, 0, func(o *state.RemoteOptions) {
				o.Pool, o.Now, o.Bus = pool, clock.Now, bus
			})
			var mu sync.Mutex
			var done []event.Event
			cancel := bus.SubscribeKinds(event.MaskOf(event.ReadDone), func(e event.Event) {
				mu.Lock()
				done = append(done, e)
				mu.Unlock()
			})
			defer cancel()
			// A slow runner: the pool has answered, but the runner gets to the
			// resumes only queue later.
			slowSettle := func() {
				for sb.sim.Step() {
				}
				clock.advance(queue)
				settle(sb.sim, sb.q)
			}
			if _, task := sb.b.GetAsync(1, []byte("k0001"), 0); task == nil {
				t.Fatal("a cold read must suspend")
			}
			slowSettle()
			if _, task := sb.b.GetManyAsync(1, [][]byte{[]byte("k0002"), []byte("k0003")}); task == nil {
				t.Fatal("a cold batch must suspend")
			}
			slowSettle()
			co := state.NewCoalescingBackend(sb.b)
			for _, k := range []string{"k0004", "k0005"} {
				if _, task := co.GetAsync(1, []byte(k), 0); task == nil {
					t.Fatalf("a cold coalesced read of %s must suspend", k)
				}
			}
			co.Flush()
			slowSettle()

			mu.Lock()
			defer mu.Unlock()
			if len(done) != 3 {
				t.Fatalf("want 3 ReadDone events (single, batch, coalesced), got %d: %v", len(done), done)
			}
			for _, e := range done {
				if e.RoundTrip != delay {
					t.Errorf("%v: round trip %v, want the pool's %v", e, e.RoundTrip, delay)
				}
				if e.Suspended != delay+queue {
					t.Errorf("%v: suspended %v, want the pool's %v plus the runner's %v", e, e.Suspended, delay, queue)
				}
			}
		})
	}
}
