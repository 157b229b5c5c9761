package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
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
// a Limit). Per partition one state entry holds the partition's rows in
// ORDER BY order, ties broken by the row's encoding so that the order is a
// function of the rows alone (deterministic at any parallelism and on
// either path); identical rows share an entry with a count. Each change
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
	return c.Func == OverAggregate || c.Func == OverFirstValue || c.Func == OverLastValue
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
// difference.
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
	var old []*ogEntry
	if found {
		if old, err = decodeEntries(val); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	nu, p, ok := applyChange(old, o.okBuf, o.rowBuf, retract)
	if !ok {
		return nil // a retraction of a row the partition does not hold
	}
	oldV, newV := newOgView(old), newOgView(nu)
	if o.truncate && p >= o.keepEnd(newV) {
		return nil // below the kept top: it can never be output
	}
	x, y := newV, oldV
	if retract {
		x, y = oldV, newV
	}
	lo, hi, err := o.reach(x, p)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	xs, err := o.outputs(x, lo, min(hi+1, o.limitEnd(x)))
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	ys, err := o.outputs(y, lo, min(hi, o.limitEnd(y)))
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if retract {
		o.emitDiff(xs, ys)
	} else {
		o.emitDiff(ys, xs)
	}
	if o.truncate {
		nu = truncateEntries(nu, int64(o.keepEnd(newV)))
	}
	if len(nu) == 0 {
		return o.put(key, nil)
	}
	return o.put(key, encodeEntries(nu))
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
