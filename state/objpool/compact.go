package objpool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Compaction merges a partition's chain of runs, and the records a commit
// adds, into one base run. It streams: each source is read one block at a
// time (runIter) and the output is encoded as records come (runWriter), so
// what compaction holds besides the output object is one block per source,
// not the runs; docs/object-layout.md "Compaction".

// compactHook, when set (tests), is called after each source block is
// loaded, to sample the heap mid-merge.
var compactHook func()

// compactStarted, when set (tests), is called as a compaction starts; it
// returns what to call as it ends.
var compactStarted func() func()

// runIter yields a sorted source's records in key order: a run's, one
// block at a time, each decoded record by record as the merge reaches it
// (block.at), or (run nil) an in-memory slice's.
type runIter struct {
	p    *Pool
	run  *RunRef
	x    *runIndex
	next int      // the next block of run to load
	blks []*block // loaded blocks not yet exhausted; blks[0] is being read
	pos  int      // the next record of blks[0]
	recs []record // sliceIter: the records not yet yielded
	cur  record   // the current record (peek), valid while has
	has  bool
}

// sliceIter yields recs.
func sliceIter(recs []record) *runIter {
	it := &runIter{recs: recs}
	_ = it.step(context.Background()) // a slice's step does not fail
	return it
}

// openRun returns an iterator over run's records, reading its index now
// (through the index cache) and its blocks as they are reached.
func (p *Pool) openRun(ctx context.Context, run *RunRef) (*runIter, error) {
	x, err := p.index(ctx, run)
	if err != nil {
		return nil, err
	}
	it := &runIter{p: p, run: run, x: x}
	return it, it.step(ctx)
}

// fill loads blocks until one holds a record or the run ends. It reads
// the run's next consecutive blocks, up to CompactReadahead bytes (at
// least one block), with one ranged GET, verifying each block's checksum
// against the index; the blocks are not cached, so a compaction sweep does
// not evict the blocks reads need. A block read already cached is taken
// from the cache.
func (it *runIter) fill(ctx context.Context) error {
	for len(it.blks) == 0 && it.run != nil && it.next < len(it.x.blocks) {
		first := it.next
		if v, ok := it.p.cache.get(blockCacheKey(it.run.Key, first)); ok {
			it.next++
			it.load(v.(*block))
			continue
		}
		bs := it.x.blocks
		end := first + 1
		for end < len(bs) && bs[end].off+bs[end].n-bs[first].off <= it.p.cfg.CompactReadahead {
			end++
		}
		span, err := it.p.readSpan(ctx, it.run, bs[first].off, bs[end-1].off+bs[end-1].n-bs[first].off)
		if err != nil {
			return err
		}
		it.next = end
		for _, br := range bs[first:end] {
			b := span[br.off-bs[first].off:][:br.n]
			blk, err := parseBlockAt(b, it.run.format(), br)
			if err != nil {
				return asDamage(it.run.Key, fmt.Errorf("run %s: %w", it.run.Key, err))
			}
			it.load(blk)
		}
	}
	return nil
}

// load queues blk's records behind the loaded ones.
func (it *runIter) load(blk *block) {
	if blk.count() > 0 {
		it.blks = append(it.blks, blk)
	}
	if compactHook != nil {
		compactHook()
	}
}

// step makes the next record current (has false at the end), loading
// blocks as the run's are used up.
func (it *runIter) step(ctx context.Context) error {
	it.cur, it.has = record{}, false
	if it.run == nil {
		if len(it.recs) > 0 {
			it.cur, it.recs, it.has = it.recs[0], it.recs[1:], true
		}
		return nil
	}
	for len(it.blks) > 0 && it.pos >= it.blks[0].count() {
		it.blks[0] = nil // release the block
		it.blks, it.pos = it.blks[1:], 0
	}
	if len(it.blks) == 0 {
		it.blks = nil
		if err := it.fill(ctx); err != nil {
			return err
		}
		if len(it.blks) == 0 {
			return nil
		}
	}
	r, err := it.blks[0].at(it.pos)
	if err != nil {
		return asDamage(it.run.Key, fmt.Errorf("run %s: %w", it.run.Key, err))
	}
	it.pos++
	it.cur, it.has = r, true
	return nil
}

// readSpan reads n bytes of run at off holding a request slot.
func (p *Pool) readSpan(ctx context.Context, run *RunRef, off, n int64) ([]byte, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	return p.readRun(ctx, run, off, n)
}

// peek returns the next record, or false at the end.
func (it *runIter) peek() (record, bool) { return it.cur, it.has }

// advance drops the next record.
func (it *runIter) advance(ctx context.Context) error { return it.step(ctx) }

// mergeChain merges recs (sorted, de-duplicated) over a partition's chain
// into run key, dropping tombstones: the result is a complete base run. It
// returns the run's entry and the bytes of its index, having written it,
// or nil when no live record remains.
func (p *Pool) mergeChain(ctx context.Context, chain []RunRef, recs []record, key string) (*RunRef, []byte, error) {
	select { // at most CompactSlots partitions compact at once
	case p.compactSem <- struct{}{}:
		defer func() { <-p.compactSem }()
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if compactStarted != nil {
		defer compactStarted()()
	}
	sources := make([]*runIter, 0, len(chain)+1)
	sources = append(sources, sliceIter(recs)) // newest first: recs, then the chain
	for i := range chain {
		it, err := p.openRun(ctx, &chain[i])
		if err != nil {
			return nil, nil, fmt.Errorf("compact: %w", err)
		}
		sources = append(sources, it)
	}
	if _, ok := p.cfg.Store.(FilePutter); ok {
		return p.mergeToSpool(ctx, sources, key)
	}
	w := newRunWriter(key, p.cfg.BlockSize, 0)
	if err := mergeSources(ctx, sources, w.add); err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err)
	}
	if w.count() == 0 {
		return nil, nil, nil
	}
	data, ref, _ := w.finish() // in memory: no write to fail
	if err := p.putUnique(ctx, key, data); err != nil {
		return nil, nil, fmt.Errorf("write run: %w", err)
	}
	return &ref, data[ref.IndexOff : ref.IndexOff+ref.IndexLen], nil
}

// mergeToSpool merges sources into a spool file in Config.SpoolDir and
// publishes it as run key: what the merge holds is one block of output,
// write buffers and, at its end, the Bloom filter, however large the run.
func (p *Pool) mergeToSpool(ctx context.Context, sources []*runIter, key string) (*RunRef, []byte, error) {
	f, err := createSpool(p.cfg.SpoolDir)
	if err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err)
	}
	defer removeSpool(f)
	hf, err := createSpool(p.cfg.SpoolDir)
	if err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err)
	}
	defer removeSpool(hf)
	bw := bufio.NewWriterSize(f, spoolBuffer)
	w := newStreamRunWriter(key, p.cfg.BlockSize, bw, &spooledHashes{f: hf, w: bufio.NewWriterSize(hf, spoolBuffer)})
	if err := mergeSources(ctx, sources, w.add); err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err)
	}
	if w.count() == 0 {
		return nil, nil, nil
	}
	_, ref, err := w.finish()
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("compact: write spool %s: %w", f.Name(), err)
	}
	index := make([]byte, ref.IndexLen)
	if _, err := f.ReadAt(index, ref.IndexOff); err != nil {
		return nil, nil, fmt.Errorf("compact: read spool %s: %w", f.Name(), err)
	}
	if err := p.putFileUnique(ctx, key, f, &ref); err != nil {
		return nil, nil, fmt.Errorf("write run: %w", err)
	}
	return &ref, index, nil
}

// spoolBuffer is the buffer between a streaming merge and each spool.
const spoolBuffer = 128 << 10

// createSpool creates a hidden spool file in dir.
func createSpool(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".clink-spool-*")
	if err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	return f, nil
}

// removeSpool closes and deletes a spool.
func removeSpool(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// spooledHashes keeps a streaming run's Bloom filter hashes in a spool
// file: 16 bytes a record, which would otherwise grow with the run.
type spooledHashes struct {
	f   *os.File
	w   *bufio.Writer
	err error
}

func (s *spooledHashes) add(h1, h2 uint64) {
	if s.err != nil {
		return
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], h1)
	binary.LittleEndian.PutUint64(b[8:], h2)
	_, s.err = s.w.Write(b[:])
}

// filter reads the n hashes back into a filter sized for them.
func (s *spooledHashes) filter(n int) (*bloom, error) {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err != nil {
		return nil, fmt.Errorf("spool hashes %s: %w", s.f.Name(), s.err)
	}
	b := emptyBloom(n)
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, int64(n)*16), spoolBuffer)
	var rec [16]byte
	for range n {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			return nil, fmt.Errorf("read hashes %s: %w", s.f.Name(), err)
		}
		b.add(binary.LittleEndian.Uint64(rec[:]), binary.LittleEndian.Uint64(rec[8:]))
	}
	return b, nil
}

// putFileUnique creates key from the spooled run ref, as putUnique does:
// if key exists, an earlier try whose response was lost succeeded when the
// object's size and footer (which checksums the index, and so every
// block) are this run's.
func (p *Pool) putFileUnique(ctx context.Context, key string, f *os.File, ref *RunRef) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	defer p.release()
	_, err := p.store.PutFileIfAbsent(ctx, key, f, ref.Size)
	if !errors.Is(err, ErrPrecondition) {
		return err
	}
	want := make([]byte, footerSizeV3)
	if _, rerr := f.ReadAt(want, ref.Size-footerSizeV3); rerr != nil {
		return err
	}
	got, size, gerr := p.store.GetRange(ctx, key, ref.Size-footerSizeV3, footerSizeV3)
	if gerr == nil && size == ref.Size && bytes.Equal(got, want) {
		return nil
	}
	return err
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
