package ast

import (
	"fmt"
	"strings"
)

// String renders a node as canonical SQL: keywords upper case, identifiers
// quoted only when needed, every binary operation parenthesised so that the
// rendering shows how the parser grouped it. Parsing the rendering yields an
// equal tree (modulo positions).
func String(n Node) string {
	var p printer
	p.node(n)
	return p.String()
}

// Renderings returns String of e and of every expression under it, from
// one rendering (each is a substring of e's), so a caller that needs the
// text of every node of a deep tree does linear work, not quadratic.
func Renderings(e Expr) map[Expr]string {
	p := printer{spans: map[Expr][2]int{}}
	p.expr(e)
	s := p.String()
	out := make(map[Expr]string, len(p.spans))
	for n, sp := range p.spans {
		out[n] = s[sp[0]:sp[1]]
	}
	return out
}

type printer struct {
	strings.Builder
	spans map[Expr][2]int // Renderings: where each expression's text lies
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(&p.Builder, format, args...) }

func (p *printer) node(n Node) {
	switch n := n.(type) {
	case Expr:
		p.expr(n)
	case Statement:
		p.stmt(n)
	case *Query:
		p.query(n)
	case SetExpr:
		p.setExpr(n)
	case TableExpr:
		p.table(n)
	default:
		p.f("?%T", n)
	}
}

func (p *printer) list(n int, each func(i int)) {
	for i := range n {
		if i > 0 {
			p.WriteString(", ")
		}
		each(i)
	}
}

func (p *printer) exprs(es []Expr) { p.list(len(es), func(i int) { p.expr(es[i]) }) }

func (p *printer) expr(e Expr) {
	if p.spans == nil || e == nil {
		p.exprText(e)
		return
	}
	start := p.Len()
	p.exprText(e)
	p.spans[e] = [2]int{start, p.Len()}
}

func (p *printer) exprText(e Expr) {
	switch e := e.(type) {
	case nil:
		p.WriteString("<nil>")
	case *Literal:
		p.literal(e)
	case *ColumnRef:
		if e.Table != "" {
			p.f("%s.", QuoteIdent(e.Table))
		}
		p.WriteString(QuoteIdent(e.Name))
	case *Unary:
		if e.Op == "NOT" {
			p.WriteString("(NOT ")
		} else {
			p.f("(%s ", e.Op)
		}
		p.expr(e.X)
		p.WriteString(")")
	case *Binary:
		p.WriteString("(")
		p.expr(e.L)
		p.f(" %s ", e.Op)
		p.expr(e.R)
		p.WriteString(")")
	case *IsNull:
		p.WriteString("(")
		p.expr(e.X)
		p.f(" IS %sNULL)", not(e.Not))
	case *IsBool:
		p.WriteString("(")
		p.expr(e.X)
		p.f(" IS %s%s)", not(e.Not), strings.ToUpper(fmt.Sprint(e.Value)))
	case *Between:
		p.WriteString("(")
		p.expr(e.X)
		p.f(" %sBETWEEN ", not(e.Not))
		p.expr(e.Lo)
		p.WriteString(" AND ")
		p.expr(e.Hi)
		p.WriteString(")")
	case *InList:
		p.WriteString("(")
		p.expr(e.X)
		p.f(" %sIN (", not(e.Not))
		p.exprs(e.List)
		p.WriteString("))")
	case *InQuery:
		p.WriteString("(")
		p.expr(e.X)
		p.f(" %sIN (", not(e.Not))
		p.query(e.Query)
		p.WriteString("))")
	case *Exists:
		p.WriteString("EXISTS (")
		p.query(e.Query)
		p.WriteString(")")
	case *Subquery:
		p.WriteString("(")
		p.query(e.Query)
		p.WriteString(")")
	case *Like:
		p.WriteString("(")
		p.expr(e.X)
		op := "LIKE"
		if e.ILike {
			op = "ILIKE"
		}
		p.f(" %s%s ", not(e.Not), op)
		p.expr(e.Pattern)
		p.WriteString(")")
	default:
		p.expr2(e)
	}
}

func (p *printer) expr2(e Expr) {
	switch e := e.(type) {
	case *Case:
		p.WriteString("CASE")
		if e.Operand != nil {
			p.WriteString(" ")
			p.expr(e.Operand)
		}
		for _, w := range e.Whens {
			p.WriteString(" WHEN ")
			p.expr(w.Cond)
			p.WriteString(" THEN ")
			p.expr(w.Result)
		}
		if e.Else != nil {
			p.WriteString(" ELSE ")
			p.expr(e.Else)
		}
		p.WriteString(" END")
	case *Cast:
		p.WriteString("CAST(")
		p.expr(e.X)
		p.f(" AS %s)", e.Type)
	case *Extract:
		p.f("EXTRACT(%s FROM ", e.Field)
		p.expr(e.X)
		p.WriteString(")")
	case *Index:
		p.WriteString("(")
		p.expr(e.X)
		p.WriteString(")[")
		p.expr(e.Index)
		p.WriteString("]")
	case *FuncCall:
		p.call(e)
	case *ArrayLit:
		p.WriteString("ARRAY[")
		for i, x := range e.Elems {
			if i > 0 {
				p.WriteString(", ")
			}
			p.expr(x)
		}
		p.WriteString("]")
	case *GroupingSet:
		p.groupingSet(e)
	default:
		p.f("?%T", e)
	}
}

func not(b bool) string {
	if b {
		return "NOT "
	}
	return ""
}

func (p *printer) literal(e *Literal) {
	switch e.Kind {
	case LitNull:
		p.WriteString("NULL")
	case LitBool:
		p.WriteString(strings.ToUpper(e.Val))
	case LitString:
		p.WriteString(QuoteString(e.Val))
	case LitTimestamp:
		p.f("TIMESTAMP %s", QuoteString(e.Val))
	case LitInterval:
		p.f("INTERVAL %s %s", QuoteString(e.Val), e.Unit)
	case LitParam:
		p.WriteString("$" + e.Val)
	default:
		p.WriteString(e.Val)
	}
}

func (p *printer) call(e *FuncCall) {
	p.f("%s(", e.Name)
	if e.Distinct {
		p.WriteString("DISTINCT ")
	}
	if e.Star {
		p.WriteString("*")
	}
	if e.Name == "JSON_OBJECT" {
		p.jsonPairs(e.Args)
	} else {
		p.exprs(e.Args)
	}
	if e.OnNull != "" {
		if len(e.Args) > 0 {
			p.WriteString(" ")
		}
		p.WriteString(e.OnNull + " ON NULL")
	}
	if len(e.OrderBy) > 0 {
		p.WriteString(" ORDER BY ")
		p.orderBy(e.OrderBy)
	}
	p.WriteString(")")
	if e.Filter != nil {
		p.WriteString(" FILTER (WHERE ")
		p.expr(e.Filter)
		p.WriteString(")")
	}
	if e.Over != nil {
		p.WriteString(" OVER ")
		if w := e.Over; w.Ref != "" && len(w.PartitionBy) == 0 && len(w.OrderBy) == 0 && w.Frame == nil {
			p.WriteString(QuoteIdent(w.Ref))
			return
		}
		p.WriteString("(")
		p.window(e.Over)
		p.WriteString(")")
	}
}

// jsonPairs prints JSON_OBJECT's arguments as KEY k VALUE v pairs.
func (p *printer) jsonPairs(args []Expr) {
	for i := 0; i+1 < len(args); i += 2 {
		if i > 0 {
			p.WriteString(", ")
		}
		p.WriteString("KEY ")
		p.expr(args[i])
		p.WriteString(" VALUE ")
		p.expr(args[i+1])
	}
}

func (p *printer) window(w *WindowSpec) {
	var parts []string
	if w.Ref != "" {
		parts = append(parts, QuoteIdent(w.Ref))
	}
	if len(w.PartitionBy) > 0 {
		var q printer
		q.exprs(w.PartitionBy)
		parts = append(parts, "PARTITION BY "+q.String())
	}
	if len(w.OrderBy) > 0 {
		var q printer
		q.orderBy(w.OrderBy)
		parts = append(parts, "ORDER BY "+q.String())
	}
	if fr := w.Frame; fr != nil {
		unit := "RANGE"
		if fr.Rows {
			unit = "ROWS"
		}
		var q printer
		q.f("%s BETWEEN ", unit)
		q.bound(fr.Start)
		q.WriteString(" AND ")
		q.bound(fr.End)
		parts = append(parts, q.String())
	}
	p.WriteString(strings.Join(parts, " "))
}

func (p *printer) bound(b FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		p.WriteString("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		p.WriteString("UNBOUNDED FOLLOWING")
	case CurrentRow:
		p.WriteString("CURRENT ROW")
	case Preceding, Following:
		p.expr(b.Offset)
		if b.Kind == Preceding {
			p.WriteString(" PRECEDING")
		} else {
			p.WriteString(" FOLLOWING")
		}
	}
}

func (p *printer) orderBy(items []OrderItem) {
	p.list(len(items), func(i int) {
		it := items[i]
		p.expr(it.Expr)
		if it.Desc {
			p.WriteString(" DESC")
		}
		if it.NullsFirst != nil {
			if *it.NullsFirst {
				p.WriteString(" NULLS FIRST")
			} else {
				p.WriteString(" NULLS LAST")
			}
		}
	})
}
