// Package objpooltest is the conformance suite every objpool.ObjectStore
// backend runs (in memory, a directory, S3), plus the fakes it needs.
package objpooltest

import (
	"sync"
	"time"

	"clink/engine/async"
)

// FakeClock is an async.Clock whose timers fire at once, advancing virtual
// time by their delay: retries back off without real sleeps, and the total
// backoff is observable.
type FakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

var _ async.Clock = (*FakeClock)(nil)

// NewFakeClock starts at async.SimEpoch.
func NewFakeClock() *FakeClock { return &FakeClock{now: async.SimEpoch} }

// Now returns virtual time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc advances virtual time by d and calls f immediately.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.slept += d
	c.mu.Unlock()
	f()
	return func() bool { return false }
}

// Advance moves virtual time forward without a timer.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Slept is the total virtual time timers waited.
func (c *FakeClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
