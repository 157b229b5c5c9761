package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"clink/engine/async"
	"clink/state"
	"clink/state/objpool"
)

// Backoff of a read waiting out a remote outage.
const (
	outageRetryBase = 100 * time.Millisecond
	outageRetryMax  = 2 * time.Second
)

// patientPool makes state reads wait out a remote-tier outage: a read that
// fails with a transient store error (retries exhausted, or the circuit
// breaker open) is retried with backoff, blocking its operator (the
// in-flight cap then backpressures the pipeline), until the outage has
// lasted longer than the limit (Config.MaxOutage; 0: forever). Then the
// read fails with giveUp's clear error. Commits are not retried here: a
// failed checkpoint is retried by the next one.
type patientPool struct {
	state.RemotePool
	clock  async.Clock
	limit  time.Duration
	giveUp func(since time.Duration, cause error) error

	mu    sync.Mutex
	since time.Time // start of the current outage (zero: none)
}

// patientScanPool is a patientPool over a pool that scans key groups.
type patientScanPool struct {
	*patientPool
	scan state.KeyGroupScanner
}

// ScanKeyGroups forwards to the wrapped pool.
func (p patientScanPool) ScanKeyGroups(ctx context.Context, lo, hi int, fn func(state.Entry) error) error {
	return p.scan.ScanKeyGroups(ctx, lo, hi, fn)
}

// wrapPatient wraps pool, keeping its KeyGroupScanner face.
func wrapPatient(pool state.RemotePool, p *patientPool) state.RemotePool {
	p.RemotePool = pool
	if sc, ok := pool.(state.KeyGroupScanner); ok {
		return patientScanPool{patientPool: p, scan: sc}
	}
	return p
}

// transientStoreError reports whether err is an outage a retry may outlast.
func transientStoreError(err error) bool {
	return errors.Is(err, objpool.ErrTransient) || errors.Is(err, objpool.ErrCircuitOpen)
}

// GetMany reads keys, waiting out an outage up to the limit.
func (p *patientPool) GetMany(ctx context.Context, keys []state.Key) (res []state.Lookup, err error) {
	err = p.retry(ctx, func() error {
		res, err = p.RemotePool.GetMany(ctx, keys)
		return err
	})
	return res, err
}

// retry runs op until it succeeds or fails other than transiently, waiting
// out an outage up to the limit.
func (p *patientPool) retry(ctx context.Context, op func() error) error {
	wait := outageRetryBase
	for {
		start := p.clock.Now()
		err := op()
		if err == nil || !transientStoreError(err) || ctx.Err() != nil {
			if err == nil {
				p.recovered()
			}
			return err
		}
		since := p.failed(start)
		if p.limit > 0 && since > p.limit {
			return p.giveUp(since, err)
		}
		if serr := sleepCtx(ctx, p.clock, wait); serr != nil {
			return fmt.Errorf("%w (waiting out a remote outage: %v)", serr, err)
		}
		wait = min(2*wait, outageRetryMax)
	}
}

// failed marks an outage that began no later than start and returns how
// long it has lasted.
func (p *patientPool) failed(start time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since.IsZero() || start.Before(p.since) {
		p.since = start
	}
	return p.clock.Now().Sub(p.since)
}

func (p *patientPool) recovered() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since = time.Time{}
}

// sleepCtx waits d on clock or until ctx ends.
func sleepCtx(ctx context.Context, clock async.Clock, d time.Duration) error {
	done := make(chan struct{})
	stop := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		stop()
		return ctx.Err()
	}
}
