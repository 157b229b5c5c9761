package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/types"
)

// Upsert turns an upsert stream (an upsert-kafka source: each value a
// row that replaces its key's last one, a tombstone a Delete carrying the
// key) into a changelog, as Flink's ChangelogNormalize does: the key's last
// row lives in keyed state, a row for a new key emits +I, one for a known
// key -U old and +U new (nothing when they are equal), a Delete of a known
// key -D old (an unknown key's Delete is dropped).
type Upsert struct {
	keyed
}

// NewUpsert returns an upsert operator keyed by key.
func NewUpsert(name string, seed uint64, key KeyFn) *Upsert {
	u := &Upsert{}
	u.name, u.seed = name, seed
	u.keys = []KeyFn{key}
	u.apply = u.update
	return u
}

// Open binds the backend and decides the path.
func (u *Upsert) Open(ctx *engine.OperatorContext[Change]) error {
	u.open(ctx)
	return nil
}

// Process is the synchronous path.
func (u *Upsert) Process(input int, ch Change) error { return u.process(input, ch) }

// ProcessHot is the inline hit path: the key's entry is its only read.
func (u *Upsert) ProcessHot(input int, ch Change) (bool, error) { return u.processHot(input, ch) }

// OnWatermark has nothing to fire.
func (u *Upsert) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (u *Upsert) Close() error { return nil }

func (u *Upsert) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	var old types.Row
	if found {
		var err error
		if old, err = types.DecodeRow(val); err != nil {
			return fmt.Errorf("%s: corrupt upsert state: %w", u.name, err)
		}
	}
	if ch.Kind.Retracts() {
		if !found {
			return nil
		}
		u.ctx.Output.Emit(Change{Kind: Delete, Row: old})
		return u.put(key, nil)
	}
	enc := types.EncodeRow(ch.Row)
	if !found {
		u.ctx.Output.Emit(Change{Kind: Insert, Row: ch.Row})
		return u.put(key, enc)
	}
	if string(enc) == string(val) {
		return nil
	}
	u.ctx.Output.Emit(Change{Kind: UpdateBefore, Row: old})
	u.ctx.Output.Emit(Change{Kind: UpdateAfter, Row: ch.Row})
	return u.put(key, enc)
}
