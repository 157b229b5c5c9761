package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// Unnest emits each change once per element of an array evaluated on its
// row, the row followed by the element (and, WITH ORDINALITY, its 1-based
// position), keeping the change's kind: CROSS JOIN UNNEST(t.a). A NULL or
// empty array emits nothing (an inner join, as PostgreSQL and Flink).
// Stateless: a retraction evaluates to the same elements as the row it
// retracts.
type Unnest struct {
	Name       string
	Arg        expr.Expr
	Ordinality bool
	out        engine.Output[Change]
}

// Open binds the output.
func (u *Unnest) Open(ctx *engine.OperatorContext[Change]) error {
	u.out = ctx.Output
	return nil
}

// Process emits the change's rows in element order.
func (u *Unnest) Process(_ int, ch Change) error {
	a, err := u.Arg.Eval(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: %w", u.Name, err)
	}
	extra := 1
	if u.Ordinality {
		extra = 2
	}
	for i, e := range a.Elems() {
		row := make(types.Row, len(ch.Row), len(ch.Row)+extra)
		copy(row, ch.Row)
		row = append(row, e)
		if u.Ordinality {
			row = append(row, types.NewBigInt(int64(i+1)))
		}
		u.out.Emit(Change{Kind: ch.Kind, Row: row})
	}
	return nil
}

// OnWatermark has nothing to fire.
func (u *Unnest) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (u *Unnest) Close() error { return nil }
