package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"clink/state"
)

// Checkpointing timers: the per-key-group timer index.
//
// A restore is lazy on a disaggregated backend (nothing is loaded), so the
// timer heap cannot be rebuilt by scanning the restored state. Instead every
// key group holds one index entry (namespace op|TimerOpBit) under a reserved
// key chosen so that it hashes into that very key group: the entry lists the
// group's (key, timestamps) timers and the operator's event-time scalar. A
// restore at any parallelism reads one entry per key group the subtask now
// owns, by key, and rebuilds its heap from them: no scan, and a key group
// moves between subtasks with its timers. The entries are written only at a
// checkpoint (Flush, from the runner's barrier through Snapshotter), and
// only for the key groups whose timers changed since the previous one, so
// the per-record path writes nothing.

// Snapshotter is an optional Operator interface: the runner calls
// SnapshotState at a checkpoint barrier, after the drain and before the
// capture, so the operator can write what it keeps outside keyed state
// (timer indexes, event-time scalars) into its backend.
type Snapshotter interface {
	SnapshotState(id state.CheckpointID) error
}

// timerIndexVersion tags the index entry's layout.
const timerIndexVersion = 1

type timerIndex struct {
	seed     uint64
	groups   int
	lo, hi   int
	dirty    []bool   // per key group
	keys     [][]byte // per key group: the reserved index key, once computed
	anyDirty bool
	scalar   int64
	saved    int64 // scalar at the last Flush
	buf      []byte
}

func (x *timerIndex) init(sc TimerScope) {
	x.seed, x.groups = sc.HashSeed, sc.MaxKeyGroups
	if x.groups <= 0 {
		x.groups = state.DefaultMaxKeyGroups
	}
	p := max(sc.Parallelism, 1)
	x.lo, x.hi = state.KeyGroupRange(sc.Subtask, x.groups, p)
	x.dirty = make([]bool, x.groups)
	x.keys = make([][]byte, x.groups)
	x.scalar, x.saved = math.MinInt64, math.MinInt64
}

func (x *timerIndex) group(key []byte) int {
	return state.KeyGroup(state.Hash(x.seed, key), x.groups)
}

func (x *timerIndex) touch(key []byte) {
	x.dirty[x.group(key)] = true
	x.anyDirty = true
}

// indexKey returns the reserved key of group g's index entry: a prefix no
// SQL key starts with (0xff 'T') and a counter, the first whose hash lands
// in g.
func (x *timerIndex) indexKey(g int) []byte {
	if x.keys[g] != nil {
		return x.keys[g]
	}
	k := []byte{0xff, 'T'}
	for n := uint64(0); ; n++ {
		c := binary.AppendUvarint(k, n)
		if x.group(c) == g {
			x.keys[g] = slices.Clip(c)
			return x.keys[g]
		}
	}
}

// Scalar is the operator-level event-time scalar (math.MinInt64 until set
// or restored).
func (t *Timers) Scalar() int64 { return t.index.scalar }

// SetScalar sets the operator-level event-time scalar saved with the timers
// at the next Flush (a late-drop bound: the largest watermark fired).
func (t *Timers) SetScalar(v int64) { t.index.scalar = v }

// Flush writes the index entry of every owned key group whose timers
// changed since the previous Flush (all of them when the scalar changed).
// Call it at a checkpoint barrier, before the backend's capture.
func (t *Timers) Flush() error {
	x := &t.index
	if x.scalar != x.saved {
		for g := x.lo; g < x.hi; g++ {
			x.dirty[g] = true
		}
		x.anyDirty, x.saved = true, x.scalar
	}
	if !x.anyDirty {
		return nil
	}
	byGroup := map[int][]string{}
	for k := range t.byKey {
		if g := x.group([]byte(k)); x.dirty[g] {
			byGroup[g] = append(byGroup[g], k)
		}
	}
	for g := range x.dirty {
		if !x.dirty[g] {
			continue
		}
		x.dirty[g] = false
		if err := t.writeGroup(g, byGroup[g]); err != nil {
			return err
		}
	}
	x.anyDirty = false
	return nil
}

func (t *Timers) writeGroup(g int, keys []string) error {
	x := &t.index
	ik := x.indexKey(g)
	if len(keys) == 0 && x.scalar == math.MinInt64 {
		if err := t.be.Delete(t.op, ik); err != nil {
			return fmt.Errorf("timers: write index of key group %d: %w", g, err)
		}
		return nil
	}
	slices.Sort(keys)
	b := binary.AppendUvarint(x.buf[:0], timerIndexVersion)
	b = binary.AppendVarint(b, x.scalar)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		ks := t.byKey[k]
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(ks)))
		for _, ts := range ks {
			b = binary.AppendVarint(b, ts)
		}
	}
	x.buf = b
	if err := t.be.Put(t.op, ik, b); err != nil {
		return fmt.Errorf("timers: write index of key group %d: %w", g, err)
	}
	return nil
}

// Restore rebuilds the heap and the scalar from the index entries of the
// key groups this subtask owns, read by key from the restored checkpoint
// (the scalar is the largest saved by any of them). Call it in Open after
// the backend restored; with nothing restored it reads nothing.
func (t *Timers) Restore() error {
	if pb, ok := t.be.(state.PersistBackend); !ok || pb.LastCheckpoint() == 0 {
		return nil
	}
	x := &t.index
	for g := x.lo; g < x.hi; g++ {
		val, found, err := t.be.Get(t.op, x.indexKey(g))
		if err != nil {
			return fmt.Errorf("timers: read index of key group %d: %w", g, err)
		}
		if !found {
			continue
		}
		if err := t.load(g, val); err != nil {
			return err
		}
	}
	x.saved = x.scalar
	for g := range x.dirty {
		x.dirty[g] = false
	}
	x.anyDirty = false
	return nil
}

// load re-registers the timers of one index entry and folds its scalar.
func (t *Timers) load(g int, val []byte) error {
	bad := fmt.Errorf("timers: corrupt index entry of key group %d", g)
	r := reader{b: val, ok: true}
	if r.uvarint() != timerIndexVersion {
		return bad
	}
	sc := r.varint()
	n := r.uvarint()
	for i := uint64(0); i < n && r.ok; i++ {
		key := r.bytes(r.uvarint())
		m := r.uvarint()
		for j := uint64(0); j < m && r.ok; j++ {
			if err := t.Register(key, r.varint()); err != nil {
				return err
			}
		}
	}
	if !r.ok {
		return bad
	}
	t.index.scalar = max(t.index.scalar, sc)
	return nil
}

// reader decodes varint-framed bytes; ok turns false at the first error.
type reader struct {
	b  []byte
	ok bool
}

func (r *reader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if !r.ok || n > uint64(len(r.b)) {
		r.ok = false
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
