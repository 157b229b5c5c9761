package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"clink/engine/event"
	"clink/state"
)

// hotRec is the input of hotOp: a key and the record's arrival number.
type hotRec struct {
	key uint64
	seq int
}

// hotOp is an external-async operator over a fakeKV with an inline hit
// path (HotProcessor). It logs "key:seq@count" per record and "wm:N" per
// watermark fired, and counts the records ProcessHot took.
type hotOp struct {
	kv       *fakeKV
	out      *[]string
	inline   int
	failKey  uint64 // ProcessHot fails records of this key (0: none)
	panicKey uint64 // ProcessHot panics on records of this key (0: none)
	quiet    bool   // log nothing (the allocation test)
}

func (o *hotOp) Open(ctx *OperatorContext[hotRec]) error {
	o.kv.c = ctx.Controller
	return nil
}
func (o *hotOp) Process(_ int, r hotRec) error {
	v := o.kv.hot[r.key]
	if c, ok := o.kv.cold[r.key]; ok {
		v = c
		delete(o.kv.cold, r.key)
	}
	o.apply(r, v)
	return nil
}
func (o *hotOp) apply(r hotRec, v int) {
	o.kv.hot[r.key] = v + 1
	if o.quiet {
		return
	}
	*o.out = append(*o.out, fmt.Sprintf("%d:%d@%d", r.key, r.seq, v+1))
}
func (o *hotOp) OnWatermark(wm int64) error {
	*o.out = append(*o.out, fmt.Sprintf("wm:%d", wm))
	return nil
}
func (o *hotOp) Close() error                      { return nil }
func (o *hotOp) SupportsAsync() bool               { return true }
func (o *hotOp) ExternalAsync() bool               { return true }
func (o *hotOp) KeyHash(_ int, r hotRec) uint64    { return r.key }
func (o *hotOp) ProcessAsync(_ int, r hotRec) Body { return &hotBody{o: o, r: r} }
func (o *hotOp) ProcessHot(_ int, r hotRec) (bool, error) {
	v, ok := o.kv.hot[r.key]
	if !ok {
		return false, nil
	}
	switch {
	case o.panicKey != 0 && r.key == o.panicKey:
		panic("hot path panic")
	case o.failKey != 0 && r.key == o.failKey:
		return true, errors.New("hot path failure")
	}
	o.inline++
	o.apply(r, v)
	return true, nil
}

type hotBody struct {
	o *hotOp
	r hotRec
}

func (b *hotBody) Run(r *Record) {
	v, t := b.o.kv.get(b.r.key, 0)
	if t == nil {
		b.apply(r, v, nil)
		return
	}
	Await(r, t, b.apply)
}

func (b *hotBody) apply(r *Record, v int, err error) {
	if err == nil {
		b.o.apply(b.r, v)
	}
	r.Finish(err)
}

// nopHotOut discards a hotOp runner's output (the operator logs its own).
type nopHotOut struct{}

func (nopHotOut) Emit(hotRec)                    {}
func (nopHotOut) EmitWatermark(int64)            {}
func (nopHotOut) EmitBarrier(state.CheckpointID) {}

func newHotRunner(t *testing.T, op *hotOp, cfg RunnerConfig) *Runner[hotRec] {
	t.Helper()
	b, err := state.NewMemoryBackend(state.Options{Name: "hot"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cfg.Name, cfg.Backend = "hot", b
	r, err := NewRunner[hotRec](op, nopHotOut{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Async() {
		t.Fatal("expected the async path")
	}
	return r
}

func offerRec(t *testing.T, r *Runner[hotRec], key uint64, seq int) bool {
	t.Helper()
	ok, err := r.Offer(context.Background(), Element[hotRec]{Data: hotRec{key: key, seq: seq}})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestInlineHitSkipsBusyKey: a record whose key has a record in flight
// waits behind it even when its read would hit now; other keys' hits take
// the inline path.
func TestInlineHitSkipsBusyKey(t *testing.T) {
	var out []string
	op := &hotOp{kv: newFakeKV(nil), out: &out}
	op.kv.cold[1] = 10
	op.kv.hot[2] = 0
	r := newHotRunner(t, op, RunnerConfig{})
	offerRec(t, r, 1, 1) // miss: in flight
	op.kv.hot[1] = 99    // a read of key 1 would now hit
	offerRec(t, r, 1, 2) // must park behind record 1, not run inline
	offerRec(t, r, 2, 3) // idle key, hot: inline
	if op.inline != 1 {
		t.Fatalf("%d records took the inline path, want 1 (key 2)", op.inline)
	}
	op.kv.complete(0)
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"2:3@1", "1:1@11", "1:2@12"}
	if strings.Join(out, " ") != strings.Join(want, " ") {
		t.Fatalf("out = %v, want %v", out, want)
	}
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	if s := r.Controller().Snapshot(); s.Submitted != 3 || s.Finished != 3 {
		t.Fatalf("stats submitted %d finished %d, want 3 and 3", s.Submitted, s.Finished)
	}
}

// TestInlineHitOffWhenRecordEventsWanted: a listener to per-record events
// sees every record's submit and finish, so no record bypasses them.
func TestInlineHitOffWhenRecordEventsWanted(t *testing.T) {
	var out []string
	op := &hotOp{kv: newFakeKV(nil), out: &out}
	op.kv.hot[1] = 0
	bus := event.NewBus()
	var kinds []event.Kind
	bus.SubscribeKinds(event.MaskOf(event.RecordSubmitted, event.RecordFinished), func(e event.Event) { kinds = append(kinds, e.Kind) })
	r := newHotRunner(t, op, RunnerConfig{Bus: bus})
	offerRec(t, r, 1, 1)
	offerRec(t, r, 1, 2)
	if op.inline != 0 {
		t.Fatalf("%d records bypassed the controller with a listener attached", op.inline)
	}
	if len(kinds) != 4 {
		t.Fatalf("events %v, want submit and finish of both records", kinds)
	}
}

// TestInlineHitFailures: an error or a panic on the inline path fails the
// subtask as a body's would.
func TestInlineHitFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   hotOp
		want string
	}{
		{"error", hotOp{failKey: 1}, "hot path failure"},
		{"panic", hotOp{panicKey: 1}, "hot path panic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []string
			op := tc.op
			op.kv, op.out = newFakeKV(nil), &out
			op.kv.hot[1] = 0
			r := newHotRunner(t, &op, RunnerConfig{})
			_, err := r.Offer(context.Background(), Element[hotRec]{Data: hotRec{key: 1, seq: 1}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Offer: %v, want an error containing %q", err, tc.want)
			}
			_ = r.Poll() // publishes the counters
			if s := r.Controller().Snapshot(); s.Failures != 1 {
				t.Fatalf("failures = %d, want 1", s.Failures)
			}
		})
	}
}

// TestRandomizedInlineHits drives a runner with the inline hit path through
// random hits, evictions, misses completing in any order and watermarks,
// and checks against the synchronous path: every record ran once, same-key
// records in arrival order, each saw the count the sync path gives, and
// each watermark fired only after every record that arrived before it, in
// order.
func TestRandomizedInlineHits(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomInline(t, seed) })
	}
}

func randomInline(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []string
	op := &hotOp{kv: newFakeKV(nil), out: &out}
	r := newHotRunner(t, op, RunnerConfig{MaxInFlight: 1 + rng.IntN(12)})
	perKey := map[uint64][]int{}
	arrivedBefore := map[int64]int{} // watermark -> records that arrived before it
	seq := 0
	var wm int64
	for step := 0; step < 500; step++ {
		switch x := rng.IntN(10); {
		case x < 6:
			key := uint64(1 + rng.IntN(6))
			if v, ok := op.kv.hot[key]; ok && rng.IntN(3) == 0 {
				op.kv.cold[key] = v // evicted: the next read misses
				delete(op.kv.hot, key)
			}
			seq++
			if !offerRec(t, r, key, seq) {
				seq--
				continue
			}
			perKey[key] = append(perKey[key], seq)
		case x < 8 && len(op.kv.loads) > 0:
			op.kv.complete(rng.IntN(len(op.kv.loads)))
			if err := r.Poll(); err != nil {
				t.Fatal(err)
			}
		case x == 8:
			wm++
			arrivedBefore[wm] = seq
			if _, err := r.Offer(context.Background(), Element[hotRec]{Kind: Watermark, Watermark: wm}); err != nil {
				t.Fatal(err)
			}
		case x == 9 && len(op.kv.loads) > 0 && rng.IntN(2) == 0:
			// A load's value lands in the hot tier before its record
			// resumes: later records of that key must still wait.
			l := op.kv.loads[rng.IntN(len(op.kv.loads))]
			op.kv.hot[l.key] = op.kv.cold[l.key]
		default:
			if err := r.Poll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.ctl.cfg.Idle = func() bool {
		if len(op.kv.loads) == 0 {
			return false
		}
		op.kv.complete(rng.IntN(len(op.kv.loads)))
		return true
	}
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	var recs []string
	done := map[int]bool{}
	fired := int64(0)
	for _, line := range out {
		if w, ok := strings.CutPrefix(line, "wm:"); ok {
			var n int64
			fmt.Sscan(w, &n)
			if n != fired+1 {
				t.Fatalf("watermark %d fired after %d", n, fired)
			}
			fired = n
			for s := 1; s <= arrivedBefore[n]; s++ {
				if !done[s] {
					t.Fatalf("watermark %d fired before record %d, which arrived before it, finished", n, s)
				}
			}
			continue
		}
		recs = append(recs, line)
		done[seqOf(line)] = true
	}
	if fired != wm {
		t.Fatalf("%d watermarks offered, %d fired", wm, fired)
	}
	checkOutput(t, recs, perKey)
	if op.inline == 0 {
		t.Fatal("no record took the inline path")
	}
}

// TestInlineHitAllocatesNothing: the inline path allocates nothing per
// record.
func TestInlineHitAllocatesNothing(t *testing.T) {
	op := &hotOp{kv: newFakeKV(nil), quiet: true}
	op.kv.hot[1] = 0
	r := newHotRunner(t, op, RunnerConfig{})
	el := Element[hotRec]{Data: hotRec{key: 1}}
	allocs := testing.AllocsPerRun(1000, func() { r.Offer(context.Background(), el) })
	if allocs != 0 {
		t.Fatalf("%.1f allocations per inline record", allocs)
	}
	if op.inline < 1000 {
		t.Fatalf("only %d records took the inline path", op.inline)
	}
}
