package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// Proj is a stateless per-row transform: an optional filter, then an
// optional projection (nil Exprs keeps the row).
type Proj struct {
	Filter expr.Expr
	Exprs  []expr.Expr
	// Next, when set, transforms the output further (fused Calcs).
	Next *Proj
}

// Apply filters and projects one row; keep is false when the filter is not
// TRUE.
func (p *Proj) Apply(row types.Row) (out types.Row, keep bool, err error) {
	if p.Filter != nil {
		v, err := p.Filter.Eval(row)
		if err != nil {
			return nil, false, err
		}
		if v.IsNull() || !v.Bool() {
			return nil, false, nil
		}
	}
	out = row
	if p.Exprs != nil {
		out = make(types.Row, len(p.Exprs))
		for i, e := range p.Exprs {
			if out[i], err = e.Eval(row); err != nil {
				return nil, false, err
			}
		}
	}
	if p.Next != nil {
		return p.Next.Apply(out)
	}
	return out, true, nil
}

// Calc is the stateless project/filter operator (also UNION ALL: one Proj
// per input). It keeps no state and preserves change kinds: a filtered
// changelog stays a valid changelog because consumers add and retract by
// sign.
type Calc struct {
	Name   string
	Inputs []Proj
	out    engine.Output[Change]
}

// Open binds the output.
func (c *Calc) Open(ctx *engine.OperatorContext[Change]) error {
	c.out = ctx.Output
	return nil
}

// Process transforms one change.
func (c *Calc) Process(input int, ch Change) error {
	if input < 0 || input >= len(c.Inputs) {
		return fmt.Errorf("%s: no input %d", c.Name, input)
	}
	row, keep, err := c.Inputs[input].Apply(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	if keep {
		c.out.Emit(Change{Kind: ch.Kind, Row: row})
	}
	return nil
}

// OnWatermark has nothing to fire.
func (c *Calc) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (c *Calc) Close() error { return nil }
