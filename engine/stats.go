package engine

import "sync/atomic"

// counters are runner-private tallies, published to atomics in batches so
// the per-record path pays no atomic instructions.
type counters struct {
	submitted, finished, parks, suspends, resumes int64
	backpressure, failures, releases              int64
}

type atomicCounters struct {
	submitted, finished, parks, suspends, resumes atomic.Int64
	backpressure, failures, releases              atomic.Int64
	inflight, parked, openEpoch, pendingEpochs    atomic.Int64
	maxInFlight                                   atomic.Int64
}

// Stats is a point-in-time view of a controller, readable from any
// goroutine (the TUI and metrics read it). It lags the runner by at most one
// Poll.
type Stats struct {
	Submitted, Finished, Parks, Suspends, Resumes int64
	Backpressure, Failures, Releases              int64
	InFlight, Parked                              int64
	OpenEpoch, PendingEpochs                      int64
	MaxInFlight                                   int64 // the current cap
}

func (c *Controller) publish() {
	s, l := &c.snapshot, &c.local
	s.submitted.Store(l.submitted)
	s.finished.Store(l.finished)
	s.parks.Store(l.parks)
	s.suspends.Store(l.suspends)
	s.resumes.Store(l.resumes)
	s.backpressure.Store(l.backpressure)
	s.failures.Store(l.failures)
	s.releases.Store(l.releases)
	s.inflight.Store(int64(c.inflight))
	s.parked.Store(int64(c.parked))
	s.openEpoch.Store(int64(c.epochs[len(c.epochs)-1].id))
	s.pendingEpochs.Store(int64(len(c.epochs) - 1))
	s.maxInFlight.Store(int64(c.cfg.MaxInFlight))
}

// Snapshot returns the last published counters.
func (c *Controller) Snapshot() Stats {
	s := &c.snapshot
	return Stats{
		Submitted: s.submitted.Load(), Finished: s.finished.Load(),
		Parks: s.parks.Load(), Suspends: s.suspends.Load(), Resumes: s.resumes.Load(),
		Backpressure: s.backpressure.Load(), Failures: s.failures.Load(), Releases: s.releases.Load(),
		InFlight: s.inflight.Load(), Parked: s.parked.Load(),
		OpenEpoch: s.openEpoch.Load(), PendingEpochs: s.pendingEpochs.Load(),
		MaxInFlight: s.maxInFlight.Load(),
	}
}
