package ops

import (
	"fmt"

	"clink/sql/types"
)

// outputs computes the output rows (input row plus one value per call) of
// positions [lo, end) of v.
func (o *OverGeneral) outputs(v *ogView, lo, end int) ([]types.Row, error) {
	if end <= lo {
		return nil, nil
	}
	if err := v.touch(lo, end-1); err != nil {
		return nil, err // read the pages the range spans at once
	}
	outs := make([]types.Row, end-lo)
	w := 0
	for j := lo; j < end; j++ {
		r, err := v.row(j)
		if err != nil {
			return nil, err
		}
		w = len(r)
		outs[j-lo] = make(types.Row, w+len(o.cfg.Calls))
		copy(outs[j-lo], r)
	}
	for ci := range o.cfg.Calls {
		c := &o.cfg.Calls[ci]
		var err error
		switch {
		case c.Func == OverRowNumber:
			for j := lo; j < end; j++ {
				outs[j-lo][w+ci] = types.NewBigInt(int64(j) + 1)
			}
		case c.Func == OverRank:
			for j := lo; j < end; j++ {
				outs[j-lo][w+ci] = types.NewBigInt(int64(v.peerStart(j)) + 1)
			}
		case c.Func == OverDenseRank:
			for j := lo; j < end; j++ {
				outs[j-lo][w+ci] = types.NewBigInt(v.denseRank(j))
			}
		case c.sizeCall():
			o.sizeValues(c, v, lo, outs, w+ci)
		case c.Func == OverLag || c.Func == OverLead:
			err = o.lag(c, v, lo, outs, w+ci)
		case c.Func == OverAggregate:
			err = o.frameAgg(c, v, lo, outs, w+ci)
		default:
			err = o.frameValue(c, v, lo, outs, w+ci)
		}
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", ci+1, err)
		}
	}
	return outs, nil
}

// frameOf returns the first and last positions of j's frame under c.
func (o *OverGeneral) frameOf(c *OverCall, v *ogView, j int) (s, e int, err error) {
	if c.Frame.valueFrame() {
		return o.valueFrameOf(c, v, j)
	}
	n := v.len()
	f := c.Frame
	switch {
	case f.Unbounded:
		s = 0
	case f.Range:
		s = v.peerStart(j)
	default:
		s = min(n, max(0, j-int(clampOff(f.N, n))))
	}
	switch {
	case f.EndUnbounded:
		e = n - 1
	case f.Range:
		e = v.peerEnd(j)
	default:
		e = max(-1, min(n-1, j+int(clampOff(f.End, n))))
	}
	return s, e, nil
}

// clampOff bounds a frame offset to [-n, n], so position arithmetic
// cannot overflow.
func clampOff(off int64, n int) int64 { return max(-int64(n), min(off, int64(n))) }

// lag fills column col with LAG(arg, offset, default), or LEAD's.
func (o *OverGeneral) lag(c *OverCall, v *ogView, lo int, outs []types.Row, col int) error {
	for k := range outs {
		at := int64(lo+k) - c.Offset
		if c.Func == OverLead {
			at = int64(lo+k) + c.Offset
		}
		var res types.Value
		var err error
		switch {
		case at >= 0 && at < int64(v.len()):
			r, rerr := v.row(int(at))
			if rerr != nil {
				return rerr
			}
			res, err = c.Arg.Eval(r)
		case c.Default != nil:
			res, err = c.Default.Eval(outs[k][:col])
		default:
			res = types.NullValue
		}
		if err != nil {
			return err
		}
		outs[k][col] = res
	}
	return nil
}

// sizeValues fills column col with PERCENT_RANK, CUME_DIST or NTILE,
// which read the partition's row count (v.len(): the whole partition).
func (o *OverGeneral) sizeValues(c *OverCall, v *ogView, lo int, outs []types.Row, col int) {
	n := int64(v.len())
	for k := range outs {
		j := lo + k
		switch c.Func {
		case OverPercentRank:
			pr := 0.0
			if n > 1 {
				pr = float64(v.peerStart(j)) / float64(n-1)
			}
			outs[k][col] = types.NewDouble(pr)
		case OverCumeDist:
			outs[k][col] = types.NewDouble(float64(v.peerEnd(j)+1) / float64(n))
		default:
			outs[k][col] = types.NewBigInt(ntile(int64(j), n, c.Offset))
		}
	}
}

// ntile is the 1-based bucket of 0-based position j of n rows split into
// b buckets whose sizes differ by at most one, the larger ones first (as
// PostgreSQL and SQLite split them).
func ntile(j, n, b int64) int64 {
	q, r := n/b, n%b
	if j < r*(q+1) {
		return j/(q+1) + 1
	}
	return r + (j-r*(q+1))/q + 1
}

// frameValue fills column col with FIRST_VALUE / LAST_VALUE / NTH_VALUE
// of each row's frame.
func (o *OverGeneral) frameValue(c *OverCall, v *ogView, lo int, outs []types.Row, col int) error {
	for k := range outs {
		s, e, err := o.frameOf(c, v, lo+k)
		if err != nil {
			return err
		}
		if s > e {
			outs[k][col] = types.NullValue // an empty frame
			continue
		}
		at := s
		switch c.Func {
		case OverLastValue:
			at = e
		case OverNthValue:
			if int64(e-s) < c.Offset-1 {
				outs[k][col] = types.NullValue // the frame has fewer rows
				continue
			}
			at = s + int(c.Offset-1)
		}
		r, err := v.row(at)
		if err != nil {
			return err
		}
		if outs[k][col], err = c.Arg.Eval(r); err != nil {
			return err
		}
	}
	return nil
}

// frameAgg fills column col with the aggregate over each row's frame: one
// accumulator slides along (frames start and end at non-decreasing
// positions), adding the rows that enter and retracting those that leave;
// an empty frame (start past end) yields the empty aggregate.
func (o *OverGeneral) frameAgg(c *OverCall, v *ogView, lo int, outs []types.Row, col int) error {
	acc := c.Agg.NewAccumulator()
	step := func(j int, add bool) error {
		r, err := v.row(j)
		if err != nil {
			return err
		}
		x, include, err := c.Agg.Input(r)
		if err != nil || !include {
			return err
		}
		if add {
			return acc.Add(x)
		}
		return acc.Retract(x)
	}
	cs, ce := 0, 0 // the accumulator holds positions [cs, ce)
	for k := range outs {
		s, e, err := o.frameOf(c, v, lo+k)
		if err != nil {
			return err
		}
		if k == 0 || s >= ce {
			// the first frame, or one past the accumulated rows (frames
			// that start after the current row may skip rows)
			acc, cs, ce = c.Agg.NewAccumulator(), s, s
		}
		for ; ce <= e; ce++ {
			if err := step(ce, true); err != nil {
				return err
			}
		}
		for ; cs < s; cs++ {
			if err := step(cs, false); err != nil {
				return err
			}
		}
		outs[k][col] = acc.Result()
	}
	return nil
}
