package ops

import (
	"fmt"
	"math"
	"sort"
)

// RANGE frames with an offset on the general path (`RANGE BETWEEN
// INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW`, `RANGE BETWEEN 5
// PRECEDING AND 2 FOLLOWING`): the ORDER BY is one TIMESTAMP or integer
// key, and a row's frame holds the rows whose key lies within the offsets
// of its own (a NULL key's frame is its NULL peers; a non-NULL key's frame
// leaves the NULLs out, as in PostgreSQL and SQLite). Frames are found by
// galloping search over the sorted partition from the row outward (their
// bounds never decrease from one row to the next), so a frame reads the
// pages it reaches, not the whole partition.

// keyAt returns the ORDER BY key at position j of v (null for NULL),
// caching it on the view.
func (o *OverGeneral) keyAt(v *ogView, j int) (k int64, null bool, err error) {
	l, ok := v.local(j)
	if !ok {
		return 0, false, errOgMiss
	}
	if v.kset == nil {
		v.kset, v.kv = make([]uint8, len(v.slot)), make([]int64, len(v.slot))
	}
	switch v.kset[l] {
	case 1:
		return 0, true, nil
	case 2:
		return v.kv[l], false, nil
	}
	r, err := v.row(j)
	if err != nil {
		return 0, false, err
	}
	x, err := o.cfg.Order[0].Expr.Eval(r)
	if err != nil {
		return 0, false, fmt.Errorf("order key: %w", err)
	}
	if x.IsNull() {
		v.kset[l] = 1
		return 0, true, nil
	}
	v.kset[l], v.kv[l] = 2, x.Int()
	return v.kv[l], false, nil
}

// search is sort.Search over [lo, hi) with a fallible predicate.
func search(lo, hi int, f func(int) (bool, error)) (int, error) {
	var err error
	i := lo + sort.Search(hi-lo, func(i int) bool {
		if err != nil {
			return true
		}
		ok, e := f(lo + i)
		if e != nil {
			err = e
			return true
		}
		return ok
	})
	return i, err
}

// gallop is search over [lo, hi) that probes outward from at: first at,
// then positions at doubling distances, then a binary search between the
// last two, so it reads rows near at (in a paged partition, the pages
// near it) unless the answer lies far away.
func gallop(lo, hi, at int, f func(int) (bool, error)) (int, error) {
	if lo >= hi {
		return lo, nil
	}
	at = min(max(at, lo), hi-1)
	ok, err := f(at)
	if err != nil {
		return 0, err
	}
	for step := 1; ; step *= 2 {
		next := at + step
		if ok {
			next = at - step
		}
		switch {
		case ok && next <= lo:
			return search(lo, at, f)
		case !ok && next >= hi:
			return search(at+1, hi, f)
		}
		nok, err := f(next)
		if err != nil {
			return 0, err
		}
		switch {
		case ok && !nok:
			return search(next+1, at, f)
		case !ok && nok:
			return search(at+1, next, f)
		}
		at = next
	}
}

// plusSat and minusSat add and subtract a frame offset (|b| <
// MaxInt64) without wrapping around.
func plusSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

func minusSat(a, b int64) int64 { return plusSat(a, -b) }

// valueFrameOf returns the first and last positions of j's value frame.
func (o *OverGeneral) valueFrameOf(c *OverCall, v *ogView, j int) (s, e int, err error) {
	n := v.len()
	cur, null, err := o.keyAt(v, j)
	if err != nil {
		return 0, 0, err
	}
	s, e = 0, n-1
	if null {
		if !c.Frame.Unbounded {
			s = v.peerStart(j)
		}
		if !c.Frame.EndUnbounded {
			e = v.peerEnd(j)
		}
		return s, e, nil
	}
	// the non-NULL positions are [nb, ne)
	nb, ne := 0, n
	isNull := func(i int) (bool, error) { _, nl, err := o.keyAt(v, i); return nl, err }
	if o.cfg.Order[0].NullsFirst {
		if nb, err = gallop(0, j, j-1, func(i int) (bool, error) { nl, err := isNull(i); return !nl, err }); err != nil {
			return 0, 0, err
		}
	} else if ne, err = gallop(j, n, j, isNull); err != nil {
		return 0, 0, err
	}
	desc := o.cfg.Order[0].Desc
	// before reports whether key x lies before the frame's start, after
	// whether it lies past its end (in the window's order).
	before := func(x int64) bool {
		if desc {
			return x > plusSat(cur, c.Frame.N)
		}
		return x < minusSat(cur, c.Frame.N)
	}
	after := func(x int64) bool {
		if desc {
			return x < minusSat(cur, c.Frame.End)
		}
		return x > plusSat(cur, c.Frame.End)
	}
	if !c.Frame.Unbounded {
		s, err = gallop(nb, ne, j, func(i int) (bool, error) {
			x, _, err := o.keyAt(v, i)
			return !before(x), err
		})
		if err != nil {
			return 0, 0, err
		}
	}
	if !c.Frame.EndUnbounded {
		end, err := gallop(nb, ne, j, func(i int) (bool, error) {
			x, _, err := o.keyAt(v, i)
			return after(x), err
		})
		if err != nil {
			return 0, 0, err
		}
		e = end - 1
	}
	return s, e, nil
}

// valueReach returns the positions of x whose value frame under c holds
// position p: frames' starts and ends never decrease, so they are the
// rows from the first whose frame ends at or after p to the last whose
// frame starts at or before p (the caller adds p itself, whose frame may
// leave it out).
func (o *OverGeneral) valueReach(c *OverCall, x *ogView, p int) (lo, hi int, err error) {
	n := x.len()
	lo, err = gallop(0, n, p, func(j int) (bool, error) {
		_, e, err := o.frameOf(c, x, j)
		return e >= p, err
	})
	if err != nil {
		return 0, 0, err
	}
	end, err := gallop(0, n, p, func(j int) (bool, error) {
		s, _, err := o.frameOf(c, x, j)
		return s > p, err
	})
	return lo, end - 1, err
}
