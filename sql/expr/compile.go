package expr

import (
	"errors"
	"maps"
	"strconv"

	"clink/sql/ast"
	"clink/sql/types"
)

// Expr is a compiled scalar expression.
type Expr interface {
	// Type is the static result type (types.Null for a bare NULL).
	Type() types.Type
	// Eval computes the value for one input row.
	Eval(row types.Row) (types.Value, error)
}

// evalFunc computes a value from a row.
type evalFunc func(types.Row) (types.Value, error)

// node is the one Expr implementation: a result type and a closure.
type node struct {
	typ  types.Type
	eval evalFunc
	// konst is set when the node is a constant (literal or folded).
	konst *types.Value
	// col is set when the node reads a column (it cannot fail).
	col bool
}

func (n *node) Type() types.Type                      { return n.typ }
func (n *node) Eval(r types.Row) (types.Value, error) { return n.eval(r) }

func constNode(v types.Value, t types.Type) *node {
	return &node{typ: t, konst: &v, eval: func(types.Row) (types.Value, error) { return v, nil }}
}

// Compiler compiles expressions against a schema.
type Compiler struct {
	Schema *Schema
	// Substitutes maps the canonical rendering (ast.String) of an
	// expression to the schema column that already holds its value. The
	// planner uses it for aggregate calls, window function calls and
	// GROUP BY expressions after an aggregation.
	Substitutes map[string]int
	rendered    map[ast.Expr]string // render's memo
}

// Compile compiles e against schema s.
func Compile(e ast.Expr, s *Schema) (Expr, error) {
	return (&Compiler{Schema: s}).Compile(e)
}

// Compile compiles e. Errors are *ast.Error values with e's positions.
func (c *Compiler) Compile(e ast.Expr) (Expr, error) {
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// CompilePredicate compiles a WHERE/HAVING/ON condition, which must be
// BOOLEAN.
func (c *Compiler) CompilePredicate(e ast.Expr) (Expr, error) {
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	if n.typ.Kind != types.KindBool && n.typ.Kind != types.KindNull {
		return nil, ast.Errorf(e.Position(), "condition must be BOOLEAN, got %s", n.typ)
	}
	return n, nil
}

// render is ast.String(e), from one rendering of the tree e is part of.
func (c *Compiler) render(e ast.Expr) string {
	if s, ok := c.rendered[e]; ok {
		return s
	}
	if c.rendered == nil {
		c.rendered = map[ast.Expr]string{}
	}
	maps.Copy(c.rendered, ast.Renderings(e))
	return c.rendered[e]
}

func (c *Compiler) compile(e ast.Expr) (*node, error) {
	if len(c.Substitutes) > 0 {
		if idx, ok := c.Substitutes[c.render(e)]; ok && idx >= 0 && idx < len(c.Schema.Cols) {
			return c.column(idx), nil
		}
	}
	switch e := e.(type) {
	case *ast.Literal:
		return literal(e)
	case *ast.ColumnRef:
		idx, err := c.Schema.Resolve(e)
		if err != nil {
			return nil, err
		}
		return c.column(idx), nil
	case *ast.Unary:
		return c.unary(e)
	case *ast.Binary:
		return c.binary(e)
	case *ast.IsNull:
		return c.isNull(e)
	case *ast.IsBool:
		return c.isBool(e)
	case *ast.Between:
		return c.between(e)
	case *ast.InList:
		return c.inList(e)
	case *ast.Like:
		return c.like(e)
	case *ast.Case:
		return c.caseExpr(e)
	case *ast.Cast:
		return c.cast(e)
	case *ast.Extract:
		return c.extract(e)
	case *ast.FuncCall:
		return c.call(e)
	case *ast.Index:
		return c.index(e)
	case *ast.ArrayLit:
		return c.arrayLit(e)
	case *ast.InQuery, *ast.Exists, *ast.Subquery:
		return nil, ast.Errorf(e.Position(), "subquery not supported in this position")
	}
	return nil, ast.Errorf(e.Position(), "unsupported expression %s", ast.String(e))
}

func (c *Compiler) column(idx int) *node {
	return &node{typ: c.Schema.Cols[idx].Type, col: true, eval: func(r types.Row) (types.Value, error) {
		if idx >= len(r) {
			return types.NullValue, nil
		}
		return r[idx], nil
	}}
}

func literal(e *ast.Literal) (*node, error) {
	switch e.Kind {
	case ast.LitNull:
		return constNode(types.NullValue, types.Null), nil
	case ast.LitParam:
		if e.Params == nil {
			return nil, ast.Errorf(e.At, "there is no parameter $%s (parameters are for prepared statements)", e.Val)
		}
		return constNode(types.NullValue, types.Null), nil // planned untyped: its uses give its type
	case ast.LitBool:
		return constNode(types.NewBool(e.Val == "true"), types.Bool), nil
	case ast.LitString:
		return constNode(types.NewVarchar(e.Val), types.Varchar), nil
	case ast.LitInt:
		i, err := strconv.ParseInt(e.Val, 10, 64)
		if err != nil {
			// 19 digits or more: no DECIMAL(18) holds it either.
			return nil, ast.Errorf(e.At, "integer literal %s is out of range for BIGINT", e.Val)
		}
		return constNode(types.NewBigInt(i), types.BigInt), nil
	case ast.LitDecimal:
		return decimalLiteral(e)
	case ast.LitFloat:
		f, err := strconv.ParseFloat(e.Val, 64)
		if err != nil {
			return nil, ast.Errorf(e.At, "invalid number %s", e.Val)
		}
		return constNode(types.NewDouble(f), types.Double), nil
	case ast.LitTimestamp:
		ms, err := types.ParseTimestamp(e.Val)
		if err != nil {
			return nil, ast.Errorf(e.At, "%v", err)
		}
		return constNode(types.NewTimestamp(ms), types.Timestamp), nil
	case ast.LitInterval:
		ms, err := IntervalMillis(e.Val, e.Unit)
		if err != nil {
			return nil, ast.Errorf(e.At, "%v", err)
		}
		return constNode(types.NewInterval(ms), types.Interval), nil
	}
	return nil, ast.Errorf(e.At, "unsupported literal")
}

// decimalLiteral is a DECIMAL of the literal's written scale (1.50 is
// DECIMAL(18,2)); one needing more than 18 digits is an error, not a
// rounding or a DOUBLE.
func decimalLiteral(e *ast.Literal) (*node, error) {
	u, s, err := types.ParseDecimal(e.Val)
	if err != nil && !errors.Is(err, types.ErrOverflow) && !errors.Is(err, types.ErrTooManyDigits) {
		return nil, ast.Errorf(e.At, "invalid number %s", e.Val)
	}
	if err != nil {
		return nil, ast.Errorf(e.At, "decimal literal %s has more digits than DECIMAL's %d: write %se0 for a DOUBLE", e.Val, types.MaxDecimalPrecision, e.Val)
	}
	return constNode(types.NewDecimal(u, s), types.Decimal(types.MaxDecimalPrecision, s)), nil
}

var unitMillis = map[string]int64{"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000, "DAY": 86400000}

// IntervalMillis converts an interval literal's quantity and unit to
// milliseconds; fractional quantities are allowed ('1.5' SECOND).
func IntervalMillis(qty, unit string) (int64, error) {
	m, ok := unitMillis[unit]
	if !ok {
		return 0, &strconvError{"unknown interval unit " + unit}
	}
	u, s, err := types.ParseDecimal(qty)
	if err != nil {
		return 0, &strconvError{"invalid interval quantity " + strconv.Quote(qty)}
	}
	ms, err := types.Rescale(u*m, s, 0)
	if err != nil || (u != 0 && (u*m)/m != u) {
		return 0, &strconvError{"interval out of range"}
	}
	return ms, nil
}

type strconvError struct{ msg string }

func (e *strconvError) Error() string { return e.msg }
