package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/sql/expr"
	"clink/sql/parser"
	"clink/sql/types"
	"clink/state"
	"clink/state/stateuri"
)

// opPath is one way to run an operator in a unit test: a state URI and
// whether the runner must take the async path.
type opPath struct {
	name  string
	uri   string
	async bool
}

// opPaths: the synchronous path on memory://, and the async path with
// coalesced reads on a disaggregated tier whose reads all miss at first
// (a tiny hot budget evicts, so later reads miss too).
var opPaths = []opPath{
	{"sync", "memory://", false},
	{"async", "disagg-local://?latency=uniform(0.1ms,2ms)&hot_max_bytes=512", true},
}

// collector is the runner's output.
type collector struct{ out []Change }

func (c *collector) Emit(ch Change)                 { c.out = append(c.out, ch) }
func (c *collector) EmitWatermark(int64)            {}
func (c *collector) EmitBarrier(state.CheckpointID) {}

// input is one change on one input of an operator, or (side -1) a
// watermark.
type input struct {
	side int
	ch   Change
	wm   int64
}

// runOp feeds ins through op on path p (one subtask, stepped on a Sim)
// and returns what it emitted.
func runOp(t *testing.T, p opPath, op engine.Operator[Change], ins []input) []Change {
	out, _ := runOpStats(t, p, op, ins)
	return out
}

// runOpStats is runOp that also returns the controller's counters.
func runOpStats(t *testing.T, p opPath, op engine.Operator[Change], ins []input) ([]Change, engine.Stats) {
	t.Helper()
	sim := async.NewSim(3, async.Fixed(time.Millisecond))
	f, err := stateuri.Open(p.uri, stateuri.Options{HashSeed: 9, Executor: sim, Clock: sim})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	be, err := f.New("op", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	out := &collector{}
	r, err := engine.NewRunner(op, out, engine.RunnerConfig{Name: "op", OpID: 1, Parallelism: 1, Backend: be,
		Clock: sim, Idle: sim.Step, ForceSync: !p.async, MaxInFlight: 16})
	if err != nil {
		t.Fatal(err)
	}
	if r.Async() != p.async {
		t.Fatalf("runner async=%v, want %v", r.Async(), p.async)
	}
	for i, in := range ins {
		if i%50 == 49 { // checkpoint: committed state becomes evictable, reads miss
			if _, err := r.Offer(context.Background(), engine.Element[Change]{Kind: engine.Barrier, Checkpoint: state.CheckpointID(i/50 + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		el := engine.Element[Change]{Kind: engine.Data, Input: in.side, Data: in.ch}
		if in.side < 0 {
			el = engine.Element[Change]{Kind: engine.Watermark, Watermark: in.wm}
		}
		for {
			ok, err := r.Offer(context.Background(), el)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			// At the in-flight cap: drain (flushing coalesced reads).
			if err := r.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	var st engine.Stats
	if c := r.Controller(); c != nil {
		st = c.Snapshot()
	}
	return out.out, st
}

// materialize folds a changelog into a sorted multiset of rows ("row xN"
// for N > 1); a negative count is reported as an error row.
func materialize(chs []Change) []string {
	counts := map[string]int{}
	for _, ch := range chs {
		r := strings.ReplaceAll(ch.Row.String(), "\t", " | ")
		if ch.Kind.Retracts() {
			counts[r]--
		} else {
			counts[r]++
		}
	}
	var rows []string
	for r, n := range counts {
		switch {
		case n < 0:
			rows = append(rows, fmt.Sprintf("NEGATIVE %s x%d", r, n))
		case n == 1:
			rows = append(rows, r)
		case n > 1:
			rows = append(rows, fmt.Sprintf("%s x%d", r, n))
		}
	}
	slices.Sort(rows)
	return rows
}

// compile compiles an SQL expression over cols ("name TYPE" pairs are not
// needed: every column is BIGINT).
func compile(t *testing.T, src string, cols ...string) expr.Expr {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	sc := make([]expr.Column, len(cols))
	for i, c := range cols {
		tbl, name, _ := strings.Cut(c, ".")
		sc[i] = expr.Column{Table: tbl, Name: name, Type: types.BigInt}
	}
	c, err := expr.Compile(e, expr.NewSchema(sc...))
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return c
}

// row builds a BIGINT row; nil is NULL.
func row(vals ...any) types.Row {
	r := make(types.Row, len(vals))
	for i, v := range vals {
		if n, ok := v.(int); ok {
			r[i] = types.NewBigInt(int64(n))
		}
	}
	return r
}

func ins(side int, r types.Row) input { return input{side: side, ch: Change{Kind: Insert, Row: r}} }

func del(side int, r types.Row) input { return input{side: side, ch: Change{Kind: Delete, Row: r}} }

func wm(ts int64) input { return input{side: -1, wm: ts} }

// blockingGets fails the test on a blocking Get: the async path must read
// through GetAsync and GetManyAsync only.
type blockingGets struct {
	state.AsyncBackend
	t *testing.T
}

func (b blockingGets) Get(op state.OpID, key []byte) ([]byte, bool, error) {
	b.t.Errorf("blocking Get of %x on the async path", key)
	return b.AsyncBackend.Get(op, key)
}

// runAsyncNoBlockingGets runs op on the async path over disagg-local
// (checkpointing every 50 inputs so committed state becomes evictable) and
// fails the test on any blocking Get: second reads must suspend.
func runAsyncNoBlockingGets(t *testing.T, op engine.Operator[Change], in []input) *collector {
	t.Helper()
	out, _ := runAsyncWrapped(t, op, in, func(b state.AsyncBackend) state.AsyncBackend { return blockingGets{b, t} })
	return out
}

// runAsyncWrapped runs op on the async path over disagg-local, its backend
// wrapped by wrap, checkpointing every 50 inputs so committed state becomes
// evictable, and returns the output and the runner.
func runAsyncWrapped(t *testing.T, op engine.Operator[Change], in []input, wrap func(state.AsyncBackend) state.AsyncBackend) (*collector, *engine.Runner[Change]) {
	t.Helper()
	sim := async.NewSim(3, async.Fixed(time.Millisecond))
	f, err := stateuri.Open(opPaths[1].uri, stateuri.Options{HashSeed: 9, Executor: sim, Clock: sim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	inner, err := f.New("op", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	out := &collector{}
	r, err := engine.NewRunner[Change](op, out, engine.RunnerConfig{Name: "op", OpID: 1, Parallelism: 1,
		Backend: wrap(inner.(state.AsyncBackend)), Clock: sim, Idle: sim.Step, MaxInFlight: 16})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Async() {
		t.Fatal("not on the async path")
	}
	for i, e := range in {
		if i%50 == 49 {
			if _, err := r.Offer(context.Background(), engine.Element[Change]{Kind: engine.Barrier, Checkpoint: state.CheckpointID(i/50 + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		el := engine.Element[Change]{Kind: engine.Data, Input: e.side, Data: e.ch}
		if e.side < 0 {
			el = engine.Element[Change]{Kind: engine.Watermark, Watermark: e.wm}
		}
		for {
			ok, err := r.Offer(context.Background(), el)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if err := r.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out, r
}
