package plan

import (
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
)

// GROUP BY ordinals and output aliases, PostgreSQL's rules (its SQL92
// resolution, also inside ROLLUP, CUBE and GROUPING SETS): an integer
// constant is a position in the select list, a bare name that is no input
// column is an output alias; an input column of the same name wins over an
// alias. Either becomes the select item's expression.

// resolveGroupRefs returns s with its GROUP BY ordinals and aliases
// replaced by the select items they name (s itself when there are none).
func resolveGroupRefs(s *ast.Select, in *expr.Schema) (*ast.Select, error) {
	changed := false
	var fix func(es []ast.Expr) ([]ast.Expr, error)
	fix = func(es []ast.Expr) ([]ast.Expr, error) {
		out := make([]ast.Expr, len(es))
		for i, e := range es {
			if g, ok := e.(*ast.GroupingSet); ok {
				c := *g
				c.Items = make([][]ast.Expr, len(g.Items))
				for j, it := range g.Items {
					var err error
					if c.Items[j], err = fix(it); err != nil {
						return nil, err
					}
				}
				out[i] = &c
				continue
			}
			r, err := groupRef(s, in, e)
			if err != nil {
				return nil, err
			}
			changed = changed || r != e
			out[i] = r
		}
		return out, nil
	}
	groupBy, err := fix(s.GroupBy)
	if err != nil || !changed {
		return s, err
	}
	c := *s
	c.GroupBy = groupBy
	return &c, nil
}

// groupRef resolves one GROUP BY expression: the select item an ordinal
// or an output alias names, else e.
func groupRef(s *ast.Select, in *expr.Schema, e ast.Expr) (ast.Expr, error) {
	switch e := e.(type) {
	case *ast.Literal:
		if e.Kind != ast.LitInt {
			if e.Kind == ast.LitNull || e.Kind == ast.LitBool {
				return e, nil
			}
			return nil, errorf(e.At, "non-integer constant in GROUP BY (a number is a select list position)")
		}
		k, err := strconv.Atoi(e.Val)
		if err != nil || k < 1 || k > len(s.Items) {
			return nil, errorf(e.At, "GROUP BY position %s is not in select list (it has %d items)", e.Val, len(s.Items))
		}
		it := s.Items[k-1]
		for _, prev := range s.Items[:k] {
			if prev.Star {
				return nil, errorf(e.At, "GROUP BY position %d: positions after SELECT * are not supported; name the column", k)
			}
		}
		return groupTarget(e.At, "position "+e.Val, it.Expr)
	case *ast.ColumnRef:
		if e.Table != "" {
			return e, nil
		}
		for _, c := range in.Cols {
			if aliasMatches(c.Name, e.Name) {
				return e, nil // an input column wins (an ambiguous one: the compiler says so)
			}
		}
		var found ast.Expr
		for _, it := range s.Items {
			if it.Alias == "" || !aliasMatches(it.Alias, e.Name) {
				continue
			}
			if found != nil && ast.String(found) != ast.String(it.Expr) {
				return nil, errorf(e.At, "GROUP BY %s is ambiguous: several select items are named %s", e.Name, e.Name)
			}
			found = it.Expr
		}
		if found == nil {
			return e, nil // the compiler reports the unknown column
		}
		return groupTarget(e.At, e.Name, found)
	}
	return e, nil
}

// aliasMatches compares a column name or output alias with a GROUP BY
// name as column resolution does: unquoted names were folded to lower case.
func aliasMatches(alias, name string) bool {
	return alias == name || (name == strings.ToLower(name) && strings.EqualFold(alias, name))
}

// groupTarget checks that the select item a GROUP BY reference names can
// be grouped by.
func groupTarget(at ast.Pos, what string, e ast.Expr) (ast.Expr, error) {
	if calls := aggCalls(e, map[string]bool{}, nil); len(calls) > 0 {
		return nil, errorf(at, "GROUP BY %s refers to an aggregate (%s): aggregates are not allowed in GROUP BY", what, ast.String(calls[0]))
	}
	if f, ok := e.(*ast.FuncCall); ok && f.Over != nil {
		return nil, errorf(at, "GROUP BY %s refers to a window function (%s): window functions are not allowed in GROUP BY", what, f.Name)
	}
	return e, nil
}
