package objpool

import (
	"context"
	"fmt"
	"sync"

	"clink/state"
)

// partOf maps an internal key to its partition. The pool's partitions are
// its own (seed 0, fixed per pool), independent of the job's key groups, so
// GetMany can route a bare key.
func partOf(ik []byte, parts int) int {
	return state.KeyGroup(state.Hash(0, ik), parts)
}

// GetMany reads keys as of the served checkpoint: keys are grouped per
// partition and looked up run by run, newest first; each partition is read
// in its own goroutine (one partition: on the caller's) and every request
// holds one of Concurrency slots.
func (p *Pool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	m := p.servedManifest()
	out := make([]state.Lookup, len(keys))
	if m.Checkpoint == 0 || len(keys) == 0 {
		return out, nil
	}
	iks := make([][]byte, len(keys))
	byPart := make(map[int][]int, 1)
	for i, k := range keys {
		iks[i] = ikey(k)
		part := partOf(iks[i], m.Partitions)
		byPart[part] = append(byPart[part], i)
	}
	var errs []error
	if len(byPart) == 1 {
		for part, idxs := range byPart {
			if err := p.readPartition(ctx, m.Runs[part], iks, idxs, out); err != nil {
				errs = append(errs, err)
			}
		}
	} else {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for part, idxs := range byPart {
			wg.Go(func() {
				if err := p.readPartition(ctx, m.Runs[part], iks, idxs, out); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	if err := joinErrors(errs); err != nil {
		return nil, p.refuse(ctx, m, fmt.Errorf("objpool %s: get %d keys at checkpoint %d: %w", p, len(keys), m.Checkpoint, err))
	}
	return out, nil
}

// readPartition resolves the keys idxs of one partition against its runs.
// Keys whose block is cached are resolved at once; the other blocks a run
// needs are fetched together.
func (p *Pool) readPartition(ctx context.Context, runs []RunRef, iks [][]byte, idxs []int, out []state.Lookup) error {
	pending := idxs
	var next []int
	for r := range runs {
		if len(pending) == 0 {
			return nil
		}
		run := &runs[r]
		x, err := p.index(ctx, run)
		if err != nil {
			return err
		}
		next = next[:0:0] // pending may alias the previous next
		var need map[int][]int
		for _, i := range pending {
			b := -1
			if run.covers(iks[i]) && x.filter.mayContain(iks[i]) {
				b = x.find(iks[i])
			}
			if b < 0 {
				next = append(next, i)
				continue
			}
			if v, ok := p.cache.get(blockCacheKey(run.Key, b)); ok {
				if next, err = resolve(v.(*block), iks[i], i, out, next); err != nil {
					return asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
				}
				continue
			}
			if need == nil {
				need = make(map[int][]int, 1)
			}
			need[b] = append(need[b], i)
		}
		if len(need) > 0 {
			blocks, err := p.blocks(ctx, run, x, need)
			if err != nil {
				return err
			}
			for b, is := range need {
				for _, i := range is {
					if next, err = resolve(blocks[b], iks[i], i, out, next); err != nil {
						return asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
					}
				}
			}
		}
		pending = next
	}
	return nil
}

// resolve looks ik (the key at index i) up in blk: a hit is written to
// out[i] (a copy: the block stays immutable and the hot tier may keep the
// value), a miss appended to next for the older runs.
func resolve(blk *block, ik []byte, i int, out []state.Lookup, next []int) ([]int, error) {
	rec, ok, err := blk.lookup(ik)
	if err != nil || !ok {
		return append(next, i), err
	}
	if !rec.deleted {
		out[i] = state.Lookup{Value: append([]byte{}, rec.value...), Found: true}
	}
	return next, nil
}

// index returns a run's parsed index: small runs are fetched whole (and
// their blocks cached), large ones by a ranged read of the index alone.
func (p *Pool) index(ctx context.Context, run *RunRef) (*runIndex, error) {
	if v, ok := p.meta.get(indexCacheKey(run.Key)); ok {
		return v.(*runIndex), nil
	}
	v, err := p.flight.do(ctx, indexCacheKey(run.Key), func() (any, error) { return p.fetchIndex(ctx, run) })
	if err != nil {
		return nil, err
	}
	return v.(*runIndex), nil
}

func (p *Pool) fetchIndex(ctx context.Context, run *RunRef) (*runIndex, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	if run.Size <= p.cfg.SmallRun {
		// A ranged read of the whole object: no ETag to compute.
		x, blocks, err := p.readWholeRun(ctx, run)
		if err != nil {
			return nil, err
		}
		// Cached apart, the index and each block get their own bytes: one
		// of them left in a cache must not hold the whole run's buffer,
		// which the cache's bound does not count.
		x = x.detached()
		for i, b := range blocks {
			b = b.detached()
			p.cache.put(blockCacheKey(run.Key, i), b, b.size())
		}
		p.meta.put(indexCacheKey(run.Key), x, x.size())
		return x, nil
	}
	// Format 3: the index with the footer that checksums it.
	n := run.IndexLen
	if run.format() >= 3 {
		n = run.Size - run.IndexOff
	}
	data, err := p.readRun(ctx, run, run.IndexOff, n)
	if err != nil {
		return nil, err
	}
	if run.format() >= 3 {
		if data, err = checkTail(run, data); err != nil {
			return nil, asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
		}
	}
	x, err := parseIndex(data, run.format())
	if err == nil && run.format() >= 3 {
		err = checkIndex(run, x)
	}
	if err != nil {
		return nil, asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
	}
	p.meta.put(indexCacheKey(run.Key), x, x.size())
	return x, nil
}

// blocks fetches the needed blocks of one run, in parallel when there are
// several (one is fetched on the caller's goroutine).
func (p *Pool) blocks(ctx context.Context, run *RunRef, x *runIndex, need map[int][]int) (map[int]*block, error) {
	out := make(map[int]*block, len(need))
	if len(need) == 1 {
		for b := range need {
			blk, err := p.block(ctx, run, x, b)
			if err != nil {
				return nil, err
			}
			out[b] = blk
		}
		return out, nil
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for b := range need {
		key := blockCacheKey(run.Key, b)
		if v, ok := p.cache.get(key); ok {
			mu.Lock()
			out[b] = v.(*block)
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			blk, err := p.block(ctx, run, x, b)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[b] = blk
		})
	}
	wg.Wait()
	return out, joinErrors(errs)
}

// block returns block b of run, fetching it once however many readers
// want it at the same time, and caches it.
func (p *Pool) block(ctx context.Context, run *RunRef, x *runIndex, b int) (*block, error) {
	key := blockCacheKey(run.Key, b)
	if v, ok := p.cache.get(key); ok {
		return v.(*block), nil
	}
	v, err := p.flight.do(ctx, key, func() (any, error) {
		blk, err := p.fetchBlock(ctx, run, x.blocks[b])
		if err == nil {
			p.cache.put(key, blk, blk.size())
		}
		return blk, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*block), nil
}

func (p *Pool) fetchBlock(ctx context.Context, run *RunRef, br blockRef) (*block, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	data, err := p.readRun(ctx, run, br.off, br.n)
	if err != nil {
		return nil, err
	}
	blk, err := parseBlockAt(data, run.format(), br)
	if err != nil {
		return nil, asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
	}
	return blk, nil
}
