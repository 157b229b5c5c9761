// Package mempool is the in-memory RemotePool behind disagg-local:// and
// memory://: not durable (process RAM), but with the pool's full contract
// (delta commits fenced on their parent, restore to any committed
// checkpoint, recorded hot keys), fault injection for scenarios, and an
// optional simulated network latency that does not hold a thread.
package mempool

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"clink/state"
)

// Errors injected faults report.
var (
	// ErrInjected is the default error of an injected read or commit failure.
	ErrInjected = errors.New("mempool: injected failure")
	// ErrThrottled imitates S3's 503 SlowDown.
	ErrThrottled = errors.New("mempool: 503 SlowDown (injected throttle)")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("mempool: pool closed")
)

// Faults is the fault-injection surface scenario files drive; Pool and
// LatencyPool implement it.
type Faults interface {
	// FailReads makes the next n reads fail with err (nil: ErrInjected).
	FailReads(n int, err error)
	// FailCommits makes the next n commits fail with err (nil: ErrInjected).
	FailCommits(n int, err error)
	// Throttle makes the next n reads fail with ErrThrottled.
	Throttle(n int)
}

// Stats counts a pool's traffic.
type Stats struct {
	Reads, KeysRead         int64 // GetMany calls and keys they asked for
	Commits, CommittedKeys  int64
	CommittedBytes          int64
	FailedReads, Fenced     int64
	FailedCommits, Restores int64
	Keys                    int // live keys in the served checkpoint
	Head                    state.CheckpointID
}

type value struct {
	kg  int
	val []byte
}

// DefaultRetain is how many of the newest checkpoints of the head's chain
// a pool the state URI factory builds keeps restorable (NewRetaining).
const DefaultRetain = 32

// Pool is an in-memory RemotePool. It keeps the committed deltas of the
// newest retained checkpoints (all of them by default), so it can restore
// any of those by replaying its chain of parents from a materialised base,
// and serves reads from a materialised map of the current head. Safe for
// concurrent use.
type Pool struct {
	mu     sync.RWMutex
	ckpts  map[state.CheckpointID]*state.Delta
	head   state.CheckpointID
	served map[string]value
	closed bool
	// retain bounds the deltas kept on the head's chain (0: all). Older
	// ones are folded into base, the state as of checkpoint baseID, whose
	// recorded hot keys are baseHot.
	retain  int
	base    map[string]value
	baseID  state.CheckpointID
	baseHot []state.Key

	fmu         sync.Mutex
	failReads   int
	readErr     error
	failCommits int
	commitErr   error
	throttle    int
	stats       Stats
}

var _ interface {
	state.RemotePool
	state.KeyGroupScanner
	Faults
} = (*Pool)(nil)

// New returns an empty pool (head 0) that keeps every checkpoint
// restorable.
func New() *Pool {
	return &Pool{ckpts: map[state.CheckpointID]*state.Delta{}, served: map[string]value{}, base: map[string]value{}}
}

// NewRetaining returns an empty pool that keeps the newest retain
// checkpoints of its head's chain restorable (retain <= 0: all). A
// long-running job's pool then holds its state twice (the head and the
// base) plus retain deltas, instead of every delta it ever committed.
func NewRetaining(retain int) *Pool {
	p := New()
	p.retain = max(retain, 0)
	return p
}

func compose(k state.Key) string {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(k.Key)), uint32(k.Op))
	return string(append(b, k.Key...))
}

// GetMany reads keys as of the head checkpoint.
func (p *Pool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	if err := p.admitRead(ctx, len(keys)); err != nil {
		return nil, err
	}
	return p.serve(keys)
}

// admitRead is the request half of a read of n keys: it counts the read
// and decides the injected faults and cancellation. LatencyPool calls it
// when a read is issued, so a `fault` takes the reads issued after it.
func (p *Pool) admitRead(ctx context.Context, n int) error {
	if err := p.readFault(n); err != nil {
		return err
	}
	return ctx.Err()
}

// serve is the response half of a read: the values of keys as of the head
// checkpoint now. LatencyPool calls it when the round-trip completes.
func (p *Pool) serve(keys []state.Key) ([]state.Lookup, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return nil, ErrClosed
	}
	out := make([]state.Lookup, len(keys))
	var buf []byte
	for i, k := range keys {
		buf = binary.BigEndian.AppendUint32(buf[:0], uint32(k.Op))
		buf = append(buf, k.Key...)
		if v, ok := p.served[string(buf)]; ok {
			out[i] = state.Lookup{Value: v.val, Found: true}
		}
	}
	return out, nil
}

func (p *Pool) readFault(n int) error {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	p.stats.Reads++
	p.stats.KeysRead += int64(n)
	switch {
	case p.throttle > 0:
		p.throttle--
		p.stats.FailedReads++
		return ErrThrottled
	case p.failReads > 0:
		p.failReads--
		p.stats.FailedReads++
		return p.readErr
	}
	return nil
}

// Commit applies d on top of the head. It fails with state.ErrFenced when
// d.Parent is not the head, and never applies part of a delta.
func (p *Pool) Commit(ctx context.Context, d *state.Delta) error {
	if err := p.commitFault(); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", d.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", d.ID, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return ErrClosed
	case d.Parent != p.head:
		p.countFenced()
		return fmt.Errorf("commit checkpoint %d on parent %d (head is %d): %w", d.ID, d.Parent, p.head, state.ErrFenced)
	case d.ID <= d.Parent:
		return fmt.Errorf("commit checkpoint %d: id must be greater than its parent %d", d.ID, d.Parent)
	case p.onChain(d.ID):
		return fmt.Errorf("commit checkpoint %d: already committed", d.ID)
	}
	p.ckpts[d.ID] = d
	apply(p.served, d)
	p.head = d.ID
	p.fold()
	p.fmu.Lock()
	p.stats.Commits++
	p.stats.CommittedKeys += int64(len(d.Entries))
	p.stats.CommittedBytes += d.Bytes()
	p.fmu.Unlock()
	return nil
}

func (p *Pool) countFenced() {
	p.fmu.Lock()
	p.stats.Fenced++
	p.fmu.Unlock()
}

func (p *Pool) commitFault() error {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	if p.failCommits > 0 {
		p.failCommits--
		p.stats.FailedCommits++
		return p.commitErr
	}
	return nil
}

// onChain reports whether id is the head or one of its ancestors. A
// checkpoint on an abandoned branch (newer than a restored head) may be
// committed again under the same id.
func (p *Pool) onChain(id state.CheckpointID) bool {
	for c := p.head; c != 0 && c != p.baseID; c = p.ckpts[c].Parent {
		if c == id {
			return true
		}
	}
	return id != 0 && id == p.baseID
}

func apply(m map[string]value, d *state.Delta) {
	for _, e := range d.Entries {
		k := compose(e.Key)
		if e.Deleted {
			delete(m, k)
		} else {
			m[k] = value{kg: e.KeyGroup, val: e.Value}
		}
	}
}

// fold keeps at most retain deltas on the head's chain: the oldest ones
// are applied to the base and dropped, with every delta of an abandoned
// branch that forked before the new base (they can no longer be restored).
func (p *Pool) fold() {
	if p.retain <= 0 {
		return
	}
	var chain []state.CheckpointID // head first, down to the base's child
	for c := p.head; c != p.baseID && c != 0; c = p.ckpts[c].Parent {
		chain = append(chain, c)
	}
	if len(chain) <= p.retain {
		return
	}
	for i := len(chain) - 1; i >= p.retain; i-- {
		d := p.ckpts[chain[i]]
		apply(p.base, d)
		p.baseID, p.baseHot = d.ID, d.HotKeys
		delete(p.ckpts, d.ID)
	}
	for id := range p.ckpts {
		if id <= p.baseID {
			delete(p.ckpts, id)
		}
	}
}

// Restore makes id the head (0: empty) by replaying its chain of deltas.
// Later commits must name id as their parent. Restoring the head is free.
// On a retaining pool, restoring 0 after older checkpoints were folded
// drops every checkpoint.
func (p *Pool) Restore(ctx context.Context, id state.CheckpointID) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if id == p.head {
		return nil
	}
	if id == 0 && p.baseID != 0 {
		// Back to empty: what was folded into the base is gone for good.
		p.base, p.baseID, p.baseHot = map[string]value{}, 0, nil
		clear(p.ckpts)
	}
	var chain []*state.Delta
	for c := id; c != p.baseID; {
		d, ok := p.ckpts[c]
		if !ok {
			return fmt.Errorf("restore checkpoint %d: missing checkpoint %d: %w", id, c, p.noCheckpoint())
		}
		chain = append(chain, d)
		c = d.Parent
	}
	p.served = make(map[string]value, len(p.base))
	for k, v := range p.base {
		p.served[k] = v
	}
	for i := len(chain) - 1; i >= 0; i-- {
		apply(p.served, chain[i])
	}
	p.head = id
	p.fmu.Lock()
	p.stats.Restores++
	p.fmu.Unlock()
	return nil
}

// noCheckpoint is ErrNoCheckpoint, naming the oldest restorable
// checkpoint once older ones were folded away.
func (p *Pool) noCheckpoint() error {
	if p.baseID == 0 {
		return state.ErrNoCheckpoint
	}
	return fmt.Errorf("%w (this pool keeps the newest %d; the oldest restorable is %d)", state.ErrNoCheckpoint, p.retain, p.baseID)
}

// Latest returns the head checkpoint.
func (p *Pool) Latest(context.Context) (state.CheckpointID, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.head, nil
}

// HotKeys returns the working set recorded with checkpoint id.
func (p *Pool) HotKeys(_ context.Context, id state.CheckpointID) ([]state.Key, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if id != 0 && id == p.baseID {
		return p.baseHot, nil
	}
	d, ok := p.ckpts[id]
	if !ok {
		return nil, fmt.Errorf("hot keys of checkpoint %d: %w", id, p.noCheckpoint())
	}
	return d.HotKeys, nil
}

// ScanKeyGroups calls fn for every live entry of the head whose key group
// is in [lo, hi), in key-group then key order.
func (p *Pool) ScanKeyGroups(ctx context.Context, lo, hi int, fn func(state.Entry) error) error {
	p.mu.RLock()
	var out []state.Entry
	for k, v := range p.served {
		if v.kg >= lo && v.kg < hi {
			out = append(out, state.Entry{Key: state.Key{Op: state.OpID(binary.BigEndian.Uint32([]byte(k[:4]))), Key: []byte(k[4:])}, KeyGroup: v.kg, Value: v.val})
		}
	}
	p.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].KeyGroup != out[j].KeyGroup {
			return out[i].KeyGroup < out[j].KeyGroup
		}
		if out[i].Key.Op != out[j].Key.Op {
			return out[i].Key.Op < out[j].Key.Op
		}
		return bytes.Compare(out[i].Key.Key, out[j].Key.Key) < 0
	})
	for _, e := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Close refuses later calls.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return nil
}

// FailReads makes the next n reads fail with err (nil: ErrInjected).
func (p *Pool) FailReads(n int, err error) {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	p.failReads, p.readErr = n, orInjected(err)
}

// FailCommits makes the next n commits fail with err (nil: ErrInjected).
func (p *Pool) FailCommits(n int, err error) {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	p.failCommits, p.commitErr = n, orInjected(err)
}

// Throttle makes the next n reads fail with ErrThrottled.
func (p *Pool) Throttle(n int) {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	p.throttle = n
}

func orInjected(err error) error {
	if err == nil {
		return ErrInjected
	}
	return err
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.RLock()
	keys, head := len(p.served), p.head
	p.mu.RUnlock()
	p.fmu.Lock()
	defer p.fmu.Unlock()
	s := p.stats
	s.Keys, s.Head = keys, head
	return s
}
