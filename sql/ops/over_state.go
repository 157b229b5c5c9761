package ops

import (
	"encoding/binary"
	"fmt"
	"slices"

	"clink/sql/types"
)

// A partition's PartState value: uvarint seq (the next tie-break
// sequence) | uvarint length | calls blob | pending rows, each varint ts |
// uvarint seq | uvarint length | encoded row. The calls blob is varint
// count (rows emitted) then each call's state, length-prefixed; an empty
// blob is a fresh partition. New rows are appended unsorted; a fire sorts
// them by (ts, seq).
var emptyPart = []byte{0}

// pendingRow is a row waiting for the watermark.
type pendingRow struct {
	ts  int64
	seq uint64
	row []byte
}

func appendPending(b []byte, p pendingRow) []byte {
	b = binary.AppendVarint(b, p.ts)
	b = binary.AppendUvarint(b, p.seq)
	b = binary.AppendUvarint(b, uint64(len(p.row)))
	return append(b, p.row...)
}

// partState is a decoded PartState.
type partState struct {
	seq     uint64
	count   int64
	calls   [][]byte
	pending []pendingRow
}

// decodePart reads a PartState; it copies val (which aliases the
// backend's storage) and sorts the pending rows.
func decodePart(val []byte, ncalls int) (*partState, error) {
	r := sreader{b: append([]byte(nil), val...)}
	ps := &partState{seq: r.uvarint(), calls: make([][]byte, ncalls)}
	if blob := (sreader{b: r.bytes()}); len(blob.b) > 0 {
		ps.count = blob.varint()
		for i := range ps.calls {
			ps.calls[i] = blob.bytes()
		}
		if blob.err != nil {
			return nil, blob.err
		}
	}
	for len(r.b) > 0 && r.err == nil {
		ps.pending = append(ps.pending, pendingRow{ts: r.varint(), seq: r.uvarint(), row: r.bytes()})
	}
	if r.err != nil {
		return nil, r.err
	}
	slices.SortFunc(ps.pending, func(a, b pendingRow) int {
		if a.ts != b.ts {
			return cmpInt(a.ts, b.ts)
		}
		return cmpInt(int64(a.seq), int64(b.seq))
	})
	return ps, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (ps *partState) encode() []byte {
	blob := binary.AppendVarint(nil, ps.count)
	for _, c := range ps.calls {
		blob = binary.AppendUvarint(blob, uint64(len(c)))
		blob = append(blob, c...)
	}
	b := binary.AppendUvarint(make([]byte, 0, len(blob)+64), ps.seq)
	b = binary.AppendUvarint(b, uint64(len(blob)))
	b = append(b, blob...)
	for _, p := range ps.pending {
		b = appendPending(b, p)
	}
	return b
}

// callWork is one call's decoded state during a fire.
type callWork struct {
	first, last types.Value
	hasFirst    bool
	ring        []types.Value // LAG: the previous Offset values
	buf         []frameEntry  // bounded frames: the frame's rows
	groups      int64         // DENSE_RANK: the peer groups emitted
}

type frameEntry struct {
	ts int64
	v  types.Value
}

// emitDue emits the due rows in order, peer group by peer group, and
// leaves the calls' new state in ps.
func (o *Over) emitDue(ps *partState, due []pendingRow) error {
	work := make([]callWork, len(o.cfg.Calls))
	for i := range o.cfg.Calls {
		if err := o.loadCall(i, ps.calls[i], &work[i]); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	rows := make([]types.Row, len(due))
	for i, p := range due {
		r, err := types.DecodeRow(p.row)
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		rows[i] = r
	}
	for i := 0; i < len(due); {
		j := i + 1
		for j < len(due) && due[j].ts == due[i].ts {
			j++
		}
		if err := o.emitGroup(ps, work, due[i].ts, rows[i:j]); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		i = j
	}
	for i := range o.cfg.Calls {
		b, err := o.saveCall(i, &work[i])
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		ps.calls[i] = b
	}
	return nil
}

// emitGroup computes every call for a group of rows with time ts and
// emits them: a RANGE call once for the group (peers share the frame), any
// other call row by row.
func (o *Over) emitGroup(ps *partState, work []callWork, ts int64, rows []types.Row) error {
	w := 0
	if len(rows) > 0 {
		w = len(rows[0])
	}
	outs := make([]types.Row, len(rows))
	for k, r := range rows {
		outs[k] = make(types.Row, w+len(o.cfg.Calls))
		copy(outs[k], r)
	}
	for ci := range o.cfg.Calls {
		c := &o.cfg.Calls[ci]
		if c.Func == OverRank || c.Func == OverDenseRank {
			// A peer group is never split across fires: a row at a time the
			// watermark has passed is late and dropped.
			v := types.NewBigInt(ps.count + 1)
			if c.Func == OverDenseRank {
				work[ci].groups++
				v = types.NewBigInt(work[ci].groups)
			}
			for _, out := range outs {
				out[w+ci] = v
			}
			continue
		}
		if c.peers() {
			for _, r := range rows {
				if err := o.push(ci, &work[ci], ts, r); err != nil {
					return err
				}
			}
			v, err := o.result(ci, &work[ci])
			if err != nil {
				return err
			}
			for _, out := range outs {
				out[w+ci] = v
			}
			continue
		}
		for k, r := range rows {
			v, err := o.rowValue(ci, &work[ci], ts, r, ps.count+int64(k)+1)
			if err != nil {
				return err
			}
			outs[k][w+ci] = v
		}
	}
	ps.count += int64(len(rows))
	for _, out := range outs {
		o.ctx.Output.Emit(Change{Kind: Insert, Row: out})
	}
	return nil
}

// rowValue is a per-row call's value for one row (n is its row number).
func (o *Over) rowValue(ci int, cw *callWork, ts int64, row types.Row, n int64) (types.Value, error) {
	c := &o.cfg.Calls[ci]
	switch c.Func {
	case OverRowNumber:
		return types.NewBigInt(n), nil
	case OverLag:
		v, err := c.Arg.Eval(row)
		if err != nil || c.Offset == 0 {
			return v, err
		}
		res := types.NullValue
		if int64(len(cw.ring)) == c.Offset {
			res = cw.ring[0]
		} else if c.Default != nil {
			if res, err = c.Default.Eval(row); err != nil {
				return res, err
			}
		}
		cw.ring = append(cw.ring, v)
		if int64(len(cw.ring)) > c.Offset {
			cw.ring = cw.ring[1:]
		}
		return res, nil
	}
	if err := o.push(ci, cw, ts, row); err != nil {
		return types.NullValue, err
	}
	return o.result(ci, cw)
}

// push adds a row to a frame call's state.
func (o *Over) push(ci int, cw *callWork, ts int64, row types.Row) error {
	c := &o.cfg.Calls[ci]
	var v types.Value
	var err error
	if c.Func == OverAggregate {
		var include bool
		if v, include, err = c.Agg.Input(row); err == nil && !include {
			v = types.NullValue
		}
	} else {
		v, err = c.Arg.Eval(row)
	}
	if err != nil {
		return err
	}
	if !c.Frame.Unbounded {
		cw.buf = append(cw.buf, frameEntry{ts: ts, v: v})
		if c.Frame.Range {
			for cw.buf[0].ts < ts-c.Frame.N {
				cw.buf = cw.buf[1:]
			}
		} else if int64(len(cw.buf)) > c.Frame.N+1 {
			cw.buf = cw.buf[1:]
		}
		return nil
	}
	switch c.Func {
	case OverAggregate:
		return o.accs[ci].Add(v)
	case OverFirstValue:
		if !cw.hasFirst {
			cw.first, cw.hasFirst = v, true
		}
	default:
		cw.last = v
	}
	return nil
}

// result is a frame call's value over its current frame.
func (o *Over) result(ci int, cw *callWork) (types.Value, error) {
	c := &o.cfg.Calls[ci]
	if c.Frame.Unbounded {
		switch c.Func {
		case OverAggregate:
			return o.accs[ci].Result(), nil
		case OverFirstValue:
			return cw.first, nil
		}
		return cw.last, nil
	}
	switch c.Func {
	case OverFirstValue:
		return cw.buf[0].v, nil
	case OverLastValue:
		return cw.buf[len(cw.buf)-1].v, nil
	}
	acc := o.accs[ci]
	if err := acc.UnmarshalBinary(o.zeros[ci]); err != nil {
		return types.NullValue, err
	}
	for _, e := range cw.buf {
		if err := acc.Add(e.v); err != nil {
			return types.NullValue, err
		}
	}
	return acc.Result(), nil
}

// loadCall decodes call i's state b (empty: a fresh partition).
func (o *Over) loadCall(i int, b []byte, cw *callWork) error {
	c := &o.cfg.Calls[i]
	switch {
	case c.Func == OverRowNumber || c.Func == OverRank:
		return nil
	case c.Func == OverDenseRank:
		if len(b) > 0 {
			r := sreader{b: b}
			cw.groups = r.varint()
			return r.err
		}
		return nil
	case c.Func == OverLag:
		if len(b) > 0 {
			r, err := types.DecodeRow(b)
			cw.ring = r
			return err
		}
		return nil
	case !c.Frame.Unbounded:
		return cw.loadBuf(b)
	case c.Func == OverAggregate:
		if len(b) == 0 {
			b = o.zeros[i]
		}
		return o.accs[i].UnmarshalBinary(b)
	case c.Func == OverFirstValue && len(b) > 0:
		r, err := types.DecodeRow(b)
		if err != nil || len(r) != 1 {
			return errAggState
		}
		cw.first, cw.hasFirst = r[0], true
	}
	return nil
}

// loadBuf decodes a bounded frame: uvarint n, n varint times, the values
// as one encoded row.
func (cw *callWork) loadBuf(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	r := sreader{b: b}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b)) {
		return errAggState
	}
	ts := make([]int64, n)
	for k := range ts {
		ts[k] = r.varint()
	}
	if r.err != nil {
		return r.err
	}
	vals, err := types.DecodeRow(r.b)
	if err != nil || len(vals) != len(ts) {
		return errAggState
	}
	cw.buf = make([]frameEntry, n)
	for k := range cw.buf {
		cw.buf[k] = frameEntry{ts: ts[k], v: vals[k]}
	}
	return nil
}

// saveCall encodes call i's state.
func (o *Over) saveCall(i int, cw *callWork) ([]byte, error) {
	c := &o.cfg.Calls[i]
	switch {
	case c.Func == OverRowNumber || c.Func == OverRank:
		return nil, nil
	case c.Func == OverDenseRank:
		return binary.AppendVarint(nil, cw.groups), nil
	case c.Func == OverLag:
		if len(cw.ring) == 0 {
			return nil, nil
		}
		return types.EncodeRow(cw.ring), nil
	case !c.Frame.Unbounded:
		b := binary.AppendUvarint(nil, uint64(len(cw.buf)))
		vals := make(types.Row, len(cw.buf))
		for k, e := range cw.buf {
			b = binary.AppendVarint(b, e.ts)
			vals[k] = e.v
		}
		return types.AppendRow(b, vals), nil
	case c.Func == OverAggregate:
		return o.accs[i].MarshalBinary()
	case c.Func == OverFirstValue && cw.hasFirst:
		return types.EncodeRow(types.Row{cw.first}), nil
	}
	return nil, nil
}
