package ops

import (
	"fmt"
	"slices"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
	"clink/state"
)

// OverSortKey is one ORDER BY key of a general OVER: an expression over
// the input row, its direction and where NULLs sort.
type OverSortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool
}

// OverGeneralConfig is an OVER window that the watermark path cannot run:
// any ORDER BY (several keys, either direction, no watermark), any input
// (append-only or updating) and frames that may end after the current row.
// Limit > 0 makes it a group top-N: only rows whose LimitFunc value
// (ROW_NUMBER by default, or RANK / DENSE_RANK, which keep every tie) is
// at most Limit are emitted (the planner pushes an outer `rn <= N` down).
type OverGeneralConfig struct {
	Name      string
	Partition []expr.Expr
	Order     []OverSortKey
	Calls     []OverCall
	Limit     int64
	LimitFunc OverFunc // OverRank or OverDenseRank; anything else is ROW_NUMBER
	// AppendOnly says the input never retracts: with a Limit, rows that
	// fall out of the top N (plus the frames' lookahead) can never come
	// back, so only those are kept.
	AppendOnly bool
	HashSeed   uint64
}

// OverGeneral is the general OVER operator (OverWindow, or GroupTopN with
// a Limit). A partition's rows are kept in ORDER BY order, ties broken by
// the row's encoding so that the order is a function of the rows alone
// (deterministic at any parallelism and on either path); identical rows
// share an entry with a count. A small partition's entries live in its
// head entry, a large one's in pages indexed by the head
// (over_general_page.go), of which a change reads only those its
// recomputation reaches. Each change
// inserts or removes one row, recomputes the outputs it can affect (the
// row's neighbourhood as the calls' frames reach, every later row when
// ROW_NUMBER or RANK shifts) before and after, and emits the difference:
// the changed rows' old outputs retracted, the new ones inserted.
type OverGeneral struct {
	keyed
	cfg OverGeneralConfig
	// truncate says a partition keeps only the rows that can ever be
	// output or read by an output row's frame (an append-only top-N):
	// those up to the limit plus ahead more.
	truncate bool
	ahead    int64
	okBuf    []byte
	rowBuf   []byte
}

// NewOverGeneral returns a general OVER operator.
func NewOverGeneral(cfg OverGeneralConfig) *OverGeneral {
	o := &OverGeneral{cfg: cfg}
	o.name, o.seed = cfg.Name, cfg.HashSeed
	part := cfg.Partition
	if part == nil {
		part = []expr.Expr{}
	}
	o.keys = []KeyFn{{Exprs: part}}
	for _, p := range part {
		o.keyTypes = append(o.keyTypes, p.Type())
	}
	o.apply = o.update
	o.ahead, o.truncate = lookahead(cfg)
	return o
}

// lookahead returns how many rows past the last output row an output
// row's calls read (the longest ROWS m FOLLOWING or LEAD offset) and
// whether a partition may drop the rows past that: only for a top-N over
// an append-only input, and not when a frame reaches to the end or by
// value (a RANGE frame past the peers; peers only are fine for RANK and
// DENSE_RANK limits, which keep whole peer groups).
func lookahead(cfg OverGeneralConfig) (int64, bool) {
	if cfg.Limit <= 0 || !cfg.AppendOnly {
		return 0, false
	}
	rank := cfg.LimitFunc == OverRank || cfg.LimitFunc == OverDenseRank
	var ahead int64
	for _, c := range cfg.Calls {
		if c.sizeCall() {
			return 0, false // every row's value depends on the partition's size
		}
		if c.Func == OverLead {
			ahead = max(ahead, c.Offset)
		}
		if !c.frameCall() {
			continue
		}
		if c.Frame.EndUnbounded || c.Frame.valueFrame() || c.Frame.Range && !rank {
			return 0, false
		}
		if !c.Frame.Range {
			ahead = max(ahead, c.Frame.End)
		}
	}
	return ahead, true
}

// limitEnd is the exclusive end of the positions of v that the Limit lets
// out: the first Limit rows for ROW_NUMBER, and for RANK / DENSE_RANK
// every row whose rank is at most Limit (ties included); len without a
// Limit.
func (o *OverGeneral) limitEnd(v *ogView) int {
	n, lim := v.len(), o.cfg.Limit
	if lim <= 0 || int64(n) <= lim && o.cfg.LimitFunc != OverDenseRank {
		return n
	}
	switch o.cfg.LimitFunc {
	case OverRank:
		return v.peerEnd(int(lim)-1) + 1
	case OverDenseRank:
		return v.denseEnd(lim)
	}
	return int(lim)
}

// keepEnd is how many leading rows of v a truncating partition keeps.
func (o *OverGeneral) keepEnd(v *ogView) int {
	return int(min(int64(o.limitEnd(v))+o.ahead, int64(v.len())))
}

// frameCall reports whether the call reads a frame.
func (c *OverCall) frameCall() bool {
	return c.Func == OverAggregate || c.Func == OverFirstValue || c.Func == OverLastValue || c.Func == OverNthValue
}

// sizeCall reports whether the call's value depends on the partition's
// row count (PERCENT_RANK, CUME_DIST, NTILE): a change may alter every
// row's value.
func (c *OverCall) sizeCall() bool {
	return c.Func == OverPercentRank || c.Func == OverCumeDist || c.Func == OverNtile
}

// Open binds the backend and decides the path.
func (o *OverGeneral) Open(ctx *engine.OperatorContext[Change]) error {
	o.open(ctx)
	return nil
}

// Process is the synchronous path.
func (o *OverGeneral) Process(input int, ch Change) error { return o.process(input, ch) }

// OnWatermark has nothing to fire: results are emitted per change.
func (o *OverGeneral) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (o *OverGeneral) Close() error { return nil }

// orderKey appends the row's ORDER BY encoding: per key a NULL marker
// byte (0 or 2 for NULL as it sorts first or last, 1 before a value) and
// the value's order-preserving key bytes, complemented for DESC (key
// encodings are prefix-free, so the complement reverses the order).
func (o *OverGeneral) orderKey(buf []byte, row types.Row) ([]byte, error) {
	for _, k := range o.cfg.Order {
		v, err := k.Expr.Eval(row)
		if err != nil {
			return buf, err
		}
		if v.IsNull() {
			if k.NullsFirst {
				buf = append(buf, 0)
			} else {
				buf = append(buf, 2)
			}
			continue
		}
		buf = append(buf, 1)
		start := len(buf)
		buf = types.AppendKey(buf, v)
		if k.Desc {
			for i := start; i < len(buf); i++ {
				buf[i] = ^buf[i]
			}
		}
	}
	return buf, nil
}

// update applies one change to its partition and emits the outputs'
// difference: it reads the head, then (ogChange.run) the page that holds
// the row and any others the recomputation reaches.
func (o *OverGeneral) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	retract := ch.Kind.Retracts()
	if retract && o.truncate {
		return fmt.Errorf("%s: the top-N of an append-only input got a retraction (%s)", o.name, ch.Kind)
	}
	var err error
	if o.okBuf, err = o.orderKey(o.okBuf[:0], ch.Row); err != nil {
		return fmt.Errorf("%s: order key: %w", o.name, err)
	}
	o.rowBuf = types.AppendRow(o.rowBuf[:0], ch.Row)
	part, err := decodeHead(val, found)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	c := &ogChange{o: o, key: slices.Clone(key), ok: slices.Clone(o.okBuf), row: slices.Clone(o.rowBuf),
		retract: retract, part: part}
	c.pi = part.locate(c.ok, c.row)
	c.a, c.b = c.pi, c.pi
	return c.run()
}

// ogChange is one change to a paged partition: it holds its own copies
// of the key and row, since reading pages may suspend it.
type ogChange struct {
	o        *OverGeneral
	key      []byte
	ok, row  []byte
	retract  bool
	part     *ogPart
	pi       int // the page holding the row
	a, b     int // the window of pages read (or to read)
	keyBuf   []byte
	pageKeys [][]byte
}

// run reads the window's unread pages (one batched fetch, which may
// suspend) and tries the change, widening the window until the
// recomputation needs no other page.
func (c *ogChange) run() error {
	var want []*ogPage
	c.pageKeys = c.pageKeys[:0]
	for i := c.a; i <= c.b; i++ {
		if pg := c.part.pages[i]; !pg.loaded {
			want = append(want, pg)
			c.pageKeys = append(c.pageKeys, ogPageKey(nil, c.key, pg.salt))
		}
	}
	if len(want) > 0 {
		return c.o.fetch(c.pageKeys, func(lks []state.Lookup) error {
			vals, found := make([][]byte, len(lks)), make([]bool, len(lks))
			for i, lk := range lks {
				vals[i], found[i] = lk.Value, lk.Found
			}
			if err := loadPages(want, vals, found); err != nil {
				return fmt.Errorf("%s: %w", c.o.name, err)
			}
			return c.run()
		})
	}
	a, b, done, err := c.try()
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", c.o.name, err)
	case done:
		return nil
	case a == c.a && b == c.b:
		return fmt.Errorf("%s: internal: an OVER recomputation needs no new page but misses", c.o.name)
	}
	c.a, c.b = a, b
	return c.run()
}

// view builds the window's view of the partition with page pi's entries
// es (and rows moved by delta).
func (c *ogChange) view(es []*ogEntry, delta int) *ogView {
	pages := c.part.pages
	var all []*ogEntry
	for i := c.a; i <= c.b; i++ {
		if i == c.pi {
			all = append(all, es...)
		} else {
			all = append(all, pages[i].es...)
		}
	}
	starts := c.part.starts()
	for i := c.pi + 1; i < len(starts); i++ {
		starts[i] += delta
	}
	v := newOgView(all, starts[c.a], starts[len(starts)-1], starts)
	v.first, v.last = c.a == 0, c.b == len(pages)-1
	if !v.last {
		v.nextOk = pages[c.b+1].fok
	}
	return v
}

// try recomputes the change over the window; it returns a wider window
// when it needed rows outside it (having emitted and written nothing),
// else done after emitting the difference and writing the pages.
func (c *ogChange) try() (a, b int, done bool, err error) {
	o, part := c.o, c.part
	old := part.pages[c.pi].es
	nu, q, ok := applyChange(old, c.ok, c.row, c.retract)
	if !ok {
		return 0, 0, true, nil // a retraction of a row the partition does not hold
	}
	delta := 1
	if c.retract {
		delta = -1
	}
	oldV, newV := c.view(old, 0), c.view(nu, delta)
	p := oldV.starts[c.pi] + q
	widen := func() (int, int, bool, error) {
		return min(c.a, oldV.wantA, newV.wantA), max(c.b, oldV.wantB, newV.wantB), false, nil
	}
	keep := -1
	if o.truncate {
		if keep = o.keepEnd(newV); newV.miss {
			return widen()
		}
		if p >= keep {
			return 0, 0, true, nil // below the kept top: it can never be output
		}
		if keep < newV.len() {
			_ = newV.touch(keep-1, keep-1) // the page to cut
		}
	}
	x, y := newV, oldV
	if c.retract {
		x, y = oldV, newV
	}
	var xs, ys []types.Row
	lo, hi, err := o.reach(x, p)
	if err == nil {
		xs, err = o.outputs(x, lo, min(hi+1, o.limitEnd(x)))
	}
	if err == nil {
		ys, err = o.outputs(y, lo, min(hi, o.limitEnd(y)))
	}
	if n := len(nu); !x.miss && !y.miss && n > 0 && n < ogPageMax/4 && !part.inline {
		// an underfull page reads a neighbour to merge with
		next := c.pi+1 < len(part.pages) && part.pages[c.pi+1].loaded
		prev := c.pi > 0 && part.pages[c.pi-1].loaded
		switch {
		case next || prev:
		case c.pi+1 < len(part.pages):
			newV.need(newV.starts[c.pi+1])
		case c.pi > 0:
			newV.need(newV.starts[c.pi-1])
		}
	}
	if x.miss || y.miss {
		return widen()
	}
	if err != nil {
		return 0, 0, false, err
	}
	if c.retract {
		o.emitDiff(xs, ys)
	} else {
		o.emitDiff(ys, xs)
	}
	part.pages[c.pi].setEntries(nu)
	if keep >= 0 {
		part.truncate(int64(keep))
	}
	part.reshape(o.seed, c.key)
	return 0, 0, true, o.writePart(c.key, part)
}

// reach returns the first and last positions of x (the list holding the
// changed row, at p) whose outputs the change may affect. Positions after
// p are one further on in x than in the other list.
func (o *OverGeneral) reach(x *ogView, p int) (lo, hi int, err error) {
	n := x.len()
	lo, hi = p, p
	if o.cfg.Limit > 0 {
		hi = n - 1 // rows move across the limit (capped to it by the caller)
	}
	for i := range o.cfg.Calls {
		c := &o.cfg.Calls[i]
		switch {
		case c.sizeCall():
			lo, hi = 0, n-1
		case c.Func == OverRowNumber || c.Func == OverRank || c.Func == OverDenseRank:
			hi = n - 1
		case c.Func == OverLag:
			hi = max(hi, p+int(min(c.Offset, int64(n))))
		case c.Func == OverLead:
			lo = min(lo, p-int(min(c.Offset, int64(n))))
		case c.Frame.valueFrame():
			l, h, err := o.valueReach(c, x, p)
			if err != nil {
				return 0, 0, err
			}
			lo, hi = min(lo, l), max(hi, h)
		case c.Frame.Range:
			if c.Frame.EndUnbounded {
				lo = 0
			} else {
				lo = min(lo, x.peerStart(p))
			}
			if c.Frame.Unbounded {
				hi = n - 1
			} else {
				hi = max(hi, x.peerEnd(p))
			}
		default:
			if c.Frame.EndUnbounded {
				lo = 0
			} else {
				lo = min(lo, p-int(min(c.Frame.End, int64(n))))
			}
			if c.Frame.Unbounded {
				hi = n - 1
			} else {
				hi = max(hi, p+int(min(c.Frame.N, int64(n))))
			}
		}
	}
	return max(lo, 0), min(hi, n-1), nil
}

// emitDiff emits the multiset difference of the old and new outputs of
// the affected rows: pairs as -U/+U, the rest as -D or +I.
func (o *OverGeneral) emitDiff(olds, news []types.Row) {
	count := make(map[string]int, len(olds))
	var buf []byte
	for _, r := range olds {
		buf = types.AppendRow(buf[:0], r)
		count[string(buf)]++
	}
	var added []types.Row
	for _, r := range news {
		buf = types.AppendRow(buf[:0], r)
		if count[string(buf)] > 0 {
			count[string(buf)]--
			continue
		}
		added = append(added, r)
	}
	var removed []types.Row
	for _, r := range olds {
		buf = types.AppendRow(buf[:0], r)
		if count[string(buf)] > 0 {
			count[string(buf)]--
			removed = append(removed, r)
		}
	}
	out := o.ctx.Output
	for i := 0; i < len(removed) || i < len(added); i++ {
		switch {
		case i < len(removed) && i < len(added):
			out.Emit(Change{Kind: UpdateBefore, Row: removed[i]})
			out.Emit(Change{Kind: UpdateAfter, Row: added[i]})
		case i < len(removed):
			out.Emit(Change{Kind: Delete, Row: removed[i]})
		default:
			out.Emit(Change{Kind: Insert, Row: added[i]})
		}
	}
}
