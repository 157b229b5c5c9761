package plan

import (
	"strings"

	"clink/sql/ast"
)

// Common table expressions (WITH). A CTE is inlined where it is named, as a
// view is: its query is planned at each reference, in the scope it was
// defined in (the CTEs before it and the enclosing queries' CTEs, never
// itself: WITH RECURSIVE is refused by the parser). A CTE shadows a table
// or view of the same name; a view's own query never sees the CTEs of the
// query that names it.

// cteScope is one visible CTE; parent holds the ones visible before it.
type cteScope struct {
	parent *cteScope
	cte    *ast.CTE
}

// pushWith makes a WITH clause's CTEs visible, in order; the returned
// function restores the scope before them.
func (b *binder) pushWith(ctes []ast.CTE) (pop func()) {
	saved := b.ctes
	for i := range ctes {
		b.ctes = &cteScope{parent: b.ctes, cte: &ctes[i]}
	}
	return func() { b.ctes = saved }
}

// cte returns the innermost visible CTE named name, or nil. Names compare
// as catalog names do (an unquoted reference matches case-insensitively).
func (b *binder) cte(name string) *cteScope {
	for s := b.ctes; s != nil; s = s.parent {
		if s.cte.Name == name || strings.EqualFold(s.cte.Name, name) && name == strings.ToLower(name) {
			return s
		}
	}
	return nil
}

// relations are the names a FROM item may reference here: the CTEs in
// scope (innermost first), then the catalog's tables and views.
func (b *binder) relations() []string {
	var out []string
	for s := b.ctes; s != nil; s = s.parent {
		out = append(out, s.cte.Name)
	}
	return append(append(out, b.cat.Tables()...), b.cat.Views()...)
}

// cteRef plans a FROM reference to a CTE: its query in its own scope,
// renamed by its column list and qualified by the alias (or its name).
func (b *binder) cteRef(t *ast.TableName, s *cteScope) (*Node, error) {
	if b.depth >= maxViewDepth {
		return nil, errorf(t.At, "common table expressions nest deeper than %d", maxViewDepth)
	}
	saved := b.ctes
	b.ctes = s.parent
	b.depth++
	n, err := b.subquery(s.cte.Query)
	b.ctes = saved
	b.depth--
	if err != nil {
		return nil, err
	}
	if n, err = renameColumns(n, s.cte.Columns, s.cte.At, "WITH query "+s.cte.Name); err != nil {
		return nil, err
	}
	alias := t.Alias
	if alias == "" {
		alias = t.Name
	}
	return renameColumns(requalify(n, alias), t.Columns, t.At, "table "+alias)
}

// outsideWith runs f with no CTE visible: a view's query is planned in the
// catalog's scope only.
func (b *binder) outsideWith(f func() (*Node, error)) (*Node, error) {
	saved := b.ctes
	b.ctes = nil
	defer func() { b.ctes = saved }()
	return f()
}

// namedQuery returns the query a FROM item stands for and the qualifier
// of its columns, when it is a subquery, a CTE or a view whose columns
// keep their names (no column list renames them); nil otherwise (tables
// shadow views, as in tableName).
func (b *binder) namedQuery(from ast.TableExpr) (*ast.Query, string) {
	switch f := from.(type) {
	case *ast.DerivedTable:
		if len(f.Columns) == 0 {
			return f.Query, f.Alias
		}
	case *ast.TableName:
		alias := f.Alias
		if alias == "" {
			alias = f.Name
		}
		if len(f.Columns) > 0 {
			return nil, ""
		}
		if s := b.cte(f.Name); s != nil {
			if len(s.cte.Columns) == 0 {
				return s.cte.Query, alias
			}
			return nil, ""
		}
		if _, isTable := b.cat.Table(f.Name); !isTable {
			if v, isView := b.cat.View(f.Name); isView && len(v.Names) == 0 {
				return v.Query, alias
			}
		}
	}
	return nil, ""
}
