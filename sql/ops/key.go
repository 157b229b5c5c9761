package ops

import (
	"sync"

	"clink/sql/expr"
	"clink/sql/types"
	"clink/state"
)

// KeyFn computes a record's key bytes: the order-preserving key encoding
// of its key expressions. The Hash edge into a keyed operator hashes the
// same bytes the operator uses as its state key, so a key's state lands in
// the key group its records route to.
//
// Exprs nil keys by the whole row (DISTINCT, set operations); an empty,
// non-nil Exprs is the one constant key (a global aggregate, a join
// without an equality). NullSafe, when set, marks the expressions compared
// with IS NOT DISTINCT FROM, whose NULLs match.
type KeyFn struct {
	Exprs    []expr.Expr
	NullSafe []bool
}

// Append appends row's key encoding to buf. hasNull reports a NULL in a
// key column that is not null-safe (such a row never matches in an
// equi-join).
func (k KeyFn) Append(buf []byte, row types.Row) (out []byte, hasNull bool, err error) {
	if k.Exprs == nil {
		return types.AppendKeyRow(buf, row), rowHasNull(row), nil
	}
	for i, e := range k.Exprs {
		v, err := e.Eval(row)
		if err != nil {
			return buf, false, err
		}
		hasNull = hasNull || (v.IsNull() && !(i < len(k.NullSafe) && k.NullSafe[i]))
		buf = types.AppendKey(buf, v)
	}
	return buf, hasNull, nil
}

func rowHasNull(r types.Row) bool {
	for _, v := range r {
		if v.IsNull() {
			return true
		}
	}
	return false
}

var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// EdgeHash returns the routing function of a Hash edge keyed by k: the
// state.Hash of the key bytes under the job's seed. It is safe to call
// from several upstream subtasks at once. A key that fails to evaluate
// routes like the empty key; the operator reports the error.
func EdgeHash(k KeyFn, seed uint64) func(Change) uint64 {
	return func(c Change) uint64 {
		bp := keyBufs.Get().(*[]byte)
		b, _, _ := k.Append((*bp)[:0], c.Row)
		h := state.Hash(seed, b)
		*bp = b
		keyBufs.Put(bp)
		return h
	}
}
