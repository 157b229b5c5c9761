package ast

import "clink/sql/types"

// Node is any syntax tree node.
type Node interface {
	// Position is where the node starts in the statement text.
	Position() Pos
}

// Expr is a scalar expression node.
type Expr interface {
	Node
	exprNode()
}

// LitKind says which kind of literal a Literal is.
type LitKind uint8

// Literal kinds.
const (
	LitNull LitKind = iota
	LitBool
	LitInt       // integer literal (BIGINT)
	LitDecimal   // literal with a decimal point (DECIMAL)
	LitFloat     // literal with an exponent (DOUBLE)
	LitString    // 'text'
	LitTimestamp // TIMESTAMP '2015-07-15 00:00:00'
	LitInterval  // INTERVAL '5' SECOND; Val is the quantity, Unit the unit
	LitParam     // $1 of a prepared statement; Val is the number (parser.ParseParams)
)

// Literal is a constant as written. Val holds the literal's text (without
// quotes for strings; "true"/"false" for booleans).
type Literal struct {
	At   Pos
	Kind LitKind
	Val  string
	Unit string // for LitInterval: SECOND, MINUTE, HOUR, DAY, MILLISECOND (and plurals normalised)
	// Params, for a LitParam, collects the parameter's inferred type; nil
	// outside a statement parsed for preparing (a $1 there is an error).
	Params *Params
}

// ColumnRef names a column, optionally qualified by a table or alias.
type ColumnRef struct {
	At    Pos
	Table string
	Name  string
}

// Unary is a prefix operator: "-", "+" or "NOT".
type Unary struct {
	At Pos
	Op string
	X  Expr
}

// Binary is an infix operator: OR AND = <> < <= > >= + - * / % ||.
type Binary struct {
	At   Pos // position of the operator
	Op   string
	L, R Expr
}

// IsNull is "X IS [NOT] NULL".
type IsNull struct {
	At  Pos
	X   Expr
	Not bool
}

// IsBool is "X IS [NOT] TRUE|FALSE".
type IsBool struct {
	At    Pos
	X     Expr
	Not   bool
	Value bool
}

// Between is "X [NOT] BETWEEN Lo AND Hi".
type Between struct {
	At     Pos
	X      Expr
	Lo, Hi Expr
	Not    bool
}

// InList is "X [NOT] IN (e1, e2, ...)".
type InList struct {
	At   Pos
	X    Expr
	List []Expr
	Not  bool
}

// InQuery is "X [NOT] IN (SELECT ...)".
type InQuery struct {
	At    Pos
	X     Expr
	Query *Query
	Not   bool
}

// Exists is "EXISTS (SELECT ...)"; NOT EXISTS is a Unary NOT over it.
type Exists struct {
	At    Pos
	Query *Query
}

// Subquery is a scalar subquery "(SELECT ...)" used as a value.
type Subquery struct {
	At    Pos
	Query *Query
}

// Like is "X [NOT] LIKE|ILIKE Pattern".
type Like struct {
	At      Pos
	X       Expr
	Pattern Expr
	Not     bool
	ILike   bool
}

// When is one "WHEN Cond THEN Result" arm of a CASE.
type When struct {
	Cond, Result Expr
}

// Case is "CASE [Operand] WHEN ... THEN ... [ELSE ...] END".
type Case struct {
	At      Pos
	Operand Expr // nil for a searched CASE
	Whens   []When
	Else    Expr // nil: ELSE NULL
}

// Cast is "CAST(X AS Type)" or "X::Type".
type Cast struct {
	At   Pos
	X    Expr
	Type types.Type
}

// Extract is "EXTRACT(Field FROM X)"; Field is upper case (YEAR, HOUR, ...).
type Extract struct {
	At    Pos
	Field string
	X     Expr
}

// Index is "X[Index]" (1-based), e.g. "(regexp_match(url, p))[2]".
type Index struct {
	At    Pos
	X     Expr
	Index Expr
}

// ArrayLit is the array constructor "ARRAY[e1, e2, ...]".
type ArrayLit struct {
	At    Pos
	Elems []Expr
}

// FuncCall is a function or aggregate call. Name is upper case. Star is
// COUNT(*). OrderBy is an ordered aggregate's "agg(x ORDER BY y)" (also
// written "WITHIN GROUP (ORDER BY y)"). Filter is "FILTER (WHERE ...)".
// Over is a window specification.
type FuncCall struct {
	At       Pos
	Name     string
	Args     []Expr
	Star     bool
	Distinct bool
	OrderBy  []OrderItem
	Filter   Expr
	Over     *WindowSpec
	// OnNull is JSON_OBJECT's and JSON_ARRAY's NULL ON NULL ("NULL") or
	// ABSENT ON NULL ("ABSENT"), "" when not written; JSON_OBJECT's Args
	// are its keys and values in turn.
	OnNull string
}

// WindowSpec is the "OVER (PARTITION BY ... ORDER BY ... frame)" clause.
type WindowSpec struct {
	At Pos
	// Ref names a WINDOW clause's window this one builds on (`OVER w`,
	// `OVER (w ROWS ...)`); the planner resolves it and clears it.
	Ref         string
	PartitionBy []Expr
	OrderBy     []OrderItem
	Frame       *Frame
}

// Frame is a ROWS or RANGE window frame.
type Frame struct {
	Rows       bool // ROWS; false means RANGE
	Start, End FrameBound
}

// BoundKind is the kind of a frame bound.
type BoundKind uint8

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset is set for Preceding and
// Following ("10 PRECEDING", "INTERVAL '1' HOUR PRECEDING").
type FrameBound struct {
	Kind   BoundKind
	Offset Expr
}

// Position implementations.
func (e *Literal) Position() Pos   { return e.At }
func (e *ColumnRef) Position() Pos { return e.At }
func (e *Unary) Position() Pos     { return e.At }
func (e *Binary) Position() Pos    { return e.At }
func (e *IsNull) Position() Pos    { return e.At }
func (e *IsBool) Position() Pos    { return e.At }
func (e *Between) Position() Pos   { return e.At }
func (e *InList) Position() Pos    { return e.At }
func (e *InQuery) Position() Pos   { return e.At }
func (e *Exists) Position() Pos    { return e.At }
func (e *Subquery) Position() Pos  { return e.At }
func (e *Like) Position() Pos      { return e.At }
func (e *Case) Position() Pos      { return e.At }
func (e *Cast) Position() Pos      { return e.At }
func (e *Extract) Position() Pos   { return e.At }
func (e *Index) Position() Pos     { return e.At }
func (e *FuncCall) Position() Pos  { return e.At }
func (e *ArrayLit) Position() Pos  { return e.At }

func (*Literal) exprNode()   {}
func (*ColumnRef) exprNode() {}
func (*Unary) exprNode()     {}
func (*Binary) exprNode()    {}
func (*IsNull) exprNode()    {}
func (*IsBool) exprNode()    {}
func (*Between) exprNode()   {}
func (*InList) exprNode()    {}
func (*InQuery) exprNode()   {}
func (*Exists) exprNode()    {}
func (*Subquery) exprNode()  {}
func (*Like) exprNode()      {}
func (*Case) exprNode()      {}
func (*Cast) exprNode()      {}
func (*Extract) exprNode()   {}
func (*Index) exprNode()     {}
func (*FuncCall) exprNode()  {}
func (*ArrayLit) exprNode()  {}
