package types

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRowsMatchesCompareRows checks the integer-led fast path (and the
// fallback) against a plain sort by CompareRows, NULLs, extremes and ties
// included.
func TestSortRowsMatchesCompareRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	first := func() Value {
		switch rng.IntN(8) {
		case 0:
			return NullValue
		case 1:
			return NewBigInt(math.MinInt64)
		case 2:
			return NewBigInt(math.MaxInt64)
		}
		return NewBigInt(rng.Int64N(20) - 10)
	}
	for _, mixed := range []bool{false, true} {
		rows := make([]Row, 3000)
		for i := range rows {
			rows[i] = Row{first(), NewVarchar(fmt.Sprint(rng.IntN(5))), NewBigInt(rng.Int64N(3))}
			if mixed && i%100 == 0 {
				rows[i][0] = NewVarchar("x") // not integer-led: the fallback
			}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, CompareRows)
		SortRows(rows)
		if got, exp := fmt.Sprint(rows), fmt.Sprint(want); got != exp {
			t.Fatalf("mixed=%v: SortRows differs from sorting by CompareRows", mixed)
		}
	}
}
