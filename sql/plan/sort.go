package plan

import (
	"sort"

	"clink/sql/types"
)

func sortRows(rows []types.Row, keys []SortKey) {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, b := rows[i][k.Col], rows[j][k.Col]
			if a.IsNull() != b.IsNull() {
				return a.IsNull() == k.NullsFirst
			}
			c := types.CompareTotal(a, b)
			if c == 0 {
				continue
			}
			if k.Desc {
				return c > 0
			}
			return c < 0
		}
		return false
	})
}
