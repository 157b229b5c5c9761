package ops

import (
	"encoding/binary"
	"errors"

	"clink/sql/expr"
	"clink/sql/types"
)

// extreme is MIN/MAX over an append-only input: it keeps only the current
// extreme, so a hot group's update costs O(1) instead of decoding the
// retractable accumulator's multiset of every value (Flink's Max vs
// MaxWithRetract). A retraction is an error: the planner uses it only when
// the aggregate's input never retracts.
type extreme struct {
	max bool
	v   types.Value
	n   int64
}

var errRetractExtreme = errors.New("MIN/MAX over an append-only input cannot retract")

func newExtreme(spec *expr.AggSpec) expr.Accumulator {
	return &extreme{max: spec.Kind == expr.AggMax}
}

func (e *extreme) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	e.n++
	if e.n == 1 {
		e.v = v
		return nil
	}
	c := types.CompareTotal(v, e.v)
	if (e.max && c > 0) || (!e.max && c < 0) {
		e.v = v
	}
	return nil
}

func (e *extreme) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	return errRetractExtreme
}

func (e *extreme) Result() types.Value { return e.v }

func (e *extreme) Count() int64 { return e.n }

func (e *extreme) MarshalBinary() ([]byte, error) { return e.AppendBinary(make([]byte, 0, 16)) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (e *extreme) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, e.n)
	return types.AppendValue(b, e.v), nil
}

func (e *extreme) UnmarshalBinary(b []byte) error {
	n, k := binary.Varint(b)
	if k <= 0 {
		return errAggState
	}
	v, rest, err := types.ReadValue(b[k:])
	if err != nil || len(rest) != 0 {
		return errAggState
	}
	e.n, e.v = n, v
	return nil
}
