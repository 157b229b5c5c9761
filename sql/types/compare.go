package types

import (
	"cmp"
	"math"
	"math/big"
	"strings"
)

// class groups kinds that compare with each other.
func (k Kind) class() int {
	switch k {
	case KindNull:
		return 0
	case KindBool:
		return 1
	case KindInt, KindBigInt, KindDouble, KindDecimal:
		return 2
	case KindVarchar:
		return 3
	case KindTimestamp:
		return 4
	case KindInterval:
		return 5
	case KindArray:
		return 6
	}
	return 7
}

// Compare orders a and b with SQL semantics: ok is false when either is NULL
// (the comparison is UNKNOWN) or the kinds are not comparable. Numbers of
// different kinds compare by value (INT vs DECIMAL exactly, anything vs
// DOUBLE in float64). NaN sorts above every other double, as in PostgreSQL.
func Compare(a, b Value) (c int, ok bool) {
	if a.kind == KindNull || b.kind == KindNull || a.kind.class() != b.kind.class() {
		return 0, false
	}
	return compareSameClass(a, b), true
}

// CompareTotal is a total order over all values for sorting and ordered
// state: NULL first, then by kind class (bool, numbers, strings,
// timestamps, intervals), then by value.
func CompareTotal(a, b Value) int {
	ca, cb := a.kind.class(), b.kind.class()
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	if ca == 0 {
		return 0
	}
	return compareSameClass(a, b)
}

// Equal reports whether a and b are the same value for grouping purposes:
// NULL equals NULL, numbers compare by value across kinds.
func Equal(a, b Value) bool { return CompareTotal(a, b) == 0 }

// CompareRows compares rows column by column with CompareTotal.
func CompareRows(a, b Row) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := CompareTotal(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareSameClass(a, b Value) int {
	switch a.kind.class() {
	case 1, 4, 5:
		return cmp.Compare(a.i, b.i)
	case 3:
		return strings.Compare(a.s, b.s)
	case 2:
		return compareNumbers(a, b)
	case 6:
		return compareArrays(a, b)
	}
	return 0
}

func compareNumbers(a, b Value) int {
	if a.kind == KindDouble || b.kind == KindDouble {
		fa, _ := a.AsFloat()
		fb, _ := b.AsFloat()
		return compareFloat(fa, fb)
	}
	sa, sb := a.decScale(), b.decScale()
	if sa == sb {
		return cmp.Compare(a.i, b.i)
	}
	return compareScaled(a.i, sa, b.i, sb)
}

// decScale is the decimal scale of an exact number (0 for integers).
func (v Value) decScale() uint8 {
	if v.kind == KindDecimal {
		return v.scale
	}
	return 0
}

func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// compareScaled compares a*10^-sa with b*10^-sb exactly.
func compareScaled(a int64, sa uint8, b int64, sb uint8) int {
	x, y := big.NewInt(a), big.NewInt(b)
	if sa < sb {
		x.Mul(x, big.NewInt(Pow10(sb-sa)))
	} else {
		y.Mul(y, big.NewInt(Pow10(sa-sb)))
	}
	return x.Cmp(y)
}
