package ops

import (
	"errors"
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
	"clink/state"
)

// applyFn updates one key's state for one change and emits the results.
// val aliases the backend's storage and must not be kept.
type applyFn func(input int, ch Change, key []byte, null bool, val []byte, found bool) error

// keyed is what every keyed row operator shares: its context, the async
// backend when the bound one defers reads (decided in Open, as the design
// in docs/engine.md says), the per-input key functions and the pooled async bodies.
type keyed struct {
	name     string
	seed     uint64
	keys     []KeyFn      // per input
	keyTypes []types.Type // for event labels
	ctx      *engine.OperatorContext[Change]
	async    state.AsyncBackend
	apply    applyFn
	free     *body
	scratch  []byte
	// cur is the record whose apply runs now on the async path (nil on the
	// synchronous one): fetch suspends it.
	cur *engine.Record
	// hot peeks the hot tier for the inline hit path (nil when the path is
	// synchronous or the backend cannot peek); inline is set while apply
	// runs on it. hotHits and hotMisses count processHot's outcomes.
	hot                state.HotReader
	inline             bool
	hotHits, hotMisses int64
}

// errNotHot tells processHot that apply asked fetch for a second read on
// the inline hit path, before changing anything: the record takes the
// async path instead.
var errNotHot = errors.New("second read on the inline hit path")

// errSuspended tells body.done that apply suspended its record on a
// second read (fetch) whose continuation finishes the record.
var errSuspended = errors.New("suspended")

func (k *keyed) open(ctx *engine.OperatorContext[Change]) {
	k.ctx = ctx
	k.async, k.hot = nil, nil
	if ab, ok := ctx.Backend.(state.AsyncBackend); ok && ab.SupportsAsyncGet() {
		k.async = ab
		k.hot, _ = ctx.Backend.(state.HotReader)
	}
}

// SupportsAsync is true when the bound backend defers reads.
func (k *keyed) SupportsAsync() bool { return k.async != nil }

// CoalesceReads is true: distinct keys' reads collapse into batched loads.
func (k *keyed) CoalesceReads() bool { return true }

// KeyHash hashes the record's key bytes, the same bytes the Hash edge
// routes by, for the per-key gate.
func (k *keyed) KeyHash(input int, ch Change) uint64 {
	b, _, _ := k.keys[input].Append(k.scratch[:0], ch.Row)
	k.scratch = b
	return state.Hash(k.seed, b)
}

// process is the synchronous path: a blocking Get, then apply.
func (k *keyed) process(input int, ch Change) error {
	key, null, err := k.keys[input].Append(k.scratch[:0], ch.Row)
	k.scratch = key
	if err != nil {
		return k.keyErr(err)
	}
	val, found, err := k.ctx.Backend.Get(k.ctx.OpID, key)
	if err != nil {
		return fmt.Errorf("%s: read state: %w", k.name, err)
	}
	return k.apply(input, ch, key, null, val, found)
}

// keyErr is what a record whose key failed to evaluate does: nothing
// (nil) when the row is dropped under the row-level error rule
// (expr.DropRow counts it), else it fails with the error.
func (k *keyed) keyErr(err error) error {
	if expr.DropRow(err) {
		return nil
	}
	return fmt.Errorf("%s: key: %w", k.name, err)
}

// processHot is the inline hit path (engine.HotProcessor) for operators
// whose apply needs no read but its key's entry, or that fetch only before
// changing anything: when the key's entry is hot it runs apply exactly as
// process does and reports true; otherwise (a miss, a key that does not
// encode, or a fetch) it reports false having changed nothing. It is not
// the exported ProcessHot, which each operator opts into, because keyed is
// embedded in operators whose apply may not be safe inline.
func (k *keyed) processHot(input int, ch Change) (bool, error) {
	if k.hot == nil {
		return false, nil
	}
	key, null, err := k.keys[input].Append(k.scratch[:0], ch.Row)
	k.scratch = key
	if err != nil {
		return false, nil // the async path reports it
	}
	lk, ok := k.hot.GetHot(k.ctx.OpID, key)
	if !ok {
		k.hotMisses++
		return false, nil
	}
	k.inline = true
	err = k.apply(input, ch, key, null, lk.Value, lk.Found)
	k.inline = false
	if err == errNotHot {
		k.hotMisses++
		return false, nil
	}
	k.hotHits++
	return true, err
}

// ProcessAsync returns the record's body, reusing a pooled one.
func (k *keyed) ProcessAsync(input int, ch Change) engine.Body {
	b := k.free
	if b == nil {
		b = &body{k: k}
	} else {
		k.free = b.next
	}
	b.input, b.ch = input, ch
	b.key, b.null, b.err = k.keys[input].Append(b.key[:0], ch.Row)
	return b
}

// body is one record's async computation: one GetAsync, then apply. A hot
// hit runs to the end without suspending or allocating.
type body struct {
	k     *keyed
	input int
	ch    Change
	key   []byte
	null  bool
	err   error
	next  *body
}

// Label renders the record's key for runtime events.
func (b *body) Label() string {
	if r, err := types.DecodeKey(b.key, b.k.keyTypes); err == nil {
		return r.String()
	}
	return fmt.Sprintf("%x", b.key)
}

// Run issues the record's read.
func (b *body) Run(r *engine.Record) {
	if b.err != nil {
		err := b.k.keyErr(b.err)
		b.release()
		r.Finish(err)
		return
	}
	lk, t := b.k.async.GetAsync(b.k.ctx.OpID, b.key, 0)
	if t == nil {
		b.done(r, lk, nil)
		return
	}
	engine.Await(r, t, b.done)
}

func (b *body) done(r *engine.Record, lk state.Lookup, err error) {
	k := b.k
	if err == nil {
		k.cur = r
		err = k.apply(b.input, b.ch, b.key, b.null, lk.Value, lk.Found)
		k.cur = nil
	} else {
		err = fmt.Errorf("%s: read state: %w", k.name, err)
	}
	b.release()
	if err != errSuspended {
		r.Finish(err)
	}
}

// release returns the body to its operator's pool.
func (b *body) release() {
	b.ch, b.err = Change{}, nil
	b.next, b.k.free = b.k.free, b
}

// fetch reads more entries of the current record's key (keys must hash
// into its key group) and runs cont with them: at once with blocking reads
// on the synchronous path or when every key is hot, else it suspends the
// record with one batched GetManyAsync and returns errSuspended; cont then
// runs on the runner and its error finishes the record. cont may fetch
// again (a chain of dependent reads, e.g. one per tree level); it must not
// keep references to the apply call's key or value. On the inline hit
// path it returns errNotHot: apply must not have changed anything yet.
func (k *keyed) fetch(keys [][]byte, cont func([]state.Lookup) error) error {
	if k.inline {
		return errNotHot
	}
	if k.cur == nil {
		lks := make([]state.Lookup, len(keys))
		for i, key := range keys {
			v, ok, err := k.ctx.Backend.Get(k.ctx.OpID, key)
			if err != nil {
				return fmt.Errorf("%s: read state: %w", k.name, err)
			}
			lks[i] = state.Lookup{Value: v, Found: ok}
		}
		return cont(lks)
	}
	lks, t := k.async.GetManyAsync(k.ctx.OpID, keys)
	if t == nil {
		return cont(lks)
	}
	engine.Await(k.cur, t, func(r *engine.Record, lks []state.Lookup, err error) {
		if err != nil {
			err = fmt.Errorf("%s: read state: %w", k.name, err)
		} else {
			prev := k.cur
			k.cur = r
			err = cont(lks)
			k.cur = prev
		}
		if err != errSuspended {
			r.Finish(err)
		}
	})
	return errSuspended
}

// put stores or deletes key's state.
func (k *keyed) put(key, val []byte) error {
	var err error
	if val == nil {
		err = k.ctx.Backend.Delete(k.ctx.OpID, key)
	} else {
		err = k.ctx.Backend.Put(k.ctx.OpID, key, val)
	}
	if err != nil {
		return fmt.Errorf("%s: write state: %w", k.name, err)
	}
	return nil
}
