package async

import (
	"container/heap"
	"math/rand/v2"
	"sync"
	"time"
)

// Clock is the injected source of time: wall time in production, virtual
// time under a Sim so a run is deterministic.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has elapsed; stop cancels it and reports
	// whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is wall time.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Sim is a deterministic Clock and Executor in one: virtual time advances
// only when the driver steps it, and every submitted job completes at a
// virtual time drawn from a seeded latency distribution. All callbacks run on
// the goroutine that calls Step, so a scenario driven from one loop is
// reproducible byte for byte.
type Sim struct {
	mu      sync.Mutex
	now     time.Time
	rng     *rand.Rand
	latency Latency
	events  simHeap
	seq     uint64
	closed  bool
}

// SimEpoch is the virtual time a Sim starts at.
var SimEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewSim returns a Sim whose jobs take latency (sampled from seed) to finish.
func NewSim(seed uint64, latency Latency) *Sim {
	return &Sim{now: SimEpoch, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), latency: latency}
}

// SetLatency changes the distribution later jobs are drawn from.
func (s *Sim) SetLatency(l Latency) {
	s.mu.Lock()
	s.latency = l
	s.mu.Unlock()
}

// Now returns the virtual time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// AfterFunc schedules f at virtual now+d.
func (s *Sim) AfterFunc(d time.Duration, f func()) func() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.pushLocked(s.now.Add(d), f)
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if ev.fn == nil {
			return false
		}
		ev.fn = nil
		return true
	}
}

// SubmitBlocking runs job at a virtual time drawn from the latency
// distribution.
func (s *Sim) SubmitBlocking(job func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	d := time.Duration(0)
	if s.latency != nil {
		d = s.latency.Sample(s.rng)
	}
	s.pushLocked(s.now.Add(d), job)
	return nil
}

// SubmitRead reads synchronously when its virtual completion time comes.
func (s *Sim) SubmitRead(fd int, buf []byte, off int64, done func(int, error)) error {
	return s.SubmitBlocking(func() {
		n, err := preadFull(fd, buf, off)
		done(n, err)
	})
}

// Close refuses further jobs; queued ones can still be stepped.
func (s *Sim) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// Pending returns the number of scheduled events.
func (s *Sim) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if e.fn != nil {
			n++
		}
	}
	return n
}

// Step runs the earliest event (advancing virtual time to it) and reports
// whether there was one.
func (s *Sim) Step() bool {
	for {
		s.mu.Lock()
		if len(s.events) == 0 {
			s.mu.Unlock()
			return false
		}
		ev := heap.Pop(&s.events).(*simEvent)
		if ev.at.After(s.now) {
			s.now = ev.at
		}
		fn := ev.fn
		ev.fn = nil
		s.mu.Unlock()
		if fn != nil {
			fn()
			return true
		}
	}
}

// AdvanceTo runs every event due at or before t, then sets the clock to t.
func (s *Sim) AdvanceTo(t time.Time) {
	for {
		s.mu.Lock()
		if len(s.events) == 0 || s.events[0].at.After(t) {
			if t.After(s.now) {
				s.now = t
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.Step()
	}
}

func (s *Sim) pushLocked(at time.Time, f func()) *simEvent {
	s.seq++
	ev := &simEvent{at: at, seq: s.seq, fn: f}
	heap.Push(&s.events, ev)
	return ev
}

type simEvent struct {
	at  time.Time
	seq uint64
	fn  func()
}

type simHeap []*simEvent

func (h simHeap) Len() int { return len(h) }
func (h simHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h simHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)   { *h = append(*h, x.(*simEvent)) }
func (h *simHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
