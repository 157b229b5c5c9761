package state

import (
	"context"
	"fmt"

	"clink/engine/async"
	"clink/engine/event"
)

// SupportsAsyncGet is true: cold reads can be deferred.
func (b *RemoteReadBackend) SupportsAsyncGet() bool { return true }

// SetResumeScheduler wires the runner's hand-back for completed loads.
func (b *RemoteReadBackend) SetResumeScheduler(s async.Scheduler) {
	b.mu.Lock()
	b.sched = s
	b.mu.Unlock()
}

// noop is the body of tasks that a load completes from outside.
func noop[T any](*async.Task[T]) {}

// GetAsync returns a hot hit at once with a nil task and no allocation. On
// a miss it starts the load at once and returns a pending task; the load
// runs on the executor (or the pool's async face) and its completion is
// handed back through the resume scheduler, so the write-through and the
// task's completion run on the runner. Without a scheduler it loads inline.
func (b *RemoteReadBackend) GetAsync(op OpID, key []byte, orderKey int64) (Lookup, *async.Task[Lookup]) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return Lookup{}, async.Resolved(Lookup{}, ErrClosed)
	}
	if lk, _, ok := b.hitLocked(op, key); ok {
		b.mu.Unlock()
		return lk, nil
	}
	sched := b.sched
	if sched == nil {
		lk, err := b.loadInlineLocked(op, key)
		if err != nil {
			return Lookup{}, async.Resolved(Lookup{}, err)
		}
		return lk, nil
	}
	e := b.missLocked(op, key)
	gen := b.gen
	b.mu.Unlock()

	t := async.New(noop[Lookup])
	keys := []Key{splitKey(e.k)}
	rt := b.startTiming()
	b.fetchAsync(b.ctx, keys, rt, func(res []Lookup, err error) {
		sched.ScheduleResume(async.HandleFunc(func() {
			var lk Lookup
			if err == nil {
				lk = res[0]
			}
			b.mu.Lock()
			lk = b.fillLocked(e, gen, lk, err)
			b.mu.Unlock()
			b.emitDone(1, err, rt)
			t.Complete(lk, err)
		}), orderKey)
	})
	return Lookup{}, t
}

// GetManyAsync serves hot hits at once and loads every miss in one batched
// read with one suspension. It returns (results, nil) when no load was
// needed (all hits, or loaded inline without a scheduler).
func (b *RemoteReadBackend) GetManyAsync(op OpID, keys [][]byte) ([]Lookup, *async.Task[[]Lookup]) {
	res := make([]Lookup, len(keys))
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, async.Resolved[[]Lookup](nil, ErrClosed)
	}
	var missIdx []int
	var missEnt []*entry
	for i, k := range keys {
		if lk, _, ok := b.hitLocked(op, k); ok {
			res[i] = lk
			continue
		}
		missIdx = append(missIdx, i)
		missEnt = append(missEnt, b.missLocked(op, k))
	}
	if len(missIdx) == 0 {
		b.mu.Unlock()
		return res, nil
	}
	gen, sched := b.gen, b.sched
	b.mu.Unlock()
	b.emitBatch(len(missIdx))

	missKeys := make([]Key, len(missIdx))
	for j, i := range missIdx {
		missKeys[j] = Key{Op: op, Key: append([]byte(nil), keys[i]...)} // the caller may reuse keys
	}
	if sched == nil {
		rt := b.startTiming()
		loaded, err := b.fetchSync(b.ctx, missKeys, rt)
		if err = b.scatter(res, missIdx, missEnt, gen, loaded, err, rt); err != nil {
			return nil, async.Resolved[[]Lookup](nil, err)
		}
		return res, nil
	}
	t := async.New(noop[[]Lookup])
	rt := b.startTiming()
	b.fetchAsync(b.ctx, missKeys, rt, func(loaded []Lookup, err error) {
		sched.ScheduleResume(async.HandleFunc(func() {
			if err := b.scatter(res, missIdx, missEnt, gen, loaded, err, rt); err != nil {
				t.Complete(nil, err)
				return
			}
			t.Complete(res, nil)
		}), 0)
	})
	return nil, t
}

// scatter writes a batched load through and places each result at its
// index in res.
func (b *RemoteReadBackend) scatter(res []Lookup, idx []int, ents []*entry, gen uint64, loaded []Lookup, err error, rt *readTiming) error {
	b.mu.Lock()
	for j, e := range ents {
		var lk Lookup
		if err == nil {
			lk = loaded[j]
		}
		res[idx[j]] = b.fillLocked(e, gen, lk, err)
	}
	b.mu.Unlock()
	b.emitDone(len(ents), err, rt)
	return err
}

func (b *RemoteReadBackend) emitBatch(n int) {
	if b.opts.Bus.Wants(event.ReadBatch) {
		b.emitter().emit(event.ReadBatch, "", int64(n), 0, "")
	}
}

// fetchSync reads keys from the pool or loader on the calling goroutine,
// timing the call into rt (nil: untimed).
func (b *RemoteReadBackend) fetchSync(ctx context.Context, keys []Key, rt *readTiming) ([]Lookup, error) {
	b.mu.Lock()
	b.st.batches++
	b.mu.Unlock()
	var res []Lookup
	var err error
	sent := rt.send(b.opts.Now)
	if b.pool != nil {
		res, err = b.pool.GetMany(ctx, keys)
	} else {
		res, err = b.opts.Loader(ctx, keys)
	}
	rt.answered(b.opts.Now, sent)
	if err != nil {
		return nil, fmt.Errorf("load %d keys: %w", len(keys), err)
	}
	if len(res) != len(keys) {
		return nil, fmt.Errorf("load %d keys: pool returned %d results", len(keys), len(res))
	}
	return res, nil
}

// fetchAsync reads keys without blocking the caller and calls done once,
// from a foreign goroutine: through the pool's async face when it has one,
// else on the executor. rt (nil: untimed) gets the pool's round trip
// before done is called.
func (b *RemoteReadBackend) fetchAsync(ctx context.Context, keys []Key, rt *readTiming, done func([]Lookup, error)) {
	if b.apool != nil {
		b.mu.Lock()
		b.st.batches++
		b.mu.Unlock()
		sent := rt.send(b.opts.Now)
		b.apool.GetManyAsync(ctx, keys, func(res []Lookup, err error) {
			rt.answered(b.opts.Now, sent)
			if err == nil && len(res) != len(keys) {
				err = fmt.Errorf("pool returned %d results", len(res))
			}
			if err != nil {
				done(nil, fmt.Errorf("load %d keys: %w", len(keys), err))
				return
			}
			done(res, nil)
		})
		return
	}
	if err := b.exec.SubmitBlocking(func() { done(b.fetchSync(ctx, keys, rt)) }); err != nil {
		done(nil, fmt.Errorf("load %d keys: %w", len(keys), err))
	}
}

// reservation is a coalesced read's claim on its key's placeholder, made
// when the read is parked: the flush loads it without looking the key up
// again.
type reservation struct {
	e   *entry
	gen uint64
}

var _ reserver = (*RemoteReadBackend)(nil)

// hitOrReserve returns the hot value of (op, key), or, on a miss, reserves
// the key's placeholder (one more load waits on it, counted in flight) for
// a later loadReserved. The miss is counted when the load is issued. err is
// ErrClosed when the backend is closed.
func (b *RemoteReadBackend) hitOrReserve(op OpID, key []byte) (Lookup, reservation, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return Lookup{}, reservation{}, false, ErrClosed
	}
	lk, e, hit := b.hitLocked(op, key)
	if hit {
		return lk, reservation{}, true, nil
	}
	if e == nil {
		e = b.hot.insert(b.scratch)
	}
	e.loads++
	b.st.inFlight++
	return Lookup{}, reservation{e: e, gen: b.gen}, false, nil
}

// release gives up reservations that will not be loaded.
func (b *RemoteReadBackend) release(rs []reservation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rs {
		r.e.loads--
		b.st.inFlight--
		if r.gen == b.gen && !r.e.detached {
			b.hot.changed(r.e)
			b.hot.dropPlaceholder(r.e)
		}
	}
	// A released entry that holds a value may have become evictable.
	b.evictLocked()
}

// loadReserved loads reserved keys (keys[j] is rs[j]'s key, owned by the
// load) in one batched read, counted as misses now, and calls done(j, ...)
// for each on the runner (through the resume scheduler; inline without
// one) once its result is written through. The batch's ReadDone comes
// first, then each fill and its done in turn, so the reader's write finds
// the entry it just filled; the order is the same whether or not anyone
// listens on the bus, so a listener cannot change what stays hot.
func (b *RemoteReadBackend) loadReserved(op OpID, rs []reservation, keys []Key, done func(j int, lk Lookup, err error)) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.release(rs)
		for j := range rs {
			done(j, Lookup{}, ErrClosed)
		}
		return
	}
	n := len(rs)
	b.st.misses += int64(n)
	if b.opts.Bus.Wants(event.ReadMiss) {
		for _, k := range keys {
			b.emitKey(event.ReadMiss, op, k.Key, 0)
		}
	}
	sched := b.sched
	b.mu.Unlock()
	b.emitBatch(n)
	rt := b.startTiming()
	complete := func(loaded []Lookup, err error) {
		lkAt := func(j int) Lookup {
			if err != nil {
				return Lookup{}
			}
			return loaded[j]
		}
		b.emitDone(n, err, rt)
		for j, r := range rs {
			b.mu.Lock()
			lk := b.fillLocked(r.e, r.gen, lkAt(j), err)
			if err == nil && r.gen == b.gen && !r.e.detached {
				b.last = r.e
			}
			b.mu.Unlock()
			done(j, lk, err)
		}
	}
	if sched == nil {
		complete(b.fetchSync(b.ctx, keys, rt))
		return
	}
	b.fetchAsync(b.ctx, keys, rt, func(loaded []Lookup, err error) {
		sched.ScheduleResume(async.HandleFunc(func() { complete(loaded, err) }), 0)
	})
}
