package objpool

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"clink/state"
)

// Commit durably writes d and makes d.ID the served checkpoint:
//
//  1. read CURRENT; it must be unchanged since this writer restored or
//     committed d.Parent (or, for a writer that did neither, name d.Parent),
//     else ErrFenced (fence.go);
//  2. write one run per touched partition (merging a partition's chain into
//     one run when it would exceed MaxRuns) and the hot keys, each under a
//     key unique to this writer and attempt, with If-None-Match: *;
//  3. write the manifest with If-None-Match: *;
//  4. advance CURRENT with If-Match on the ETag read in step 1.
//
// Nothing is visible until step 4 succeeds, so a crash anywhere before it
// leaves only unreferenced objects; a writer that lost step 4 is fenced.
//
// Then, with Config.Retain set, it garbage-collects what no retained
// checkpoint references (gc.go); that never fails the commit.
func (p *Pool) Commit(ctx context.Context, d *state.Delta) (err error) {
	if err := p.check(); err != nil {
		return err
	}
	if d == nil || d.ID <= d.Parent {
		return fmt.Errorf("objpool %s: commit: checkpoint id must exceed its parent", p)
	}
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	defer func() {
		if err != nil {
			p.gc.swept = false // a failed attempt may have left objects
		}
	}()
	cur, etag, exists, rerr := p.readCurrent(ctx)
	parent, err := p.commitParent(ctx, d, cur, etag, exists, rerr)
	if err != nil {
		return err
	}
	token := fmt.Sprintf("%s-%d", p.cfg.WriterID, p.seq.Add(1))
	m, err := p.writeCheckpoint(ctx, d, parent, token)
	if err != nil {
		return p.refuse(ctx, parent, fmt.Errorf("objpool %s: commit %d: %w", p, d.ID, err))
	}
	newEtag, err := p.advance(ctx, cur, etag, exists, m)
	if err != nil {
		return err
	}
	p.meta.put(manifestCacheKey(m.key), m, 1024)
	p.mu.Lock()
	p.served = m
	p.own = ownership{set: true, id: m.Checkpoint, m: m, etag: newEtag, exists: true}
	p.mu.Unlock()
	p.collect(ctx, m)
	return nil
}

// writeCheckpoint writes the runs, hot keys and manifest of d.
func (p *Pool) writeCheckpoint(ctx context.Context, d *state.Delta, parent *manifest, token string) (*manifest, error) {
	m := &manifest{
		Version: layoutVersion, Checkpoint: d.ID, Parent: d.Parent, Writer: p.cfg.WriterID,
		Partitions: parent.Partitions, Runs: slices.Clone(parent.Runs), Ancestors: parent.childAncestors(),
		key: manifestKey(d.ID, token),
	}
	groups := groupEntries(d.Entries, m.Partitions)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for part, recs := range groups {
		wg.Go(func() {
			runs, err := p.writePartition(ctx, part, parent.Runs[part], recs, runKey(part, d.ID, token))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("partition %d: %w", part, err))
				return
			}
			m.Runs[part] = runs
		})
	}
	if len(d.HotKeys) > 0 {
		m.HotKeys = hotKeysKey(d.ID, token)
		wg.Go(func() {
			if err := p.putUnique(ctx, m.HotKeys, encodeKeys(m.HotKeys, d.HotKeys)); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("hot keys: %w", err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil { // one line per failed object (session.BriefError)
		return nil, err
	}
	b, err := encodeManifest(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if err := p.putUnique(ctx, m.key, b); err != nil {
		return nil, fmt.Errorf("write manifest: %w", err)
	}
	return m, nil
}

// groupEntries splits entries per partition, sorted by key; the last entry
// for a key wins. Values alias the delta's (immutable until the commit is
// acknowledged); internal keys share one buffer.
func groupEntries(entries []state.Entry, parts int) map[int][]record {
	groups := map[int][]record{}
	n := 0
	for _, e := range entries {
		n += 4 + len(e.Key.Key)
	}
	iks := make([]byte, 0, n)
	for _, e := range entries {
		start := len(iks)
		iks = binary.BigEndian.AppendUint32(iks, uint32(e.Key.Op))
		iks = append(iks, e.Key.Key...)
		r := record{ik: iks[start:len(iks):len(iks)], deleted: e.Deleted, keyGroup: max(e.KeyGroup, 0)}
		if !e.Deleted {
			r.value = e.Value
		}
		part := partOf(r.ik, parts)
		groups[part] = append(groups[part], r)
	}
	for part, recs := range groups {
		groups[part] = sortDedup(recs)
	}
	return groups
}

// sortDedup sorts records by key, keeping the last of equal keys.
func sortDedup(recs []record) []record {
	slices.SortStableFunc(recs, func(a, b record) int { return bytes.Compare(a.ik, b.ik) })
	out := recs[:0]
	for i, r := range recs {
		if i+1 < len(recs) && bytes.Equal(r.ik, recs[i+1].ik) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// writePartition writes recs as a new run in front of the partition's
// chain, or merges the chain into one run when it would grow past MaxRuns
// (compact.go).
func (p *Pool) writePartition(ctx context.Context, part int, chain []RunRef, recs []record, key string) ([]RunRef, error) {
	var ref *RunRef
	var index []byte
	if len(chain)+1 > p.cfg.MaxRuns {
		var err error
		if ref, index, err = p.mergeChain(ctx, chain, recs, key); err != nil {
			return nil, err
		}
		if ref == nil {
			return nil, nil
		}
		chain = nil
	} else {
		data, r := encodeRun(key, recs, p.cfg.BlockSize)
		if err := p.putUnique(ctx, key, data); err != nil {
			return nil, fmt.Errorf("write run: %w", err)
		}
		ref, index = &r, data[r.IndexOff:r.IndexOff+r.IndexLen]
	}
	// Every later read of this partition consults the new run's index
	// (range and Bloom filter): cache it now rather than read it back. A
	// copy, so the cache does not pin the whole encoded run.
	if x, err := parseIndex(bytes.Clone(index), runFormat); err == nil {
		p.meta.put(indexCacheKey(key), x, x.size())
	}
	return append([]RunRef{*ref}, chain...), nil
}

// putUnique creates key. A key is unique to one writer's attempt, so if it
// already holds exactly data, an earlier try whose response was lost
// succeeded.
func (p *Pool) putUnique(ctx context.Context, key string, data []byte) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	defer p.release()
	_, err := p.store.PutIfAbsent(ctx, key, data)
	if errors.Is(err, ErrPrecondition) {
		if got, _, gerr := p.store.Get(ctx, key); gerr == nil && bytes.Equal(got, data) {
			return nil
		}
	}
	return err
}

// advance moves CURRENT from cur (ETag etag) to m and returns its new
// ETag, or reports ErrFenced.
func (p *Pool) advance(ctx context.Context, cur current, etag string, exists bool, m *manifest) (string, error) {
	next, err := encodeCurrent(m)
	if err != nil {
		return "", fmt.Errorf("objpool %s: encode %s: %w", p, currentKey, err)
	}
	var newEtag string
	if exists {
		newEtag, err = p.store.PutIfMatch(ctx, currentKey, next, etag)
	} else {
		newEtag, err = p.store.PutIfAbsent(ctx, currentKey, next)
	}
	if err == nil {
		return newEtag, nil
	}
	if errors.Is(err, ErrPrecondition) || errors.Is(err, ErrNotFound) {
		// A lost response may hide our own success: CURRENT names our
		// unique manifest key only if we wrote it.
		if got, tag, gerr := p.store.Get(ctx, currentKey); gerr == nil && bytes.Equal(got, next) {
			return tag, nil
		}
		return "", fmt.Errorf("objpool %s: commit %d: CURRENT moved past %d: %w", p, m.Checkpoint, cur.Checkpoint, state.ErrFenced)
	}
	return "", fmt.Errorf("objpool %s: commit %d: advance %s: %w", p, m.Checkpoint, currentKey, err)
}
