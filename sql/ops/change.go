// Package ops holds clink's SQL row operators on the engine: the changelog
// record type, stateless projection/filter/union, and the keyed
// AggregateRowOp, EquiJoinRowOp and DistinctRowOp, each with a synchronous
// path and an async path (one GetAsync per record, reads coalesced).
package ops

import (
	"strings"

	"clink/sql/types"
)

// Kind is a changelog row's change kind.
type Kind uint8

// Change kinds: insert, update-before (retract), update-after, delete.
const (
	Insert Kind = iota
	UpdateBefore
	UpdateAfter
	Delete
)

// String renders the kind as +I, -U, +U or -D.
func (k Kind) String() string {
	if k > Delete {
		return "?"
	}
	return [...]string{"+I", "-U", "+U", "-D"}[k]
}

// Retracts reports whether the kind removes a row (-U, -D).
func (k Kind) Retracts() bool { return k == UpdateBefore || k == Delete }

// Change is the engine's record type for SQL jobs: a row and its change
// kind. Consumers treat +I and +U as adding the row and -U and -D as
// removing one copy of it.
type Change struct {
	Kind Kind
	Row  types.Row
}

// String renders "+I[a, b]".
func (c Change) String() string {
	var b strings.Builder
	b.WriteString(c.Kind.String())
	b.WriteByte('[')
	for i, v := range c.Row {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteByte(']')
	return b.String()
}

func addKind(retract bool) Kind {
	if retract {
		return Delete
	}
	return Insert
}
