package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"clink/sql/types"
	"clink/state"
)

// A group's state is its entry under the group key (row count and each
// aggregate's binary form) plus, for aggregates whose state would grow
// with the group, entries of their own under keys salted into the group
// key's key group (saltInGroup), as Flink's and RisingWave's distinct
// dedup and MIN/MAX state tables do:
//
//   - DISTINCT: per (aggregate, value) the value's count; the entry holds a
//     plain accumulator fed only when a count goes 0->1 (Add) or 1->0
//     (Retract). A row reads and writes one count per DISTINCT aggregate.
//   - MIN/MAX over an input that retracts: a B+ tree of the values
//     (agg_tree.go) whose root is in the entry.
//
// A record whose row needs such entries reads them after its group entry,
// all of a round in one keyed.fetch (one batched GetManyAsync, suspending
// the record only when one misses); a tree deeper than its root takes one
// more round per level.

// aggMode is how an aggregate keeps its state.
type aggMode uint8

const (
	modeInline   aggMode = iota // its accumulator in the group entry
	modeDistinct                // plain accumulator in the entry, value counts in own entries
	modeTree                    // MIN/MAX value tree, root in the entry
	modeList                    // list aggregate trees, roots in the entry (agg_list.go)
)

// aggSubKey appends the unsalted key of an aggregate's own entries: the
// group key, a marker no key encoding continues with, the tag ('D' a
// distinct count, 'T' a tree page) and the aggregate's index.
func aggSubKey(dst, key []byte, tag byte, agg int) []byte {
	dst = append(append(dst, key...), 0xff, tag)
	return binary.AppendUvarint(dst, uint64(agg))
}

// maxSaltCache bounds the distinct keys' salt cache (cleared when full).
const maxSaltCache = 1 << 16

// distinctKey returns the key of value v's count of aggregate agg. Its
// salt is the first one that lands it in the group key's key group, a
// pure function of the key, cached because finding it takes ~128 hashes.
func (a *Aggregate) distinctKey(key []byte, agg int, v types.Value) []byte {
	base := types.AppendKey(aggSubKey(nil, key, 'D', agg), v)
	salt, ok := a.salts[string(base)]
	if !ok {
		salt = saltInGroup(a.seed, key, 0, func(dst []byte, salt uint64) []byte {
			return binary.AppendUvarint(append(dst, base...), salt)
		})
		if len(a.salts) >= maxSaltCache {
			clear(a.salts)
		}
		a.salts[string(base)] = salt
	}
	return binary.AppendUvarint(base, salt)
}

// treeKey returns the key of a MIN/MAX tree page.
func treeKey(key []byte, agg int, salt uint64) []byte {
	return binary.AppendUvarint(aggSubKey(nil, key, 'T', agg), salt)
}

// aggRead is what one key of a fetch round is for.
type aggRead struct {
	agg  int
	tree bool
	list byte   // a list aggregate's page: its tag (agg_list.go)
	salt uint64 // a list scan's page
}

// aggRec is one record's update of its group while it reads the group's
// other entries: it owns copies of everything that outlives the apply.
type aggRec struct {
	key     []byte
	row     types.Row
	retract bool
	found   bool
	n       int64
	parts   [][]byte // each aggregate's part of the group entry (nil: none yet)
	vals    []types.Value
	inc     []bool
	dkeys   [][]byte // distinct aggregates: the value's count key
	dcount  []int64
	trees   []*valueTree
	lists   []*listState
}

// prepare evaluates the row's aggregate inputs, decodes the trees' roots
// and returns the first round of reads.
func (a *Aggregate) prepare(r *aggRec) ([][]byte, []aggRead, error) {
	na := len(a.cfg.Aggs)
	r.vals, r.inc, r.trees, r.lists = resize(r.vals, na), resize(r.inc, na), resize(r.trees, na), resize(r.lists, na)
	var keys [][]byte
	var reads []aggRead
	for i, s := range a.cfg.Aggs {
		if r.row != nil {
			v, include, err := s.Input(r.row)
			if err != nil {
				return nil, nil, err
			}
			r.vals[i], r.inc[i] = v, include
		}
		active := r.inc[i] && !r.vals[i].IsNull()
		switch a.modes[i] {
		case modeDistinct:
			if !active {
				continue
			}
			if r.dkeys == nil {
				r.dkeys, r.dcount = make([][]byte, na), make([]int64, na)
			}
			r.dkeys[i] = a.distinctKey(r.key, i, r.vals[i])
			keys, reads = append(keys, r.dkeys[i]), append(reads, aggRead{agg: i})
		case modeList:
			if err := a.prepareList(r, i, active); err != nil {
				return nil, nil, err
			}
			var err error
			if keys, reads, err = a.listWants(r, i, keys, reads); err != nil {
				return nil, nil, err
			}
		case modeTree:
			t, err := decodeTree(r.part(i), treeMax(s), &a.nodes)
			if err != nil {
				return nil, nil, err
			}
			t.v, t.retract, t.active = r.vals[i], r.retract, active
			r.trees[i] = t
			salt, ok, err := t.want()
			if err != nil {
				return nil, nil, err
			}
			if ok {
				keys, reads = append(keys, treeKey(r.key, i, salt)), append(reads, aggRead{agg: i, tree: true})
			}
		}
	}
	return keys, reads, nil
}

func (r *aggRec) part(i int) []byte {
	if r.parts == nil {
		return nil
	}
	return r.parts[i]
}

// resize returns s with n zero elements, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// detach returns a copy of r that owns everything it holds: a record
// that suspends outlives the apply call's key and value and the
// operator's reused buffers.
func (r *aggRec) detach() *aggRec {
	d := *r
	d.key = bytes.Clone(r.key)
	if r.parts != nil {
		d.parts = make([][]byte, len(r.parts))
		for i, p := range r.parts {
			d.parts[i] = bytes.Clone(p)
		}
	}
	d.vals, d.inc, d.trees, d.lists = slices.Clone(r.vals), slices.Clone(r.inc), slices.Clone(r.trees), slices.Clone(r.lists)
	return &d
}

// round reads keys, hands each to its aggregate and reads the trees' next
// level until every tree reached its leaf, then finishes the record.
func (a *Aggregate) round(r *aggRec, keys [][]byte, reads []aggRead) error {
	return a.fetch(keys, func(lks []state.Lookup) error {
		for j, rd := range reads {
			if rd.list != 0 {
				if err := r.lists[rd.agg].visit(rd, lks[j].Value, lks[j].Found); err != nil {
					return fmt.Errorf("%s: %w", a.name, err)
				}
				continue
			}
			if rd.tree {
				if err := r.trees[rd.agg].visit(lks[j].Value, lks[j].Found); err != nil {
					return fmt.Errorf("%s: %w", a.name, err)
				}
				continue
			}
			if lks[j].Found {
				c, k := binary.Varint(lks[j].Value)
				if k <= 0 || k != len(lks[j].Value) {
					return fmt.Errorf("%s: %w: distinct count", a.name, errAggState)
				}
				r.dcount[rd.agg] = c
			}
		}
		keys, reads = nil, nil
		for i, t := range r.trees {
			if t == nil {
				continue
			}
			salt, ok, err := t.want()
			if err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
			if ok {
				keys, reads = append(keys, treeKey(r.key, i, salt)), append(reads, aggRead{agg: i, tree: true})
			}
		}
		for i, l := range r.lists {
			if l == nil {
				continue
			}
			var err error
			if keys, reads, err = a.listWants(r, i, keys, reads); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
		}
		if len(keys) > 0 {
			return a.round(r, keys, reads)
		}
		return a.finish(r)
	})
}

// allocPage names a new page of tree t of the record's group.
func (a *Aggregate) allocPage(key []byte, agg int) func(t *valueTree) uint64 {
	return a.allocPageTag(key, 'T', agg)
}

// allocPageTag is allocPage for the tree with tag (agg_list.go's index
// has its own).
func (a *Aggregate) allocPageTag(key []byte, tag byte, agg int) func(t *valueTree) uint64 {
	return func(t *valueTree) uint64 {
		salt := saltInGroup(a.seed, key, t.next, func(dst []byte, salt uint64) []byte {
			return binary.AppendUvarint(aggSubKey(dst, key, tag, agg), salt)
		})
		t.next = salt + 1
		return salt
	}
}

// applySplit applies the change to the distinct counts and the trees,
// writing their entries, and feeds the distinct aggregates' accumulators
// on their values' first and last copies.
func (a *Aggregate) applySplit(r *aggRec, i int) error {
	v := r.vals[i]
	switch a.modes[i] {
	case modeDistinct:
		c := r.dcount[i]
		var err error
		switch {
		case r.retract && c <= 0:
			return nil // a value never added
		case r.retract:
			if c--; c == 0 {
				err = a.gaccs[i].Retract(v)
			}
		default:
			if c++; c == 1 {
				err = a.gaccs[i].Add(v)
			}
		}
		if err != nil {
			return err
		}
		var val []byte
		if c > 0 {
			val = binary.AppendVarint(nil, c)
		}
		return a.put(r.dkeys[i], val)
	case modeList:
		return a.applyList(r, i)
	case modeTree:
		t := r.trees[i]
		t.apply(a.allocPage(r.key, i))
		for _, w := range t.writes {
			if err := a.put(treeKey(r.key, i, w.salt), w.val); err != nil {
				return err
			}
		}
	}
	return nil
}
