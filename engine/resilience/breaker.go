// Package resilience holds the utilities that callers compose around calls
// to fallible services: a circuit breaker, retry with exponential backoff
// (blocking, and async so a runner is never put to sleep), and a PID
// controller for adaptive limits. Time always comes from an injected
// async.Clock, so tests and scenarios run on virtual time.
package resilience

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"clink/engine/async"
	"clink/engine/event"
)

// Breaker defaults, as in the design (docs/engine.md).
const (
	DefaultFailureThreshold = 5
	DefaultCooldown         = 30 * time.Second
)

// ErrOpen is returned by Allow (and Do) while the breaker rejects calls.
var ErrOpen = errors.New("resilience: circuit breaker open")

// State is a circuit breaker's state.
type State uint8

// The three breaker states.
const (
	// Closed admits every call and counts consecutive failures.
	Closed State = iota
	// Open rejects every call until the cooldown has passed.
	Open
	// HalfOpen admits a single probe whose outcome closes or re-opens.
	HalfOpen
)

// String is the lower-case state name used in events.
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("state(%d)", s)
}

// BreakerConfig configures a CircuitBreaker; zero fields take defaults.
type BreakerConfig struct {
	// Name labels transition events (the event's Operator field).
	Name string
	// FailureThreshold consecutive failures trip the breaker (default 5).
	FailureThreshold int
	// Cooldown is how long the breaker stays open before a probe (30s).
	Cooldown time.Duration
	// Clock is the time source (RealClock when nil).
	Clock async.Clock
	// Bus, when set, receives every transition as an event.Warning.
	Bus *event.Bus
	// OnTransition, when set, is called after every transition, outside
	// the breaker's lock.
	OnTransition func(from, to State)
}

// CircuitBreaker stops calling a failing service for a cooldown, then lets
// one probe decide whether to resume. It is safe for concurrent use, so
// every lookup against one service can share one breaker.
type CircuitBreaker struct {
	cfg BreakerConfig

	mu       sync.Mutex
	state    State
	failures int       // consecutive failures while closed
	openedAt time.Time // when the breaker last opened
	probeAt  time.Time // when the half-open probe was admitted
	probing  bool
}

// NewCircuitBreaker validates cfg and returns a closed breaker.
func NewCircuitBreaker(cfg BreakerConfig) (*CircuitBreaker, error) {
	if cfg.FailureThreshold < 0 {
		return nil, fmt.Errorf("resilience: breaker %q: failure threshold must not be negative, got %d", cfg.Name, cfg.FailureThreshold)
	}
	if cfg.Cooldown < 0 {
		return nil, fmt.Errorf("resilience: breaker %q: cooldown must not be negative, got %s", cfg.Name, cfg.Cooldown)
	}
	if cfg.FailureThreshold == 0 {
		cfg.FailureThreshold = DefaultFailureThreshold
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.Clock == nil {
		cfg.Clock = async.RealClock{}
	}
	return &CircuitBreaker{cfg: cfg}, nil
}

// State returns the current state (an open breaker whose cooldown has
// passed still reports Open until the next Allow admits a probe).
func (b *CircuitBreaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Allow reports whether a call may proceed: nil, or ErrOpen. After the
// cooldown it admits exactly one half-open probe; if that probe never
// reports back, another is admitted after a further cooldown.
func (b *CircuitBreaker) Allow() error {
	b.mu.Lock()
	now := b.cfg.Clock.Now()
	var tr *transition
	switch b.state {
	case Closed:
		b.mu.Unlock()
		return nil
	case Open:
		if now.Sub(b.openedAt) < b.cfg.Cooldown {
			b.mu.Unlock()
			return ErrOpen
		}
		tr = b.moveLocked(HalfOpen, "cooldown elapsed, admitting a probe")
	case HalfOpen:
		if b.probing && now.Sub(b.probeAt) < b.cfg.Cooldown {
			b.mu.Unlock()
			return ErrOpen
		}
	}
	b.probing, b.probeAt = true, now
	b.mu.Unlock()
	b.emit(tr)
	return nil
}

// Success records a call that worked: it resets the failure count and
// closes a half-open breaker.
func (b *CircuitBreaker) Success() {
	b.mu.Lock()
	b.failures = 0
	var tr *transition
	if b.state == HalfOpen {
		b.probing = false
		tr = b.moveLocked(Closed, "probe succeeded")
	}
	b.mu.Unlock()
	b.emit(tr)
}

// Failure records a failed call: the threshold-th consecutive failure opens
// a closed breaker, and a failed probe re-opens a half-open one.
func (b *CircuitBreaker) Failure() {
	b.mu.Lock()
	var tr *transition
	switch b.state {
	case Closed:
		b.failures++
		if b.failures >= b.cfg.FailureThreshold {
			tr = b.openLocked(fmt.Sprintf("%d consecutive failures", b.failures))
		}
	case HalfOpen:
		b.probing = false
		tr = b.openLocked("probe failed")
	}
	b.mu.Unlock()
	b.emit(tr)
}

// Do runs fn if the breaker allows it and records the outcome. Errors for
// which ignore returns true (a 404, a bad request) count as successes: the
// service answered. ignore may be nil.
func (b *CircuitBreaker) Do(fn func() error, ignore func(error) bool) error {
	if err := b.Allow(); err != nil {
		return err
	}
	err := fn()
	if err == nil || (ignore != nil && ignore(err)) {
		b.Success()
	} else {
		b.Failure()
	}
	return err
}

type transition struct {
	from, to State
	at       time.Time
	why      string
}

func (b *CircuitBreaker) openLocked(why string) *transition {
	b.failures = 0
	b.openedAt = b.cfg.Clock.Now()
	return b.moveLocked(Open, why)
}

func (b *CircuitBreaker) moveLocked(to State, why string) *transition {
	tr := &transition{from: b.state, to: to, at: b.cfg.Clock.Now(), why: why}
	b.state = to
	return tr
}

// emit publishes a transition outside the lock.
func (b *CircuitBreaker) emit(tr *transition) {
	if tr == nil {
		return
	}
	if b.cfg.Bus.Enabled() {
		b.cfg.Bus.Emit(event.Event{
			Kind: event.Warning, Time: tr.at, Operator: b.cfg.Name,
			Text: fmt.Sprintf("breaker %s -> %s: %s", tr.from, tr.to, tr.why),
		})
	}
	if b.cfg.OnTransition != nil {
		b.cfg.OnTransition(tr.from, tr.to)
	}
}
