package ast

// Delete is "DELETE FROM t [[AS] alias] [WHERE cond]". Where is nil
// without WHERE (every row).
type Delete struct {
	At    Pos
	Table string
	Alias string
	Where Expr
}

// Assignment is one "column = expr" of UPDATE ... SET.
type Assignment struct {
	At     Pos
	Column string
	Value  Expr
}

// Update is "UPDATE t [[AS] alias] SET c = expr, ... [WHERE cond]".
type Update struct {
	At    Pos
	Table string
	Alias string
	Set   []Assignment
	Where Expr
}

// Position implementations.
func (s *Delete) Position() Pos { return s.At }
func (s *Update) Position() Pos { return s.At }

func (*Delete) stmtNode() {}
func (*Update) stmtNode() {}

// dml renders DELETE and UPDATE; false for any other statement.
func (p *printer) dml(s Statement) bool {
	switch s := s.(type) {
	case *Delete:
		p.f("DELETE FROM %s", QuoteIdent(s.Table))
		p.alias(s.Alias)
		p.where(s.Where)
	case *Update:
		p.f("UPDATE %s", QuoteIdent(s.Table))
		p.alias(s.Alias)
		p.WriteString(" SET ")
		p.list(len(s.Set), func(i int) {
			p.f("%s = ", QuoteIdent(s.Set[i].Column))
			p.expr(s.Set[i].Value)
		})
		p.where(s.Where)
	default:
		return false
	}
	return true
}

func (p *printer) where(e Expr) {
	if e != nil {
		p.WriteString(" WHERE ")
		p.expr(e)
	}
}
