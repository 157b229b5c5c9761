package ast

// GroupingKind says how a GroupingSet element of GROUP BY expands into
// grouping sets.
type GroupingKind uint8

// Grouping element kinds.
const (
	// GroupingSets is GROUPING SETS (...): each item is one set, or (a
	// single nested ROLLUP, CUBE or GROUPING SETS) the sets it expands to.
	GroupingSets GroupingKind = iota
	// Rollup is ROLLUP (e1, e2, ...): (e1, e2, ...), (e1, ...), ..., ().
	Rollup
	// Cube is CUBE (e1, e2, ...): every subset of the items.
	Cube
)

// String returns the SQL keyword.
func (k GroupingKind) String() string {
	return [...]string{"GROUPING SETS", "ROLLUP", "CUBE"}[k]
}

// GroupingSet is a grouping element of GROUP BY (PostgreSQL and Flink):
// ROLLUP, CUBE or GROUPING SETS. Each item is a list of expressions: for
// ROLLUP and CUBE one unit (a column, or a parenthesised list rolled up
// together), for GROUPING SETS one set (empty for "()"). "GROUP BY ()" is
// GROUPING SETS (()). It appears only in Select.GroupBy.
type GroupingSet struct {
	At    Pos
	Kind  GroupingKind
	Items [][]Expr
}

// Position implements Node.
func (e *GroupingSet) Position() Pos { return e.At }

func (*GroupingSet) exprNode() {}

// groupingSet renders "ROLLUP(a, (b, c))", "GROUPING SETS ((a, b), a, ())".
func (p *printer) groupingSet(e *GroupingSet) {
	if e.Kind == GroupingSets {
		p.WriteString("GROUPING SETS (")
	} else {
		p.f("%s(", e.Kind)
	}
	p.list(len(e.Items), func(i int) {
		if it := e.Items[i]; len(it) == 1 {
			p.expr(it[0])
		} else {
			p.WriteString("(")
			p.exprs(it)
			p.WriteString(")")
		}
	})
	p.WriteString(")")
}
