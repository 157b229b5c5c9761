package ast

// CTE is one common table expression of a WITH clause: "name [(cols)] AS
// (query)". It is visible to the query's body and to the CTEs after it
// (WITH RECURSIVE is not supported, so not to itself).
type CTE struct {
	At      Pos
	Name    string
	Columns []string
	Query   *Query
}

// Values is a VALUES list used as a query: each row a list of
// expressions, all rows of one length. Its columns are named column1,
// column2, ... (PostgreSQL).
type Values struct {
	At   Pos
	Rows [][]Expr
}

// Position implementations.
func (c *CTE) Position() Pos    { return c.At }
func (v *Values) Position() Pos { return v.At }

func (*Values) setExprNode() {}

// with renders a WITH clause (nothing when there is none).
func (p *printer) with(ctes []CTE) {
	if len(ctes) == 0 {
		return
	}
	p.WriteString("WITH ")
	p.list(len(ctes), func(i int) {
		c := ctes[i]
		p.WriteString(QuoteIdent(c.Name))
		p.aliasColumns(c.Columns)
		p.WriteString(" AS (")
		p.query(c.Query)
		p.WriteString(")")
	})
	p.WriteString(" ")
}

// values renders a VALUES list.
func (p *printer) values(v *Values) {
	p.WriteString("VALUES ")
	p.list(len(v.Rows), func(i int) {
		p.WriteString("(")
		p.exprs(v.Rows[i])
		p.WriteString(")")
	})
}

// aliasColumns renders a column alias list " (a, b)" (nothing when empty).
func (p *printer) aliasColumns(cols []string) {
	if len(cols) > 0 {
		p.f(" (%s)", identList(cols))
	}
}
