package types

import (
	"cmp"
	"slices"
)

// SortRows sorts rows by CompareRows. When every row starts with an
// integer or NULL (a GROUP BY on an integer key, the common case of a
// large final result), rows sort by that value's 64-bit image first, held
// beside the row so most comparisons touch no row, and by CompareRows
// among equals: 200k rows sort several times faster than by comparing
// rows throughout.
func SortRows(rows []Row) {
	if !intLed(rows) {
		slices.SortFunc(rows, CompareRows)
		return
	}
	type led struct {
		null bool
		v    uint64 // the integer with its sign bit flipped: unsigned order
		row  Row
	}
	ls := make([]led, len(rows))
	for i, r := range rows {
		ls[i] = led{null: r[0].kind == KindNull, v: uint64(r[0].i) ^ (1 << 63), row: r}
		if ls[i].null {
			ls[i].v = 0
		}
	}
	slices.SortFunc(ls, func(a, b led) int {
		switch {
		case a.null != b.null && a.null:
			return -1
		case a.null != b.null:
			return 1
		}
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return CompareRows(a.row[1:], b.row[1:]) // the first values are equal
	})
	for i := range ls {
		rows[i] = ls[i].row
	}
}

// intLed reports whether every row's first value is an integer or NULL.
func intLed(rows []Row) bool {
	for _, r := range rows {
		if len(r) == 0 {
			return false
		}
		if k := r[0].kind; k != KindNull && k != KindInt && k != KindBigInt {
			return false
		}
	}
	return true
}
