package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
)

// GROUPING(a, b, ...) (Flink also GROUPING_ID) is a bitmask over its
// arguments, the leftmost the most significant bit: a bit is set when
// that argument is not grouped in the row's grouping set (PostgreSQL).
// The planner computes it per set in the Expand stage, as a constant the
// aggregate groups by (it is a function of the set).

// maxGroupingArgs is PostgreSQL's bound: the mask is an INT.
const maxGroupingArgs = 31

// isGroupingCall reports a GROUPING() or GROUPING_ID() call.
func isGroupingCall(f *ast.FuncCall) bool {
	name := strings.ToUpper(f.Name)
	return f.Over == nil && (name == "GROUPING" || name == "GROUPING_ID")
}

// groupingCalls returns the distinct GROUPING calls of the SELECT list and
// HAVING, outside aggregate calls, in order.
func groupingCalls(s *ast.Select) []*ast.FuncCall {
	seen := map[string]bool{}
	var out []*ast.FuncCall
	look := func(e ast.Expr) {
		walk(e, func(x ast.Expr) bool {
			f, ok := x.(*ast.FuncCall)
			if !ok || isAggregate(f) {
				return !ok
			}
			if isGroupingCall(f) {
				if k := ast.String(f); !seen[k] {
					seen[k] = true
					out = append(out, f)
				}
				return false
			}
			return true
		})
	}
	for _, it := range s.Items {
		look(it.Expr)
	}
	look(s.Having)
	return out
}

// groupingMasks computes each call's value in each set: masks[call][set].
func groupingMasks(calls []*ast.FuncCall, exprs []ast.Expr, members [][]bool, in *expr.Schema) ([][]int64, error) {
	masks := make([][]int64, len(calls))
	for j, call := range calls {
		if len(call.Args) == 0 || call.Star || call.Distinct || call.Filter != nil {
			return nil, errorf(call.At, "%s takes one or more GROUP BY expressions", call.Name)
		}
		if len(call.Args) > maxGroupingArgs {
			return nil, errorf(call.At, "%s takes at most %d arguments", call.Name, maxGroupingArgs)
		}
		idx := make([]int, len(call.Args))
		for i, a := range call.Args {
			k := groupExprIndex(a, exprs, in)
			if k < 0 {
				return nil, errorf(a.Position(), "arguments to %s must be GROUP BY expressions: %s is not one", call.Name, ast.String(a))
			}
			idx[i] = k
		}
		masks[j] = make([]int64, len(members))
		for k, in := range members {
			for i, e := range idx {
				if !in[e] {
					masks[j][k] |= 1 << (len(idx) - 1 - i)
				}
			}
		}
	}
	return masks, nil
}

// groupExprIndex finds a among the group expressions: the same rendering,
// or a column reference to the same input column; -1 if none.
func groupExprIndex(a ast.Expr, exprs []ast.Expr, in *expr.Schema) int {
	for k, e := range exprs {
		if ast.String(e) == ast.String(a) {
			return k
		}
	}
	ra, ok := a.(*ast.ColumnRef)
	if !ok {
		return -1
	}
	ia, err := in.Resolve(ra)
	if err != nil {
		return -1
	}
	for k, e := range exprs {
		if re, ok := e.(*ast.ColumnRef); ok {
			if ie, err := in.Resolve(re); err == nil && ie == ia {
				return k
			}
		}
	}
	return -1
}

// groupingOutsideGroupBy reports a GROUPING call in a SELECT without
// GROUP BY, as a positioned error.
func groupingOutsideGroupBy(s *ast.Select) error {
	if calls := groupingCalls(s); len(calls) > 0 && len(s.GroupBy) == 0 {
		return errorf(calls[0].At, "%s is allowed only with GROUP BY", calls[0].Name)
	}
	return nil
}
