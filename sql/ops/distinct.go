package ops

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/sql/types"
)

// Distinct is DistinctRowOp: its seen-set lives in keyed state (so it is
// checkpointed), one entry per distinct row holding the row's current
// multiplicity, keyed by the row's key encoding: the bytes the Hash edge
// hashes. The first copy of a row emits +I, retracting the last emits -D.
type Distinct struct {
	keyed
}

// NewDistinct returns a DISTINCT operator over rows of the given types.
func NewDistinct(name string, seed uint64, rowTypes []types.Type) *Distinct {
	d := &Distinct{}
	d.name, d.seed, d.keyTypes = name, seed, rowTypes
	d.keys = []KeyFn{{}}
	d.apply = d.update
	return d
}

// Open binds the backend and decides the path.
func (d *Distinct) Open(ctx *engine.OperatorContext[Change]) error {
	d.open(ctx)
	return nil
}

// Process is the synchronous path.
func (d *Distinct) Process(input int, ch Change) error { return d.process(input, ch) }

// ProcessHot is the inline hit path (engine.HotProcessor): the row's
// entry is its only read, so a hot one makes it the synchronous path.
func (d *Distinct) ProcessHot(input int, ch Change) (bool, error) {
	return d.processHot(input, ch)
}

// OnWatermark has nothing to fire.
func (d *Distinct) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (d *Distinct) Close() error { return nil }

func (d *Distinct) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	var n int64
	if found {
		var k int
		if n, k = binary.Varint(val); k <= 0 {
			return fmt.Errorf("%s: corrupt distinct state", d.name)
		}
	}
	switch {
	case !ch.Kind.Retracts():
		n++
		if n == 1 {
			d.ctx.Output.Emit(Change{Kind: Insert, Row: ch.Row})
		}
	case n == 0:
		return nil // retraction of a row never seen
	default:
		n--
		if n == 0 {
			d.ctx.Output.Emit(Change{Kind: Delete, Row: ch.Row})
			return d.put(key, nil)
		}
	}
	return d.put(key, binary.AppendVarint(make([]byte, 0, 4), n))
}
