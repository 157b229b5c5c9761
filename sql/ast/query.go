package ast

// Query is a set expression with optional WITH (common table
// expressions, visible in the body and in later CTEs) and ORDER BY /
// LIMIT / OFFSET.
type Query struct {
	At      Pos
	With    []CTE
	Body    SetExpr
	OrderBy []OrderItem
	Limit   Expr
	Offset  Expr
}

// SetExpr is a query body: *Select, *SetOp, *Values or a parenthesised
// *Query.
type SetExpr interface {
	Node
	setExprNode()
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

// Set operation kinds.
const (
	Union SetOpKind = iota
	Intersect
	Except
)

// String returns the SQL keyword.
func (k SetOpKind) String() string { return [...]string{"UNION", "INTERSECT", "EXCEPT"}[k] }

// SetOp combines two query bodies. All is the bag (ALL) variant.
type SetOp struct {
	At          Pos
	Op          SetOpKind
	All         bool
	Left, Right SetExpr
}

// Select is one SELECT block. From is nil without FROM; comma-separated
// FROM items become cross joins. DistinctOn holds the keys of SELECT
// DISTINCT ON (...) (Distinct is then false).
type Select struct {
	At         Pos
	Distinct   bool
	DistinctOn []Expr
	Items      []SelectItem
	From       TableExpr
	Where      Expr
	GroupBy    []Expr
	Having     Expr
	// Windows are the WINDOW clause's named windows, in order.
	Windows []NamedWindow
	// EmitOnClose is RisingWave's EMIT ON WINDOW CLOSE, written at EmitAt:
	// a window aggregate emits each window once, when the watermark
	// passes its end, even over an updating input.
	EmitOnClose bool
	EmitAt      Pos
}

// NamedWindow is one `name AS (spec)` of a WINDOW clause.
type NamedWindow struct {
	At   Pos
	Name string
	Spec *WindowSpec
}

// SelectItem is a projection: an expression with an optional alias, or a
// star ("*" or "t.*") when Star is set.
type SelectItem struct {
	At    Pos
	Expr  Expr
	Alias string
	Star  bool
	Table string // qualifier of t.*
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	At         Pos
	Expr       Expr
	Desc       bool
	NullsFirst *bool // nil: default (NULLS FIRST for ASC, LAST for DESC)
}

// TableExpr is an item of FROM.
type TableExpr interface {
	Node
	tableNode()
}

// TableName references a table, view or common table expression.
// Columns renames its first columns (FROM t AS x(a, b)). AsOf, when set,
// is a temporal join's FOR SYSTEM_TIME AS OF time (the version of the
// table valid at the other side's row time).
type TableName struct {
	At      Pos
	Name    string
	Alias   string
	Columns []string
	AsOf    Expr
}

// DerivedTable is a subquery (or VALUES) in FROM; Columns renames its
// first columns: (VALUES (1, 'a')) AS t(a, b).
type DerivedTable struct {
	At      Pos
	Query   *Query
	Alias   string
	Columns []string
}

// JoinKind is the join type.
type JoinKind uint8

// Join kinds.
const (
	CrossJoin JoinKind = iota
	InnerJoin
	LeftJoin
	RightJoin
	FullJoin
)

// String returns the SQL spelling.
func (k JoinKind) String() string {
	return [...]string{"CROSS JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}[k]
}

// Join is "Left kind JOIN Right ON On" (or USING, or NATURAL: USING the
// column names both sides have).
type Join struct {
	At          Pos
	Kind        JoinKind
	Left, Right TableExpr
	On          Expr
	Using       []string
	Natural     bool
}

// WindowTable is a windowing table-valued function in FROM:
// Flink's TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) and RisingWave's
// TUMBLE(t, ts, size), likewise HOP (slide, size), CUMULATE (step, size) and
// SESSION (gap, optional PARTITION BY keys). It adds window_start and
// window_end (and window_time) columns to the input.
type WindowTable struct {
	At          Pos
	Func        string // TUMBLE, HOP, CUMULATE or SESSION
	Input       TableExpr
	TimeCol     *ColumnRef
	Args        []Expr
	PartitionBy []Expr
	Alias       string
}

// Unnest is UNNEST(array) [WITH ORDINALITY] [AS alias [(columns)]] in
// FROM: one row per element (and its 1-based position), joined to each
// row of the FROM items before it (CROSS JOIN UNNEST(t.a), or a comma).
type Unnest struct {
	At         Pos
	Arg        Expr
	Ordinality bool
	Alias      string
	Columns    []string
}

// Position implementations.
func (q *Query) Position() Pos        { return q.At }
func (t *Unnest) Position() Pos       { return t.At }
func (s *SetOp) Position() Pos        { return s.At }
func (s *Select) Position() Pos       { return s.At }
func (t *TableName) Position() Pos    { return t.At }
func (t *DerivedTable) Position() Pos { return t.At }
func (t *Join) Position() Pos         { return t.At }
func (t *WindowTable) Position() Pos  { return t.At }

func (*Query) setExprNode()      {}
func (*SetOp) setExprNode()      {}
func (*Select) setExprNode()     {}
func (*TableName) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*Join) tableNode()         {}
func (*WindowTable) tableNode()  {}
func (*Unnest) tableNode()       {}
