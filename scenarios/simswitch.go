package scenarios

import (
	"sync/atomic"
	"time"

	"clink/engine/async"
)

// simSwitch is the SQL session's clock, completion executor and checkpoint
// persist executor. It forwards to the current simulation, which a crash
// replaces (at the same virtual time), so reads and commits still in
// flight are lost as in a real crash and the crashed job's completions
// never run. The replayer's goroutine drives it; a cancelled read may still
// ask the time from a context's goroutine, so the current simulation is
// swapped atomically.
type simSwitch struct {
	sim     atomic.Pointer[async.Sim]
	seed    uint64
	latency async.Latency
	n       uint64 // replacements so far
}

func newSimSwitch(seed uint64, l async.Latency) *simSwitch {
	s := &simSwitch{seed: seed, latency: l}
	s.sim.Store(async.NewSim(seed, l))
	return s
}

// cur is the simulation now in use.
func (s *simSwitch) cur() *async.Sim { return s.sim.Load() }

// Now is the current simulation's virtual time.
func (s *simSwitch) Now() time.Time { return s.cur().Now() }

// AfterFunc schedules f on the current simulation.
func (s *simSwitch) AfterFunc(d time.Duration, f func()) func() bool { return s.cur().AfterFunc(d, f) }

// SubmitBlocking runs job on the current simulation after a sampled latency.
func (s *simSwitch) SubmitBlocking(job func()) error { return s.cur().SubmitBlocking(job) }

// SubmitRead reads a file on the current simulation.
func (s *simSwitch) SubmitRead(fd int, buf []byte, off int64, done func(int, error)) error {
	return s.cur().SubmitRead(fd, buf, off, done)
}

// Close does nothing: the switch outlives every job of the session.
func (s *simSwitch) Close() error { return nil }

// setLatency changes the latency of later submissions.
func (s *simSwitch) setLatency(l async.Latency) {
	s.latency = l
	s.cur().SetLatency(l)
}

// replace discards the current simulation and its scheduled events and
// continues on a fresh one at the same virtual time.
func (s *simSwitch) replace() {
	s.n++
	sim := async.NewSim(s.seed+s.n*0x9e3779b9, s.latency)
	sim.AdvanceTo(s.cur().Now())
	s.sim.Store(sim)
}

// elapsed is the virtual time since the simulation epoch.
func (s *simSwitch) elapsed() time.Duration { return s.cur().Now().Sub(async.SimEpoch) }
