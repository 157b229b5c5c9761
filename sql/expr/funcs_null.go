package expr

import (
	"fmt"

	"clink/sql/types"
)

func init() {
	register([]string{"COALESCE", "IFNULL"}, &builtin{1, -1, unifyArgs, func(a []types.Value) (types.Value, error) {
		for _, v := range a {
			if !v.IsNull() {
				return v, nil
			}
		}
		return types.NullValue, nil
	}, true})
	register([]string{"NULLIF"}, &builtin{2, 2, nullifType, func(a []types.Value) (types.Value, error) {
		if c, ok := types.Compare(a[0], a[1]); ok && c == 0 {
			return types.NullValue, nil
		}
		return a[0], nil
	}, true})
	register([]string{"GREATEST"}, &builtin{1, -1, unifyArgs, extreme(1), true})
	register([]string{"LEAST"}, &builtin{1, -1, unifyArgs, extreme(-1), true})
}

func unifyArgs(a []types.Type) (types.Type, error) {
	t := types.Null
	for i, u := range a {
		c, ok := commonType(t, u)
		if !ok {
			return types.Type{}, fmt.Errorf("argument %d: %s is incompatible with %s", i+1, u, t)
		}
		t = c
	}
	return t, nil
}

func nullifType(a []types.Type) (types.Type, error) {
	if !comparable(a[0], a[1]) {
		return types.Type{}, fmt.Errorf("cannot compare %s with %s", a[0], a[1])
	}
	return a[0], nil
}

// extreme returns GREATEST (sign 1) or LEAST (-1), ignoring NULLs as
// PostgreSQL does.
func extreme(sign int) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		best := types.NullValue
		for _, v := range a {
			if v.IsNull() {
				continue
			}
			if c, ok := types.Compare(v, best); best.IsNull() || (ok && c*sign > 0) {
				best = v
			}
		}
		return best, nil
	}
}
