package ops

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"clink/sql/expr"
	"clink/sql/types"
)

// List aggregates (STRING_AGG, ARRAY_AGG, FIRST_VALUE, LAST_VALUE) keep their values
// as elements (expr/list_elem.go) whose byte order is the aggregate's
// order. Over an append-only input without ORDER BY they keep only their
// result in the group entry (expr's compact accumulators). Otherwise a
// GROUP BY keeps the elements with multiplicity in the paged value trees
// MIN/MAX use (agg_tree.go), root in the group entry:
//
//   - FIRST_VALUE / LAST_VALUE with ORDER BY over a retracting input: a
//     MIN / MAX tree of the ordered elements (modeTree); the result is
//     the root's extreme.
//   - FIRST_VALUE / LAST_VALUE by arrival over a retracting input: the
//     group entry numbers the values as they come; a tree of arrival
//     elements (number, value and row hash) whose extreme is the result,
//     and an index tree of (value and row hash, number) under a tag of its
//     own. A retraction finds its row's oldest copy in the index (the
//     first element at or after its prefix), then removes it from both
//     (modeList).
//   - STRING_AGG and ARRAY_AGG with ORDER BY, or by arrival over a retracting input: a
//     tree of the elements, read whole (every page, one batched read per
//     level) since the result is all of them; a retraction by arrival
//     removes its row's oldest copy found there (modeList).
//
// A row thus reads O(log n) pages for FIRST/LAST_VALUE and every page for
// STRING_AGG (as Flink's ListAggWithRetract and RisingWave's
// materialized-input state read the whole list), and writes only the pages
// it changed.

// listMode chooses how the GROUP BY keeps list aggregate s, and its group
// entry accumulator (nil for trees).
func listMode(s *expr.AggSpec, appendOnly bool) (aggMode, expr.Accumulator) {
	str := s.ReadsWhole()
	switch {
	case appendOnly && str && s.ByArrival() && s.Distinct:
		plain := *s
		plain.Distinct = false
		return modeDistinct, plain.NewAppendAccumulator()
	case appendOnly && (!str || s.ByArrival()):
		return modeInline, s.NewAppendAccumulator()
	case !str && !s.ByArrival():
		return modeTree, nil
	}
	return modeList, nil
}

// treeMax reports whether a modeTree aggregate's result is its tree's
// largest element.
func treeMax(s *expr.AggSpec) bool { return s.Kind == expr.AggMax || s.Kind == expr.AggLastValue }

// Tags of a list aggregate's page keys (aggSubKey): its elements share
// MIN/MAX's 'T'; the by-arrival index has its own.
const (
	tagElems = 'T'
	tagIndex = 'I'
)

// listState is one record's view of a modeList aggregate of its group.
type listState struct {
	spec    *expr.AggSpec
	seq     uint64     // by arrival: the next value's number
	elems   *valueTree // the elements
	index   *valueTree // FIRST/LAST_VALUE by arrival: (value, number)
	scan    *treeScan  // STRING_AGG, ARRAY_AGG: every page of elems
	id      string     // by arrival: the record's expr.ElemID
	waiting bool       // a retraction by arrival: its element is not known yet
	placed  bool       // scan: the change's path was walked from the pages
}

// decodeList reads a modeList aggregate's part of the group entry (nil:
// an empty list): [seq if by arrival] [length, elements root] [index root].
func (a *Aggregate) decodeList(s *expr.AggSpec, b []byte) (*listState, error) {
	l := &listState{spec: s}
	var rootA, rootB []byte
	if b != nil {
		var k int
		if s.ByArrival() {
			if l.seq, k = binary.Uvarint(b); k <= 0 {
				return nil, errAggState
			}
			b = b[k:]
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, errAggState
		}
		rootA, rootB = b[k:k+int(n)], b[k+int(n):]
		if len(rootA) == 0 || (len(rootB) == 0) == (s.ByArrival() && !s.ReadsWhole()) {
			return nil, errAggState
		}
	}
	var err error
	if l.elems, err = decodeTree(rootA, s.Kind == expr.AggLastValue, &a.nodes); err != nil {
		return nil, err
	}
	if s.ReadsWhole() {
		l.scan = newTreeScan(l.elems.path[0])
	} else if l.index, err = decodeTree(rootB, false, &a.nodes); err != nil {
		return nil, err
	}
	return l, nil
}

// appendPart renders the list's part of the group entry.
func (l *listState) appendPart(b []byte) []byte {
	if l.spec.ByArrival() {
		b = binary.AppendUvarint(b, l.seq)
	}
	at := len(b)
	b = fixLength(l.elems.appendRoot(append(b, 0)), at)
	if l.index != nil {
		b = l.index.appendRoot(b)
	}
	return b
}

// prepareList decodes the record's list and sets up its change.
func (a *Aggregate) prepareList(r *aggRec, i int, active bool) error {
	l, err := a.decodeList(a.cfg.Aggs[i], r.part(i))
	if err != nil {
		return err
	}
	r.lists[i] = l
	if !active {
		return nil
	}
	v := r.vals[i]
	if !l.spec.ByArrival() {
		l.elems.v, l.elems.retract, l.elems.active = v, r.retract, true
		return nil
	}
	l.id = expr.ElemID(v, types.HashRow(r.row, 0))
	switch {
	case !r.retract:
		l.elems.v, l.elems.active = expr.ArrivalElem(l.seq, l.id), true
		if l.index != nil {
			l.index.v, l.index.active = expr.IndexElem(l.id, l.seq), true
		}
		l.seq++
	case l.index != nil:
		l.index.v, l.index.retract, l.index.active, l.index.prefix = expr.IndexPrefix(l.id), true, true, true
		l.waiting = true
	default:
		l.waiting = true // the scan finds the oldest copy
	}
	return nil
}

// listWants appends the pages list i of the record needs next.
func (a *Aggregate) listWants(r *aggRec, i int, keys [][]byte, reads []aggRead) ([][]byte, []aggRead, error) {
	l := r.lists[i]
	if l.scan != nil {
		if len(l.scan.next) > 0 {
			for _, salt := range l.scan.next {
				keys = append(keys, listKey(r.key, tagElems, i, salt))
				reads = append(reads, aggRead{agg: i, list: tagElems, salt: salt})
			}
			l.scan.next = l.scan.next[:0]
			return keys, reads, nil
		}
		return keys, reads, l.place()
	}
	if l.waiting {
		salt, ok, err := l.index.want()
		if err != nil || ok {
			return append(keys, listKey(r.key, tagIndex, i, salt)), append(reads, aggRead{agg: i, list: tagIndex}), err
		}
		if l.waiting = false; l.index.resolvePrefix() {
			e, err := expr.IndexToArrival(l.index.v)
			if err != nil {
				return nil, nil, err
			}
			l.elems.v, l.elems.retract, l.elems.active = e, true, true
		}
	} else if l.index != nil {
		salt, ok, err := l.index.want()
		if err != nil {
			return nil, nil, err
		}
		if ok {
			keys, reads = append(keys, listKey(r.key, tagIndex, i, salt)), append(reads, aggRead{agg: i, list: tagIndex})
		}
	}
	salt, ok, err := l.elems.want()
	if ok {
		keys, reads = append(keys, listKey(r.key, tagElems, i, salt)), append(reads, aggRead{agg: i, list: tagElems})
	}
	return keys, reads, err
}

// listKey is the key of a list aggregate's page.
func listKey(key []byte, tag byte, agg int, salt uint64) []byte {
	return binary.AppendUvarint(aggSubKey(nil, key, tag, agg), salt)
}

// visit hands a read page to the list.
func (l *listState) visit(rd aggRead, val []byte, found bool) error {
	switch {
	case l.scan != nil:
		return l.scan.visit(rd.salt, val, found)
	case rd.list == tagIndex:
		return l.index.visit(val, found)
	}
	return l.elems.visit(val, found)
}

// place, once a scan has read every page, finds a retraction's element
// (its row's oldest copy) and walks the change's path from the pages.
func (l *listState) place() error {
	if l.placed {
		return nil
	}
	l.placed = true
	if l.waiting {
		l.waiting = false
		err := l.scan.walk(l.elems.path[0], func(e string, _ int64) bool {
			if expr.HoldsID(e, l.id) {
				l.elems.v, l.elems.retract, l.elems.active = types.NewVarchar(e), true, true
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	for {
		salt, ok, err := l.elems.want()
		if err != nil || !ok {
			return err
		}
		n := l.scan.pages[salt]
		if n == nil {
			return fmt.Errorf("%w: list page %d missing", errAggState, salt)
		}
		l.elems.push(salt, n)
	}
}

// resolvePrefix, at the leaf, makes a prefix retraction exact: the first
// element at or after the prefix if it starts with it (true), else absent.
func (t *valueTree) resolvePrefix() bool {
	if !t.prefix || t.absent || !t.active {
		return false
	}
	t.prefix = false
	leaf := t.path[len(t.path)-1]
	p := t.v.Str()
	i := sort.Search(len(leaf.vals), func(i int) bool { return leaf.vals[i].v.Str() >= p })
	if i == len(leaf.vals) || !strings.HasPrefix(leaf.vals[i].v.Str(), p) {
		t.absent = true
		return false
	}
	t.v = leaf.vals[i].v
	return true
}

// applyList applies the record's change to list i and writes its pages.
func (a *Aggregate) applyList(r *aggRec, i int) error {
	l := r.lists[i]
	for _, t := range []struct {
		tree *valueTree
		tag  byte
	}{{l.index, tagIndex}, {l.elems, tagElems}} {
		if t.tree == nil {
			continue
		}
		t.tree.apply(a.allocPageTag(r.key, t.tag, i))
		for _, w := range t.tree.writes {
			if err := a.put(listKey(r.key, t.tag, i, w.salt), w.val); err != nil {
				return err
			}
		}
	}
	if l.scan != nil {
		return l.scan.absorb(l.elems.writes)
	}
	return nil
}

// result renders the list aggregate.
func (l *listState) result() (types.Value, error) {
	if l.scan == nil {
		e := l.elems.result()
		if e.IsNull() {
			return e, nil
		}
		return l.spec.ElemValue(e)
	}
	return l.spec.ListResult(func(yield func(string, int64) bool) error {
		return l.scan.walk(l.elems.path[0], yield)
	})
}

// splitResult is the result of aggregate i kept outside the group entry's
// accumulators: a list, or a MIN/MAX tree (of elements for FIRST/LAST_VALUE).
func (a *Aggregate) splitResult(r *aggRec, i int) (types.Value, error) {
	if a.modes[i] == modeList {
		return r.lists[i].result()
	}
	v := r.trees[i].result()
	if s := a.cfg.Aggs[i]; s.IsList() && !v.IsNull() {
		return s.ElemValue(v)
	}
	return v, nil
}

// appendSplitRoot appends the group entry part of aggregate i kept
// outside its accumulators.
func (a *Aggregate) appendSplitRoot(val []byte, r *aggRec, i int) []byte {
	if a.modes[i] == modeList {
		return r.lists[i].appendPart(val)
	}
	return r.trees[i].appendRoot(val)
}

// recycleLists returns the record's list pages to the node pool.
func (a *Aggregate) recycleLists(r *aggRec) {
	for _, l := range r.lists {
		if l == nil {
			continue
		}
		a.nodes.put(l.elems)
		if l.index != nil {
			a.nodes.put(l.index)
		}
	}
}

// treeScan holds every page of a tree, read level by level.
type treeScan struct {
	pages map[uint64]*treeNode
	next  []uint64 // the pages the next round reads
}

func newTreeScan(root *treeNode) *treeScan {
	s := &treeScan{pages: map[uint64]*treeNode{}}
	s.queue(root)
	return s
}

func (s *treeScan) queue(n *treeNode) {
	if !n.leaf {
		for _, k := range n.kids {
			s.next = append(s.next, k.salt)
		}
	}
}

func (s *treeScan) visit(salt uint64, val []byte, found bool) error {
	if !found {
		return fmt.Errorf("%w: list page %d missing", errAggState, salt)
	}
	n, err := readNode(val, &treePool{})
	if err != nil {
		return err
	}
	n.salt = salt
	s.pages[salt] = n
	s.queue(n)
	return nil
}

// absorb makes the pages what a change wrote.
func (s *treeScan) absorb(writes []treeWrite) error {
	for _, w := range writes {
		if w.val == nil {
			delete(s.pages, w.salt)
			continue
		}
		n, err := readNode(w.val, &treePool{})
		if err != nil {
			return err
		}
		n.salt = w.salt
		s.pages[w.salt] = n
	}
	return nil
}

// walk yields the elements under n in order; false when yield stopped it.
func (s *treeScan) walk(n *treeNode, yield func(string, int64) bool) error {
	_, err := s.walkNode(n, yield)
	return err
}

func (s *treeScan) walkNode(n *treeNode, yield func(string, int64) bool) (bool, error) {
	if n.leaf {
		for _, e := range n.vals {
			if !yield(e.v.Str(), e.n) {
				return false, nil
			}
		}
		return true, nil
	}
	for _, k := range n.kids {
		c := s.pages[k.salt]
		if c == nil {
			return false, fmt.Errorf("%w: list page %d missing", errAggState, k.salt)
		}
		if more, err := s.walkNode(c, yield); err != nil || !more {
			return more, err
		}
	}
	return true, nil
}
