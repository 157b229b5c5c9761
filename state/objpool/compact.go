package objpool

import (
	"bytes"
	"context"
	"fmt"
)

// Compaction merges a partition's chain of runs, and the records a commit
// adds, into one base run. It streams: each source is read one block at a
// time (runIter) and the output is encoded as records come (runWriter), so
// what compaction holds besides the output object is one block per source,
// not the runs; docs/object-layout.md "Compaction".

// compactHook, when set (tests), is called after each source block is
// loaded, to sample the heap mid-merge.
var compactHook func()

// runIter yields a sorted source's records in key order: a run's, one
// block at a time, or (run nil) an in-memory slice's.
type runIter struct {
	p    *Pool
	run  *RunRef
	x    *runIndex
	next int      // the next block of run to load
	recs []record // the loaded block's records not yet yielded
}

// sliceIter yields recs.
func sliceIter(recs []record) *runIter { return &runIter{recs: recs} }

// openRun returns an iterator over run's records, reading its index now
// (through the index cache) and its blocks as they are reached.
func (p *Pool) openRun(ctx context.Context, run *RunRef) (*runIter, error) {
	x, err := p.index(ctx, run)
	if err != nil {
		return nil, err
	}
	it := &runIter{p: p, run: run, x: x}
	return it, it.fill(ctx)
}

// fill loads blocks until one holds a record or the run ends. A block the
// cache holds is used as is; the others are read with one ranged GET each
// and not cached, so a compaction sweep does not evict the blocks reads
// need.
func (it *runIter) fill(ctx context.Context) error {
	for len(it.recs) == 0 && it.run != nil && it.next < len(it.x.blocks) {
		b := it.next
		it.next++
		var blk *block
		if v, ok := it.p.cache.get(blockCacheKey(it.run.Key, b)); ok {
			blk = v.(*block)
		} else {
			var err error
			if blk, err = it.p.fetchBlock(ctx, it.run, it.x.blocks[b]); err != nil {
				return err
			}
		}
		recs, err := blk.records()
		if err != nil {
			return asDamage(it.run.Key, fmt.Errorf("run %s: %w", it.run.Key, err))
		}
		it.recs = recs
		if compactHook != nil {
			compactHook()
		}
	}
	return nil
}

// peek returns the next record, or false at the end.
func (it *runIter) peek() (record, bool) {
	if len(it.recs) == 0 {
		return record{}, false
	}
	return it.recs[0], true
}

// advance drops the next record.
func (it *runIter) advance(ctx context.Context) error {
	it.recs = it.recs[1:]
	if len(it.recs) == 0 {
		it.recs = nil // release the block
		return it.fill(ctx)
	}
	return nil
}

// mergeChain merges recs (sorted, de-duplicated) over a partition's chain
// into run key, dropping tombstones: the result is a complete base run. It
// returns the run's bytes and entry, or nil when no live record remains.
func (p *Pool) mergeChain(ctx context.Context, chain []RunRef, recs []record, key string) ([]byte, *RunRef, error) {
	sources := make([]*runIter, 0, len(chain)+1)
	sources = append(sources, sliceIter(recs)) // newest first: recs, then the chain
	for i := range chain {
		it, err := p.openRun(ctx, &chain[i])
		if err != nil {
			return nil, nil, fmt.Errorf("compact: %w", err)
		}
		sources = append(sources, it)
	}
	w := newRunWriter(key, p.cfg.BlockSize, 0)
	if err := mergeSources(ctx, sources, w.add); err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err)
	}
	if w.count() == 0 {
		return nil, nil, nil
	}
	data, ref := w.finish()
	return data, &ref, nil
}

// mergeSources merges sorted, de-duplicated sources (newest first) in key
// order into emit: for a key in several sources the newest record wins,
// and tombstones are dropped. A record emit receives is valid only during
// the call.
func mergeSources(ctx context.Context, sources []*runIter, emit func(record)) error {
	for {
		best := -1
		var r record
		for i, src := range sources {
			cur, ok := src.peek()
			if ok && (best < 0 || bytes.Compare(cur.ik, r.ik) < 0) {
				best, r = i, cur // ties keep the lower (newer) index
			}
		}
		if best < 0 {
			return nil
		}
		if !r.deleted {
			emit(r)
		}
		// Advance the winner last: r aliases its block.
		for i, src := range sources {
			if cur, ok := src.peek(); i != best && ok && bytes.Equal(cur.ik, r.ik) {
				if err := src.advance(ctx); err != nil {
					return err
				}
			}
		}
		if err := sources[best].advance(ctx); err != nil {
			return err
		}
	}
}
