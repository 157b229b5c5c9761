package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/types"
)

// procTimeCol is the hidden trailing column a computed column's PROCTIME()
// reads (connector.Table.Extend fills it with the row's processing time).
const procTimeCol = "$proctime"

// computedColumns compiles ct's computed columns ("name AS expr") into t,
// in declaration order. An expression may name the physical columns and
// the computed columns declared before it; PROCTIME() is the row's
// processing time. Errors are positioned at the offending name or call.
func computedColumns(t *connector.Table, ct *ast.CreateTable) error {
	later := map[string]int{} // computed column name -> declaration index
	for i, col := range ct.Columns {
		if col.Computed != nil {
			later[strings.ToLower(col.Name)] = i
		}
	}
	if len(later) == 0 {
		return nil
	}
	if err := computedOrder(t, ct); err != nil {
		return err
	}
	cols := make([]expr.Column, len(ct.Columns)+1)
	for i, col := range ct.Columns {
		cols[i] = expr.Column{Name: col.Name, Type: col.Type}
	}
	cols[len(ct.Columns)] = expr.Column{Name: procTimeCol, Type: types.TimestampLTZ} // Flink's PROCTIME() is a TIMESTAMP_LTZ(3)
	s := expr.NewSchema(cols...)
	for i, col := range ct.Columns {
		if col.Computed == nil {
			continue
		}
		if err := forwardRef(col, i, later); err != nil {
			return err
		}
		c := &expr.Compiler{Schema: s, Substitutes: map[string]int{"PROCTIME()": len(ct.Columns)}}
		e, err := c.Compile(col.Computed)
		if err != nil {
			return err
		}
		if e.Type().Kind == types.KindNull {
			return ast.Errorf(col.Computed.Position(), "computed column %s has no type (CAST the expression)", col.Name)
		}
		cols[i].Type = e.Type()
		proc := isProctime(col.Computed)
		t.Computed = append(t.Computed, connector.Computed{Index: i, Name: col.Name, Type: e.Type(), Expr: e,
			Text: ast.String(col.Computed), At: col.At, ProcTime: proc})
		if proc {
			if t.ProcTime != "" {
				return ast.Errorf(col.At, "table %s: a second PROCTIME() column %s (%s is the processing-time attribute)", ct.Name, col.Name, t.ProcTime)
			}
			t.ProcTime = col.Name
		}
	}
	if t.Connector == "http" {
		return ast.Errorf(t.Computed[0].At, "table %s: an http lookup table cannot have computed columns", t.Name)
	}
	return nil
}

// computedOrder refuses computed columns in a PRIMARY KEY and, on a
// table with one, computed columns before a physical column: the key's
// column indexes then mean the same in the connector's row and the scan's.
func computedOrder(t *connector.Table, ct *ast.CreateTable) error {
	if len(ct.PrimaryKey) == 0 {
		return nil
	}
	for i, name := range ct.PrimaryKey {
		for _, col := range ct.Columns {
			if col.Computed != nil && strings.EqualFold(col.Name, name) {
				at := ct.At
				if i < len(ct.PrimaryAt) {
					at = ct.PrimaryAt[i]
				}
				return ast.Errorf(at, "table %s: PRIMARY KEY column %s is a computed column", t.Name, name)
			}
		}
	}
	seen := false
	for _, col := range ct.Columns {
		if col.Computed != nil {
			seen = true
		} else if seen {
			return ast.Errorf(col.At, "table %s has a PRIMARY KEY: declare physical column %s before the computed columns", t.Name, col.Name)
		}
	}
	return nil
}

// forwardRef refuses a computed column (number i) that names itself or
// a computed column declared after it.
func forwardRef(col ast.ColumnDef, i int, computed map[string]int) error {
	var err error
	walk(col.Computed, func(x ast.Expr) bool {
		ref, ok := x.(*ast.ColumnRef)
		if !ok || err != nil {
			return err == nil
		}
		j, ok := computed[strings.ToLower(ref.Name)]
		switch {
		case !ok || j < i:
		case j == i:
			err = ast.Errorf(ref.At, "computed column %s refers to itself", col.Name)
		default:
			err = ast.Errorf(ref.At, "computed column %s refers to computed column %s, which is declared after it", col.Name, ref.Name)
		}
		return err == nil
	})
	return err
}

// procTimeWatermark refuses a WATERMARK on a processing-time attribute;
// a table with both a WATERMARK and a PROCTIME() column keeps the
// watermark's column as its time attribute, its PROCTIME() column being
// a plain TIMESTAMP stamped by the clock.
func procTimeWatermark(t *connector.Table, w *ast.Watermark) error {
	if w == nil || t.ProcTime == "" {
		return nil
	}
	if strings.EqualFold(w.Column, t.ProcTime) {
		at := w.ColumnAt
		if at == (ast.Pos{}) {
			at = w.At
		}
		return ast.Errorf(at, "WATERMARK FOR %s: %s is a processing-time attribute (PROCTIME()); a watermark needs an event-time column", w.Column, w.Column)
	}
	t.ProcTime = ""
	return nil
}

// computedDetail is EXPLAIN's note of a scan's computed columns, "" for
// none: "; computed: ts AS TO_TIMESTAMP(s), pt AS PROCTIME() (processing
// time)".
func computedDetail(t *connector.Table) string {
	if len(t.Computed) == 0 {
		return ""
	}
	parts := make([]string, len(t.Computed))
	for i, c := range t.Computed {
		parts[i] = c.Name + " AS " + c.Text
		if c.ProcTime && strings.EqualFold(c.Name, t.ProcTime) {
			parts[i] += " (processing time)"
		}
	}
	return "; computed: " + strings.Join(parts, ", ")
}

// procTick is the spacing of the processing-time window ends of the plan
// under n: the greatest common divisor of its processing-time windows'
// sizes, slides, steps and offsets in ms (0: none), and the largest size.
// Sources with a PROCTIME attribute set clock timers at those ends
// (connector.Env.ProcTick).
func procTick(n *Node, seen map[*Node]bool) (tick, span int64) {
	if seen[n] {
		return 0, 0
	}
	seen[n] = true
	if n.Op == OpWindow && n.Window != nil && n.Window.ProcTime {
		sp := n.Window.Spec
		for _, v := range []int64{sp.Size, sp.Slide, sp.Offset} {
			tick = gcd(tick, v)
		}
		span = sp.Size
	}
	for _, in := range n.Inputs {
		t, s := procTick(in, seen)
		tick, span = gcd(tick, t), max(span, s)
	}
	return tick, span
}

func gcd(a, b int64) int64 {
	a, b = max(a, -a), max(b, -b)
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// describeType is DESCRIBE's type of a column: a computed column's type
// with its expression, "TIMESTAMP(3) AS PROCTIME() *PROCTIME*" for the
// processing-time attribute (Flink marks it so).
func describeType(t *connector.Table, col expr.Column) string {
	for _, c := range t.Computed {
		if c.Name != col.Name {
			continue
		}
		out := c.Type.String() + " AS " + c.Text
		if c.ProcTime && strings.EqualFold(c.Name, t.ProcTime) {
			out += " *PROCTIME*"
		}
		return out
	}
	return col.Type.String()
}
