package objpool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
// in its own goroutine and every request holds one of Concurrency slots.
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
	byPart := map[int][]int{}
	for i, k := range keys {
		iks[i] = ikey(k)
		part := partOf(iks[i], m.Partitions)
		byPart[part] = append(byPart[part], i)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
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
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("objpool %s: get %d keys at checkpoint %d: %w", p, len(keys), m.Checkpoint, err)
	}
	return out, nil
}

// readPartition resolves the keys idxs of one partition against its runs.
func (p *Pool) readPartition(ctx context.Context, runs []RunRef, iks [][]byte, idxs []int, out []state.Lookup) error {
	pending := idxs
	for r := range runs {
		if len(pending) == 0 {
			return nil
		}
		run := &runs[r]
		x, err := p.index(ctx, run)
		if err != nil {
			return err
		}
		need := map[int][]int{}
		var next []int
		for _, i := range pending {
			b := -1
			if run.covers(iks[i]) && x.filter.mayContain(iks[i]) {
				b = x.find(iks[i])
			}
			if b < 0 {
				next = append(next, i)
				continue
			}
			need[b] = append(need[b], i)
		}
		blocks, err := p.blocks(ctx, run, x, need)
		if err != nil {
			return err
		}
		for b, is := range need {
			for _, i := range is {
				rec, ok := blocks[b].lookup(iks[i])
				if !ok {
					next = append(next, i)
					continue
				}
				if !rec.deleted {
					out[i] = state.Lookup{Value: append([]byte{}, rec.value...), Found: true}
				}
			}
		}
		pending = next
	}
	return nil
}

// index returns a run's parsed index: small runs are fetched whole (and
// their blocks cached), large ones by a ranged read of the index alone.
func (p *Pool) index(ctx context.Context, run *RunRef) (*runIndex, error) {
	if v, ok := p.cache.get("i:" + run.Key); ok {
		return v.(*runIndex), nil
	}
	v, err := p.flight.do(ctx, "i:"+run.Key, func() (any, error) { return p.fetchIndex(ctx, run) })
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
		data, _, err := p.store.Get(ctx, run.Key)
		if err != nil {
			return nil, fmt.Errorf("read run: %w", err)
		}
		x, blocks, err := parseRun(data)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", run.Key, err)
		}
		for i, b := range blocks {
			p.cache.put(blockCacheKey(run.Key, i), b, b.size())
		}
		p.cache.put("i:"+run.Key, x, x.size())
		return x, nil
	}
	data, err := p.store.GetRange(ctx, run.Key, run.IndexOff, run.IndexLen)
	if err != nil {
		return nil, fmt.Errorf("read run index: %w", err)
	}
	x, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.Key, err)
	}
	p.cache.put("i:"+run.Key, x, x.size())
	return x, nil
}

func blockCacheKey(run string, i int) string { return "b:" + run + "#" + strconv.Itoa(i) }

// blocks fetches the needed blocks of one run in parallel.
func (p *Pool) blocks(ctx context.Context, run *RunRef, x *runIndex, need map[int][]int) (map[int]*block, error) {
	out := make(map[int]*block, len(need))
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
			v, err := p.flight.do(ctx, key, func() (any, error) {
				blk, err := p.fetchBlock(ctx, run, x.blocks[b])
				if err == nil {
					p.cache.put(key, blk, blk.size())
				}
				return blk, err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[b] = v.(*block)
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (p *Pool) fetchBlock(ctx context.Context, run *RunRef, br blockRef) (*block, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	data, err := p.store.GetRange(ctx, run.Key, br.off, br.n)
	if err != nil {
		return nil, fmt.Errorf("read run block: %w", err)
	}
	blk, err := parseBlock(data)
	if err != nil {
		return nil, fmt.Errorf("run %s at %d: %w", run.Key, br.off, err)
	}
	return blk, nil
}
