package ops

import (
	"fmt"

	"clink/engine"
)

// Expand emits each change once per projection, keeping its kind: the
// input of a GROUP BY with GROUPING SETS, ROLLUP or CUBE gets one copy per
// grouping set (the columns outside the set NULL, plus the set's number),
// so one keyed aggregate over (set, keys) computes every set and retracts
// like any GROUP BY. Stateless.
type Expand struct {
	Name  string
	Projs []Proj
	out   engine.Output[Change]
}

// Open binds the output.
func (e *Expand) Open(ctx *engine.OperatorContext[Change]) error {
	e.out = ctx.Output
	return nil
}

// Process emits the change's copies in projection order.
func (e *Expand) Process(_ int, ch Change) error {
	for i := range e.Projs {
		row, keep, err := e.Projs[i].Apply(ch.Row)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		if keep {
			e.out.Emit(Change{Kind: ch.Kind, Row: row})
		}
	}
	return nil
}

// OnWatermark has nothing to fire.
func (e *Expand) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (e *Expand) Close() error { return nil }
