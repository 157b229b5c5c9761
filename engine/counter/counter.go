// Package counter is a built-in keyed operator that counts records per key
// in keyed state. It exercises the whole async path with the smallest
// possible logic: scenario files drive it with `operator` directives before
// any SQL is involved, and the demo and benchmarks run it.
package counter

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/state"
)

// Rec is both the operator's input (a key, and a value to add) and its
// output (the key and its running total).
type Rec struct {
	Key   []byte
	Value int64
}

func (r Rec) String() string { return fmt.Sprintf("%s=%d", r.Key, r.Value) }

// Config chooses the operator's read pattern.
type Config struct {
	HashSeed uint64 // must match the job's partitioning seed
	Coalesce bool   // batch reads through the coalescing backend
	Deadline bool   // resume ready reads in order-key order (the record's value)
}

// Counter sums Value per key: the synchronous path reads and writes state
// inline; the async path reads with one GetAsync per record.
type Counter struct {
	cfg   Config
	ctx   *engine.OperatorContext[Rec]
	async state.AsyncBackend
	hot   state.HotReader // the hit path: nil when the backend cannot peek
	free  *body
	buf   []byte
}

// New returns a counter operator.
func New(cfg Config) *Counter { return &Counter{cfg: cfg} }

// Open binds the operator to its backend; async is effective only when the
// backend defers reads.
func (c *Counter) Open(ctx *engine.OperatorContext[Rec]) error {
	c.ctx = ctx
	if ab, ok := ctx.Backend.(state.AsyncBackend); ok && ab.SupportsAsyncGet() {
		c.async = ab
		c.hot, _ = ctx.Backend.(state.HotReader)
	}
	return nil
}

// ProcessHot is the inline hit path (engine.HotProcessor): when the key's
// count is hot it is the synchronous path; otherwise it changes nothing
// and reports false.
func (c *Counter) ProcessHot(_ int, r Rec) (bool, error) {
	if c.hot == nil {
		return false, nil
	}
	lk, ok := c.hot.GetHot(c.ctx.OpID, r.Key)
	if !ok {
		return false, nil
	}
	return true, c.apply(r, lk.Value)
}

// SupportsAsync is true when the bound backend defers reads.
func (c *Counter) SupportsAsync() bool { return c.async != nil }

// CoalesceReads reports the configured read pattern.
func (c *Counter) CoalesceReads() bool { return c.cfg.Coalesce }

// DeadlineAware reports the configured resume order.
func (c *Counter) DeadlineAware() bool { return c.cfg.Deadline }

// KeyHash hashes the record's key for the per-key gate.
func (c *Counter) KeyHash(_ int, r Rec) uint64 { return state.Hash(c.cfg.HashSeed, r.Key) }

// Process is the synchronous path.
func (c *Counter) Process(_ int, r Rec) error {
	v, _, err := c.ctx.Backend.Get(c.ctx.OpID, r.Key)
	if err != nil {
		return fmt.Errorf("read count of %q: %w", r.Key, err)
	}
	return c.apply(r, v)
}

func (c *Counter) apply(r Rec, old []byte) error {
	var n int64
	if len(old) == 8 {
		n = int64(binary.BigEndian.Uint64(old))
	}
	n += r.Value
	c.buf = binary.BigEndian.AppendUint64(c.buf[:0], uint64(n))
	if err := c.ctx.Backend.Put(c.ctx.OpID, r.Key, c.buf); err != nil {
		return fmt.Errorf("write count of %q: %w", r.Key, err)
	}
	c.ctx.Output.Emit(Rec{Key: r.Key, Value: n})
	return nil
}

// OnWatermark has nothing to fire: counts are emitted per record.
func (c *Counter) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (c *Counter) Close() error { return nil }

// ProcessAsync returns the record's body, reusing a pooled one.
func (c *Counter) ProcessAsync(_ int, r Rec) engine.Body {
	b := c.free
	if b == nil {
		b = &body{c: c}
	} else {
		c.free = b.next
	}
	b.rec = r
	return b
}

type body struct {
	c    *Counter
	rec  Rec
	next *body
}

// Label names the record's key in runtime events.
func (b *body) Label() string { return string(b.rec.Key) }

func (b *body) Run(r *engine.Record) {
	c := b.c
	order := int64(0)
	if c.cfg.Deadline {
		order = b.rec.Value
	}
	lk, t := c.async.GetAsync(c.ctx.OpID, b.rec.Key, order)
	if t == nil {
		b.apply(r, lk, nil)
		return
	}
	engine.Await(r, t, b.apply)
}

func (b *body) apply(r *engine.Record, lk state.Lookup, err error) {
	c := b.c
	if err == nil {
		err = c.apply(b.rec, lk.Value)
	}
	r.Finish(err) // before recycling: Finish's event labels the record by its key
	b.rec = Rec{}
	b.next, c.free = c.free, b
}
