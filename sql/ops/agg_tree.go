package ops

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"clink/sql/types"
)

// MIN and MAX over an input that retracts must find the next extreme when
// the current one goes, so they keep every value of the group with its
// multiplicity: not in the group entry (which every row of the group
// rewrites), but in a B+ tree of pages. The group entry holds the tree's
// root: its values while there are at most treeHeadMax of them, else one
// reference (page salt and the page's lowest and highest value) to a root
// page. A leaf page holds up to treeLeafMax sorted values, an inner page up
// to treeFanout references to the pages below it, each with its subtree's
// lowest and highest value, so the extreme is always in the group entry
// (MIN is the root's first value, MAX its last) and a row reads and writes
// only the pages on its value's path.
//
// Cost: a row reads one page per level (log base ~treeFanout/2 of the
// group's distinct values; 1M distinct values are three levels) in one
// batched read per level, coalesced with the row's other aggregates' reads
// of that level, and writes the leaf plus an inner page only when a
// bound it references changed or a page split, so O(treeLeafMax +
// treeFanout * depth) bytes whatever the group's size. Pages split when
// full and are deleted when empty; underfull pages are not merged (a tree
// never holds more pages than values). A retraction of a value outside
// every page's bounds stops without reading further. The pages' keys are
// salted into the group key's key group (saltInGroup) and named by salts
// from a counter kept in the root.
//
// The sizes are variables so that tests can build deep trees from few
// values; a tree written with any sizes reads with any others.
var (
	treeHeadMax = 16 // values the group entry holds before a root page
	treeLeafMax = 64 // values of a leaf page before it splits
	treeFanout  = 64 // references of an inner page before it splits
)

// treeVal is one distinct value of a leaf and its multiplicity.
type treeVal struct {
	v types.Value
	n int64
}

// treeRef references a page and its subtree's lowest and highest value.
type treeRef struct {
	salt   uint64
	lo, hi types.Value
}

// treeNode is the root (in the group entry) or a page.
type treeNode struct {
	leaf  bool
	salt  uint64 // a page's salt
	vals  []treeVal
	kids  []treeRef
	dirty bool
}

func (n *treeNode) size() int {
	if n.leaf {
		return len(n.vals)
	}
	return len(n.kids)
}

func (n *treeNode) full() bool {
	if n.leaf {
		return len(n.vals) > treeLeafMax
	}
	return len(n.kids) > treeFanout
}

// ref references a non-empty page.
func (n *treeNode) ref() treeRef {
	if n.leaf {
		return treeRef{salt: n.salt, lo: n.vals[0].v, hi: n.vals[len(n.vals)-1].v}
	}
	return treeRef{salt: n.salt, lo: n.kids[0].lo, hi: n.kids[len(n.kids)-1].hi}
}

// splitOff moves the upper half of a full page to a new page.
func (n *treeNode) splitOff() *treeNode {
	r := &treeNode{leaf: n.leaf, dirty: true}
	if n.leaf {
		h := len(n.vals) / 2
		r.vals, n.vals = slices.Clone(n.vals[h:]), n.vals[:h:h]
	} else {
		h := len(n.kids) / 2
		r.kids, n.kids = slices.Clone(n.kids[h:]), n.kids[:h:h]
	}
	n.dirty = true
	return r
}

func appendNode(b []byte, n *treeNode) []byte {
	if n.leaf {
		b = binary.AppendUvarint(append(b, 0), uint64(len(n.vals)))
		for _, e := range n.vals {
			b = binary.AppendVarint(types.AppendValue(b, e.v), e.n)
		}
		return b
	}
	b = binary.AppendUvarint(append(b, 1), uint64(len(n.kids)))
	for _, r := range n.kids {
		b = types.AppendValue(types.AppendValue(binary.AppendUvarint(b, r.salt), r.lo), r.hi)
	}
	return b
}

// treePool recycles the nodes of finished records' trees: decoding pages
// is most of a tree's cost, and most of that was allocation.
type treePool struct{ free []*treeNode }

func (p *treePool) get(leaf bool) *treeNode {
	if len(p.free) == 0 {
		return &treeNode{leaf: leaf}
	}
	n := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	*n = treeNode{leaf: leaf, vals: n.vals[:0], kids: n.kids[:0]}
	return n
}

// put recycles a finished tree's path; nothing may reference it after.
// The recycled slices keep their old values until overwritten: at most a
// few pages' worth per operator.
func (p *treePool) put(t *valueTree) {
	p.free = append(p.free, t.path...)
	t.path = nil
}

func readNode(b []byte, pool *treePool) (*treeNode, error) {
	if len(b) == 0 || b[0] > 1 {
		return nil, errAggState
	}
	n := pool.get(b[0] == 0)
	c, k := binary.Uvarint(b[1:])
	if k <= 0 || c > uint64(len(b)) {
		return nil, errAggState
	}
	b = b[1+k:]
	if n.leaf {
		n.vals = slices.Grow(n.vals, int(c)+1)
	} else {
		n.kids = slices.Grow(n.kids, int(c)+1)
	}
	var err error
	for range c {
		if n.leaf {
			var e treeVal
			if e.v, b, err = types.ReadValue(b); err != nil {
				return nil, errAggState
			}
			if e.n, k = binary.Varint(b); k <= 0 || e.n <= 0 {
				return nil, errAggState
			}
			n.vals, b = append(n.vals, e), b[k:]
			continue
		}
		var r treeRef
		if r.salt, k = binary.Uvarint(b); k <= 0 {
			return nil, errAggState
		}
		if r.lo, b, err = types.ReadValue(b[k:]); err != nil {
			return nil, errAggState
		}
		if r.hi, b, err = types.ReadValue(b); err != nil {
			return nil, errAggState
		}
		n.kids = append(n.kids, r)
	}
	if len(b) != 0 {
		return nil, errAggState
	}
	return n, nil
}

// treeWrite is a page to store, or (val nil) to delete.
type treeWrite struct {
	salt uint64
	val  []byte
}

// valueTree is one record's view of one MIN/MAX tree: the root decoded
// from the group entry and the pages read on the way to its value.
type valueTree struct {
	pool *treePool
	max  bool
	next uint64 // the next salt to try for a new page
	path []*treeNode
	at   []int // at[d]: the reference of path[d] the path follows
	// the record's change: active when it changes this tree
	v       types.Value
	retract bool
	active  bool
	absent  bool // a retraction of a value the tree does not hold
	// prefix: v is a prefix and the change retracts the first element
	// starting with it (resolvePrefix, agg_list.go)
	prefix bool
	writes []treeWrite
}

// decodeTree reads a root from the group entry (nil: an empty tree).
func decodeTree(b []byte, isMax bool, pool *treePool) (*valueTree, error) {
	t := &valueTree{max: isMax, pool: pool}
	if b == nil {
		t.path = []*treeNode{pool.get(true)}
		return t, nil
	}
	next, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errAggState
	}
	root, err := readNode(b[k:], pool)
	if err != nil {
		return nil, err
	}
	if !root.leaf && len(root.kids) != 1 {
		return nil, errAggState
	}
	t.next, t.path = next, []*treeNode{root}
	return t, nil
}

// appendRoot renders the root for the group entry.
func (t *valueTree) appendRoot(b []byte) []byte {
	return appendNode(binary.AppendUvarint(b, t.next), t.path[0])
}

// result is the tree's extreme (NULL when empty).
func (t *valueTree) result() types.Value {
	root := t.path[0]
	switch {
	case root.size() == 0:
		return types.NullValue
	case !root.leaf && t.max:
		return root.kids[len(root.kids)-1].hi
	case !root.leaf:
		return root.kids[0].lo
	case t.max:
		return root.vals[len(root.vals)-1].v
	}
	return root.vals[0].v
}

// want returns the salt of the next page the change needs, false when the
// path has reached a leaf (or the retracted value cannot be in the tree).
func (t *valueTree) want() (uint64, bool, error) {
	if !t.active || t.absent {
		return 0, false, nil
	}
	n := t.path[len(t.path)-1]
	if n.leaf {
		return 0, false, nil
	}
	if len(n.kids) == 0 {
		return 0, false, errAggState
	}
	c := sort.Search(len(n.kids), func(i int) bool { return types.CompareTotal(t.v, n.kids[i].hi) <= 0 })
	if t.prefix && c == len(n.kids) {
		t.absent = true // no element at or above the prefix
		return 0, false, nil
	}
	c = min(c, len(n.kids)-1)
	if t.retract && !t.prefix && (types.CompareTotal(t.v, n.kids[c].lo) < 0 || types.CompareTotal(t.v, n.kids[c].hi) > 0) {
		t.absent = true
		return 0, false, nil
	}
	t.at = append(t.at, c)
	return n.kids[c].salt, true, nil
}

// visit adds the page want asked for to the path.
func (t *valueTree) visit(val []byte, found bool) error {
	parent := t.path[len(t.path)-1]
	salt := parent.kids[t.at[len(t.at)-1]].salt
	if !found {
		return fmt.Errorf("%w: MIN/MAX page %d missing", errAggState, salt)
	}
	n, err := readNode(val, t.pool)
	if err != nil {
		return err
	}
	t.push(salt, n)
	return nil
}

// push adds page n (named salt) to the path.
func (t *valueTree) push(salt uint64, n *treeNode) {
	n.salt = salt
	t.path = append(t.path, n)
}

// apply changes the value's multiplicity in its leaf, then splits full
// pages, deletes empty ones and updates the references above them up to
// the root; the pages to write are in t.writes. alloc names a new page.
func (t *valueTree) apply(alloc func(t *valueTree) uint64) {
	if !t.active || t.absent {
		return
	}
	d := len(t.path) - 1
	leaf := t.path[d]
	i, ok := slices.BinarySearchFunc(leaf.vals, t.v, func(e treeVal, v types.Value) int { return types.CompareTotal(e.v, v) })
	switch {
	case t.retract && !ok:
		return // a value never added
	case t.retract:
		if leaf.vals[i].n--; leaf.vals[i].n == 0 {
			leaf.vals = slices.Delete(leaf.vals, i, i+1)
		}
	case ok:
		leaf.vals[i].n++
	default:
		leaf.vals = slices.Insert(leaf.vals, i, treeVal{v: t.v, n: 1})
	}
	leaf.dirty = true
	for ; d > 0; d-- {
		n, parent, c := t.path[d], t.path[d-1], t.at[d-1]
		if n.size() == 0 {
			t.writes = append(t.writes, treeWrite{salt: n.salt})
			parent.kids = slices.Delete(parent.kids, c, c+1)
			parent.dirty = true
			continue
		}
		if n.full() {
			r := n.splitOff()
			r.salt = alloc(t)
			t.write(r)
			parent.kids = slices.Insert(parent.kids, c+1, r.ref())
			parent.dirty = true
		}
		if ref := n.ref(); !sameRef(ref, parent.kids[c]) {
			parent.kids[c], parent.dirty = ref, true
		}
		if n.dirty {
			t.write(n)
		}
	}
	t.fixRoot(alloc)
}

// fixRoot keeps the group entry's root small: more than treeHeadMax
// values or a second reference move into a new root page; an emptied root
// is an empty leaf; a root page with one reference, or a leaf root page
// with few values, moves back up.
func (t *valueTree) fixRoot(alloc func(t *valueTree) uint64) {
	root := t.path[0]
	switch {
	case root.leaf && len(root.vals) > treeHeadMax:
		p := &treeNode{leaf: true, vals: root.vals}
		p.salt = alloc(t)
		t.write(p)
		*root = treeNode{kids: []treeRef{p.ref()}}
	case !root.leaf && len(root.kids) > 1:
		p := &treeNode{kids: root.kids}
		p.salt = alloc(t)
		t.write(p)
		*root = treeNode{kids: []treeRef{p.ref()}}
	case !root.leaf && len(root.kids) == 0:
		*root = treeNode{leaf: true}
	case !root.leaf && len(t.path) > 1 && t.path[1].salt == root.kids[0].salt:
		top := t.path[1]
		switch {
		case !top.leaf && len(top.kids) == 1:
			root.kids = append(root.kids[:0], top.kids...)
			t.writes = append(t.writes, treeWrite{salt: top.salt})
		case top.leaf && len(top.vals) <= treeHeadMax/2:
			*root = treeNode{leaf: true, vals: slices.Clone(top.vals)}
			t.writes = append(t.writes, treeWrite{salt: top.salt})
		}
	}
}

func (t *valueTree) write(n *treeNode) {
	t.writes = append(t.writes, treeWrite{salt: n.salt, val: appendNode(make([]byte, 0, 8+24*n.size()), n)})
}

func sameRef(a, b treeRef) bool {
	return a.salt == b.salt && types.CompareTotal(a.lo, b.lo) == 0 && types.CompareTotal(a.hi, b.hi) == 0 &&
		a.lo.Kind() == b.lo.Kind() && a.hi.Kind() == b.hi.Kind()
}
