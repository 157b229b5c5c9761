package plan

import (
	"fmt"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/types"
)

// VALUES lists and SELECT without FROM read a constant, bounded source: an
// anonymous values table holding the rows, evaluated when the query is
// planned. It is an ordinary Scan, so it checkpoints its position and a
// restore re-reads only what came after.

// values plans a VALUES list: its columns are column1, column2, ...
// (PostgreSQL), each of the type all its rows' values unify to (INT and
// DOUBLE give DOUBLE; NULLs take any type; a column of NULLs only is
// VARCHAR, PostgreSQL's text).
func (b *binder) values(v *ast.Values) (*Node, error) {
	width := len(v.Rows[0])
	typs := make([]types.Type, width)
	for i := range typs {
		typs[i] = types.Null
	}
	rows := make([]types.Row, len(v.Rows))
	for r, exprs := range v.Rows {
		if len(exprs) != width { // the parser checks this; ASTs built elsewhere may not
			return nil, errorf(exprs[0].Position(), "VALUES lists must all be the same length: row %d has %d, the first row %d", r+1, len(exprs), width)
		}
		row := make(types.Row, width)
		for i, x := range exprs {
			val, t, err := constant(x)
			if err != nil {
				return nil, err
			}
			u, ok := expr.CommonType(typs[i], t)
			if !ok {
				return nil, errorf(x.Position(), "VALUES column %d: types %s and %s cannot be matched", i+1, typs[i], t)
			}
			typs[i], row[i] = u, val
		}
		rows[r] = row
	}
	cols := make([]expr.Column, width)
	for i, t := range typs {
		if t.Kind == types.KindNull {
			t = types.Varchar
		}
		cols[i] = expr.Column{Name: fmt.Sprintf("column%d", i+1), Type: t}
	}
	for r, row := range rows {
		for i, val := range row {
			cast, err := types.Cast(val, cols[i].Type)
			if err != nil {
				return nil, errorf(v.Rows[r][i].Position(), "VALUES column %d: %v", i+1, err)
			}
			row[i] = cast
		}
	}
	return constScan(cols, rows, fmt.Sprintf("VALUES (%d row%s)", len(rows), plural(len(rows)))), nil
}

// oneRow is the input of a SELECT without FROM: one row of no columns.
func oneRow() *Node {
	return constScan(nil, []types.Row{{}}, "one row (SELECT without FROM)")
}

// constant compiles and evaluates a constant expression (no columns).
func constant(x ast.Expr) (types.Value, types.Type, error) {
	e, err := expr.Compile(x, expr.NewSchema())
	if err != nil {
		return types.NullValue, types.Type{}, err
	}
	val, err := e.Eval(nil)
	if err != nil {
		return types.NullValue, types.Type{}, errorf(x.Position(), "%v", err)
	}
	return val, e.Type(), nil
}

// constScan is a Scan of an anonymous bounded values table of rows.
func constScan(cols []expr.Column, rows []types.Row, detail string) *Node {
	t := &connector.Table{Name: "values", Columns: cols, Connector: "values", Bounded: true,
		Options: map[string]string{}, OptionPos: map[string]ast.Pos{}, Values: &connector.ValuesLog{}}
	t.Values.Append(rows...)
	return &Node{Op: OpScan, Schema: t.Schema(""), Table: t, Detail: detail}
}

// renameColumns renames n's first columns (the column list of "AS t(a,
// b)", a CTE or a view); more names than columns is an error at at.
func renameColumns(n *Node, names []string, at ast.Pos, what string) (*Node, error) {
	if len(names) == 0 {
		return n, nil
	}
	if len(names) > len(n.Schema.Cols) {
		return nil, errorf(at, "%s has %d column%s available but %d column names specified", what, len(n.Schema.Cols), plural(len(n.Schema.Cols)), len(names))
	}
	cols := append([]expr.Column(nil), n.Schema.Cols...)
	for i, name := range names {
		cols[i].Name = name
	}
	c := *n
	c.Schema = expr.NewSchema(cols...)
	return &c, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
