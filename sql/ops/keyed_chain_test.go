package ops

import (
	"encoding/binary"
	"slices"
	"testing"

	"clink/engine"
	"clink/engine/async"
	"clink/sql/types"
	"clink/state"
)

// chainOp is a keyed operator whose apply walks a chain of dependent
// reads, as a tree descent or an OVER page walk does: after its key's
// entry it fetches key/1, then (from that continuation) key/2, and counts
// the record in all three before emitting the three counts.
type chainOp struct{ keyed }

func newChainOp() *chainOp {
	o := &chainOp{}
	o.name, o.seed, o.keyTypes = "chain", 9, []types.Type{types.BigInt}
	o.keys = []KeyFn{{}}
	o.apply = o.update
	return o
}

func (o *chainOp) Open(ctx *engine.OperatorContext[Change]) error { o.open(ctx); return nil }
func (o *chainOp) Process(input int, ch Change) error             { return o.process(input, ch) }
func (o *chainOp) OnWatermark(int64) error                        { return nil }
func (o *chainOp) Close() error                                   { return nil }

func count(lk state.Lookup) int64 {
	n, _ := binary.Varint(lk.Value)
	return n
}

func (o *chainOp) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	k0 := append([]byte(nil), key...) // fetch's continuations must not keep key
	k1, k2 := append(slices.Clip(k0), "/1"...), append(slices.Clip(k0), "/2"...)
	n0 := count(state.Lookup{Value: val, Found: found})
	return o.fetch([][]byte{k1}, func(l1 []state.Lookup) error {
		n1 := count(l1[0])
		return o.fetch([][]byte{k2}, func(l2 []state.Lookup) error {
			n := []int64{n0 + 1, n1 + 1, count(l2[0]) + 1}
			for i, k := range [][]byte{k0, k1, k2} {
				if err := o.put(k, binary.AppendVarint(nil, n[i])); err != nil {
					return err
				}
			}
			o.ctx.Output.Emit(Change{Kind: Insert, Row: row(int(ch.Row[0].Int()), int(n[0]), int(n[1]), int(n[2]))})
			return nil
		})
	})
}

// countingAsync counts the batched loads a CoalescingBackend asks of it
// and the keys in them. It offers no hot peek and no reservations, so
// every read the coalescer sees goes through its Flush.
type countingAsync struct {
	state.AsyncBackend
	getAsync, getMany, keys int
}

func (c *countingAsync) GetAsync(op state.OpID, key []byte, order int64) (state.Lookup, *async.Task[state.Lookup]) {
	c.getAsync++
	return c.AsyncBackend.GetAsync(op, key, order)
}

func (c *countingAsync) GetManyAsync(op state.OpID, keys [][]byte) ([]state.Lookup, *async.Task[[]state.Lookup]) {
	c.getMany++
	c.keys += len(keys)
	return c.AsyncBackend.GetManyAsync(op, keys)
}

// TestFetchChainsCoalesce: a record's chained follow-up reads go through
// the coalescer like first reads: every batched load the backend sees is
// one of the coalescer's flushes (none bypasses it), the batches carry
// several records' reads, and the results equal the synchronous path's.
func TestFetchChainsCoalesce(t *testing.T) {
	var in []input
	for i := range 300 {
		in = append(in, ins(0, row(i%40)))
	}
	want := materialize(runOp(t, opPaths[0], newChainOp(), in))
	var cnt *countingAsync
	out, r := runAsyncWrapped(t, newChainOp(), in, func(b state.AsyncBackend) state.AsyncBackend {
		cnt = &countingAsync{AsyncBackend: b}
		return cnt
	})
	if got := materialize(out.out); !slices.Equal(got, want) {
		t.Fatalf("async results differ from sync:\n got %v\nwant %v", got, want)
	}
	cb, ok := r.Backend().(*state.CoalescingBackend)
	if !ok {
		t.Fatalf("backend %T is not coalescing", r.Backend())
	}
	if cnt.getAsync != 0 || int64(cnt.getMany) != cb.Flushes() {
		t.Fatalf("backend saw %d GetAsync and %d GetManyAsync calls, coalescer flushed %d times: reads bypassed it",
			cnt.getAsync, cnt.getMany, cb.Flushes())
	}
	if reads := 3 * len(in); cnt.keys != reads || cnt.getMany*2 > reads {
		t.Fatalf("%d reads (3 per record) came as %d keys in %d batches, want them in batches of several",
			reads, cnt.keys, cnt.getMany)
	}
}
