package ast

import "strings"

func (p *printer) query(q *Query) {
	p.with(q.With)
	p.setExpr(q.Body)
	if len(q.OrderBy) > 0 {
		p.WriteString(" ORDER BY ")
		p.orderBy(q.OrderBy)
	}
	if q.Limit != nil {
		p.WriteString(" LIMIT ")
		p.expr(q.Limit)
	}
	if q.Offset != nil {
		p.WriteString(" OFFSET ")
		p.expr(q.Offset)
	}
}

func (p *printer) setExpr(s SetExpr) {
	switch s := s.(type) {
	case *Select:
		p.selectBlock(s)
	case *SetOp:
		p.WriteString("(")
		p.setExpr(s.Left)
		p.f(") %s ", s.Op)
		if s.All {
			p.WriteString("ALL ")
		}
		p.WriteString("(")
		p.setExpr(s.Right)
		p.WriteString(")")
	case *Query:
		p.WriteString("(")
		p.query(s)
		p.WriteString(")")
	case *Values:
		p.values(s)
	}
}

func (p *printer) selectBlock(s *Select) {
	p.WriteString("SELECT ")
	if s.Distinct {
		p.WriteString("DISTINCT ")
	}
	if len(s.DistinctOn) > 0 {
		p.WriteString("DISTINCT ON (")
		p.exprs(s.DistinctOn)
		p.WriteString(") ")
	}
	p.list(len(s.Items), func(i int) {
		it := s.Items[i]
		switch {
		case it.Star && it.Table != "":
			p.f("%s.*", QuoteIdent(it.Table))
		case it.Star:
			p.WriteString("*")
		default:
			p.expr(it.Expr)
			if it.Alias != "" {
				p.f(" AS %s", QuoteIdent(it.Alias))
			}
		}
	})
	if s.From != nil {
		p.WriteString(" FROM ")
		p.table(s.From)
	}
	if s.Where != nil {
		p.WriteString(" WHERE ")
		p.expr(s.Where)
	}
	if len(s.GroupBy) > 0 {
		p.WriteString(" GROUP BY ")
		p.exprs(s.GroupBy)
	}
	if s.Having != nil {
		p.WriteString(" HAVING ")
		p.expr(s.Having)
	}
	for i, w := range s.Windows {
		if i == 0 {
			p.WriteString(" WINDOW ")
		} else {
			p.WriteString(", ")
		}
		p.f("%s AS (", QuoteIdent(w.Name))
		p.window(w.Spec)
		p.WriteString(")")
	}
	if s.EmitOnClose {
		p.WriteString(" EMIT ON WINDOW CLOSE")
	}
}

func (p *printer) alias(a string) {
	if a != "" {
		p.f(" AS %s", QuoteIdent(a))
	}
}

func (p *printer) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		p.WriteString(QuoteIdent(t.Name))
		if t.AsOf != nil {
			p.WriteString(" FOR SYSTEM_TIME AS OF ")
			p.expr(t.AsOf)
		}
		p.alias(t.Alias)
		p.aliasColumns(t.Columns)
	case *DerivedTable:
		p.WriteString("(")
		p.query(t.Query)
		p.WriteString(")")
		p.alias(t.Alias)
		p.aliasColumns(t.Columns)
	case *Join:
		p.WriteString("(")
		p.table(t.Left)
		if t.Natural {
			p.WriteString(" NATURAL")
		}
		p.f(" %s ", t.Kind)
		p.table(t.Right)
		if t.On != nil {
			p.WriteString(" ON ")
			p.expr(t.On)
		}
		if len(t.Using) > 0 {
			p.f(" USING (%s)", identList(t.Using))
		}
		p.WriteString(")")
	case *Unnest:
		p.WriteString("UNNEST(")
		p.expr(t.Arg)
		p.WriteString(")")
		if t.Ordinality {
			p.WriteString(" WITH ORDINALITY")
		}
		p.alias(t.Alias)
		p.aliasColumns(t.Columns)
	case *WindowTable:
		p.f("TABLE(%s(TABLE ", t.Func)
		p.table(t.Input)
		if len(t.PartitionBy) > 0 {
			p.WriteString(" PARTITION BY (")
			p.exprs(t.PartitionBy)
			p.WriteString(")")
		}
		p.WriteString(", DESCRIPTOR(")
		p.expr(t.TimeCol)
		p.WriteString("), ")
		p.exprs(t.Args)
		p.WriteString("))")
		p.alias(t.Alias)
	}
}

func identList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func (p *printer) stmt(s Statement) {
	if p.dml(s) {
		return
	}
	switch s := s.(type) {
	case *QueryStmt:
		p.query(s.Query)
	case *CreateTable:
		p.createTable(s)
	case *CreateView:
		p.WriteString("CREATE ")
		if s.Materialized {
			p.WriteString("MATERIALIZED ")
		}
		p.WriteString("VIEW ")
		if s.IfNotExists {
			p.WriteString("IF NOT EXISTS ")
		}
		p.WriteString(QuoteIdent(s.Name))
		p.aliasColumns(s.Columns)
		p.WriteString(" AS ")
		p.query(s.Query)
	case *Insert:
		p.insert(s)
	case *Drop:
		p.f("DROP %s ", s.Object)
		if s.IfExists {
			p.WriteString("IF EXISTS ")
		}
		p.WriteString(QuoteIdent(s.Name))
	case *Show:
		if s.What == "SETTING" {
			p.f("SHOW %s", QuoteString(s.Setting))
		} else {
			p.f("SHOW %s", s.What)
		}
	case *Describe:
		p.f("DESCRIBE %s", QuoteIdent(s.Name))
	case *Explain:
		p.WriteString("EXPLAIN ")
		p.stmt(s.Stmt)
	case *Set:
		p.f("SET %s = %s", QuoteIdent(s.Key), QuoteString(s.Value))
	}
}

func (p *printer) createTable(s *CreateTable) {
	p.WriteString("CREATE TABLE ")
	if s.IfNotExists {
		p.WriteString("IF NOT EXISTS ")
	}
	p.f("%s (", QuoteIdent(s.Name))
	p.list(len(s.Columns), func(i int) {
		if c := s.Columns[i].Computed; c != nil {
			p.f("%s AS ", QuoteIdent(s.Columns[i].Name))
			p.expr(c)
			return
		}
		p.f("%s %s", QuoteIdent(s.Columns[i].Name), s.Columns[i].Type)
		if m := s.Columns[i].Metadata; m != "" {
			p.f(" METADATA FROM %s", QuoteString(m))
		}
	})
	if len(s.PrimaryKey) > 0 {
		p.f(", PRIMARY KEY (%s)", identList(s.PrimaryKey))
	}
	if w := s.Watermark; w != nil {
		p.f(", WATERMARK FOR %s AS ", QuoteIdent(w.Column))
		p.expr(w.Expr)
	}
	p.WriteString(")")
	if len(s.Options) > 0 {
		p.WriteString(" WITH (")
		p.list(len(s.Options), func(i int) {
			p.f("%s = %s", QuoteString(s.Options[i].Key), QuoteString(s.Options[i].Value))
		})
		p.WriteString(")")
	}
}

func (p *printer) insert(s *Insert) {
	p.f("INSERT INTO %s", QuoteIdent(s.Table))
	if len(s.Columns) > 0 {
		p.f(" (%s)", identList(s.Columns))
	}
	if s.Query != nil {
		p.WriteString(" ")
		p.query(s.Query)
		return
	}
	p.WriteString(" VALUES ")
	p.list(len(s.Rows), func(i int) {
		p.WriteString("(")
		p.exprs(s.Rows[i])
		p.WriteString(")")
	})
}
