// Package expr compiles syntax-tree expressions against a row schema into
// evaluable form, with type checking, coercion and SQL NULL semantics,
// and describes aggregate calls (with add/retract accumulators) for the
// planner.
package expr

import (
	"slices"
	"strings"

	"clink/sql/ast"
	"clink/sql/types"
)

// Column is one column of a Schema. Table is the qualifier it can be
// referenced by (a table name or alias; empty for computed columns).
// QualifiedOnly marks a join input's USING / NATURAL key column, which
// the joined row shows once, merged: t.k still names it, but k and an
// unqualified * reach only the merged column (PostgreSQL).
type Column struct {
	Table         string
	Name          string
	Type          types.Type
	QualifiedOnly bool
}

// Schema is the ordered column list a row conforms to.
type Schema struct {
	Cols []Column
}

// NewSchema returns a schema of cols.
func NewSchema(cols ...Column) *Schema { return &Schema{Cols: cols} }

// Types returns the column types in order.
func (s *Schema) Types() []types.Type {
	out := make([]types.Type, len(s.Cols))
	for i, c := range s.Cols {
		out[i] = c.Type
	}
	return out
}

// Resolve finds the column a reference names. Names compare
// case-insensitively when the reference is lower case (unquoted). An
// unknown or ambiguous name is an *ast.Error at the reference.
func (s *Schema) Resolve(ref *ast.ColumnRef) (int, error) {
	found := -1
	for i, c := range s.Cols {
		if !nameEq(c.Name, ref.Name) || (ref.Table != "" && !nameEq(c.Table, ref.Table)) || (ref.Table == "" && c.QualifiedOnly) {
			continue
		}
		if found >= 0 {
			return -1, ast.Errorf(ref.At, "column reference %s is ambiguous (qualify it with a table name)", refName(ref))
		}
		found = i
	}
	if found < 0 {
		if ref.Table != "" && !s.hasTable(ref.Table) {
			return -1, ast.Errorf(ref.At, "unknown table or alias %s%s", ref.Table, ast.DidYouMean(ref.Table, s.tables()))
		}
		return -1, ast.Errorf(ref.At, "unknown column %s%s", refName(ref), ast.DidYouMean(ref.Name, s.names(ref.Table)))
	}
	return found, nil
}

// names are the column names a reference qualified by table (or by
// none) may name, in schema order, for "did you mean".
func (s *Schema) names(table string) []string {
	var out []string
	for _, c := range s.Cols {
		if (table == "" && !c.QualifiedOnly) || (table != "" && nameEq(c.Table, table)) {
			out = append(out, c.Name)
		}
	}
	return out
}

// tables are the schema's table qualifiers, in order, once each.
func (s *Schema) tables() []string {
	var out []string
	for _, c := range s.Cols {
		if c.Table != "" && !slices.Contains(out, c.Table) {
			out = append(out, c.Table)
		}
	}
	return out
}

func (s *Schema) hasTable(t string) bool {
	for _, c := range s.Cols {
		if nameEq(c.Table, t) {
			return true
		}
	}
	return false
}

func refName(ref *ast.ColumnRef) string {
	if ref.Table != "" {
		return ref.Table + "." + ref.Name
	}
	return ref.Name
}

func nameEq(schemaName, ref string) bool {
	return schemaName == ref || strings.EqualFold(schemaName, ref) && ref == strings.ToLower(ref)
}
