package tui

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/event"
)

// FeedConfig tunes how a Feed taps the runtime event stream.
type FeedConfig struct {
	// Buffer is the channel capacity; events are dropped, never waited
	// for, when the dashboard lags. 0: 4096.
	Buffer int
	// On and Off make the tap a duty cycle: subscribed for On, then
	// unsubscribed for Off, so that the engine pays for building events
	// only a fraction of the time. Off 0 keeps the tap attached.
	On, Off time.Duration
	// Skip lists kinds the tap does not subscribe to, so the engine does
	// not even build them: the per-record kinds the snapshot counters
	// already total.
	Skip []event.Kind
	// Now stamps events the emitters left unstamped (nil: time.Now); a
	// simulated clock's Now makes a feed deterministic.
	Now func() time.Time
}

// Feed taps an event bus for the dashboard: it stamps each event with the
// time it was emitted (the emitters leave Time zero) and hands it over on a
// buffered channel that drops when the reader lags.
type Feed struct {
	ch      chan event.Event
	dropped atomic.Int64
	bus     *event.Bus
	cfg     FeedConfig
	mu      sync.Mutex
	unsub   func()
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  bool
	mask    event.Mask
}

// NewFeed subscribes to bus. Close it to unsubscribe and stop its
// goroutine.
func NewFeed(bus *event.Bus, cfg FeedConfig) *Feed {
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4096
	}
	f := &Feed{ch: make(chan event.Event, cfg.Buffer), bus: bus, cfg: cfg, stop: make(chan struct{})}
	f.mask = event.AllKinds &^ event.MaskOf(cfg.Skip...)
	f.attach()
	if cfg.Off > 0 && cfg.On > 0 {
		f.wg.Add(1)
		go f.cycle()
	}
	return f
}

// Events is the tapped stream.
func (f *Feed) Events() <-chan event.Event { return f.ch }

// Dropped counts events lost because the reader lagged.
func (f *Feed) Dropped() int64 { return f.dropped.Load() }

func (f *Feed) deliver(e event.Event) {
	if e.Time.IsZero() {
		if f.cfg.Now != nil {
			e.Time = f.cfg.Now()
		} else {
			e.Time = time.Now()
		}
	}
	select {
	case f.ch <- e:
	default:
		f.dropped.Add(1)
	}
}

func (f *Feed) attach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsub == nil && !f.closed {
		f.unsub = f.bus.SubscribeKinds(f.mask, f.deliver)
	}
}

func (f *Feed) detach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsub != nil {
		f.unsub()
		f.unsub = nil
	}
}

// cycle alternates attached and detached periods until Close.
func (f *Feed) cycle() {
	defer f.wg.Done()
	t := time.NewTimer(f.cfg.On)
	defer t.Stop()
	on := true
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		if on {
			f.detach()
			t.Reset(f.cfg.Off)
		} else {
			f.attach()
			t.Reset(f.cfg.On)
		}
		on = !on
	}
}

// Sampling describes the tap's duty cycle for the header.
func (f *Feed) Sampling() string {
	if f.cfg.Off <= 0 || f.cfg.On <= 0 {
		return "every event"
	}
	return fmt.Sprintf("%s of every %s", f.cfg.On, f.cfg.On+f.cfg.Off)
}

// Close unsubscribes and waits for the feed's goroutine. The channel is
// not closed: readers select on their own stop signal.
func (f *Feed) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.stop)
	f.mu.Unlock()
	f.wg.Wait()
	f.detach()
}

// DefaultFeedConfig is the dashboard's tap: attached 100 ms out of every
// second, which samples enough events for the key, latency and log panels
// while the engine builds events a tenth of the time.
var DefaultFeedConfig = FeedConfig{Buffer: 8192, On: 20 * time.Millisecond, Off: 980 * time.Millisecond,
	Skip: []event.Kind{event.RecordSubmitted, event.RecordFinished, event.ReadHit}}
