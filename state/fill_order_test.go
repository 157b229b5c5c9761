package state_test

import (
	"fmt"
	"slices"
	"testing"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

// TestFillOrderIgnoresListeners: a batched load fills the hot tier and
// resumes its readers in the same order whether or not anyone listens on
// the event bus, so attaching the dashboard cannot change which keys stay
// hot (issue 20). Each reader writes its key as it resumes, as an
// aggregate does, into a budget too small for the batch.
func TestFillOrderIgnoresListeners(t *testing.T) {
	type outcome struct {
		stats state.Stats
		hot   []string
	}
	run := func(listen bool) outcome {
		pool := seedPool(t, 100, 0)
		bus := event.NewBus()
		if listen {
			cancel := bus.Subscribe(func(event.Event) {})
			defer cancel()
		}
		sb := newSimBackend(t, pool, 1500, func(o *state.RemoteOptions) { o.Bus = bus })
		if err := sb.b.Restore(ctx, 1); err != nil {
			t.Fatal(err)
		}
		co := state.NewCoalescingBackend(sb.b)
		const n = 40
		for i := range n {
			key := fmt.Appendf(nil, "k%04d", i)
			_, task := co.GetAsync(1, key, 0)
			if task == nil {
				t.Fatalf("key %s hot before any read", key)
			}
			async.Await(task, func(lk state.Lookup, err error) {
				if err != nil {
					t.Error(err)
					return
				}
				if err := sb.b.Put(1, key, append(lk.Value, '+')); err != nil {
					t.Error(err)
				}
			})
		}
		co.Flush()
		settle(sb.sim, sb.q)
		var o outcome
		o.stats = sb.b.Stats()
		for i := range n {
			if _, ok := sb.b.GetHot(1, fmt.Appendf(nil, "k%04d", i)); ok {
				o.hot = append(o.hot, fmt.Sprintf("k%04d", i))
			}
		}
		return o
	}
	quiet, heard := run(false), run(true)
	if quiet.stats.Evictions == 0 {
		t.Fatalf("no evictions (%+v): the budget must be too small for the batch", quiet.stats)
	}
	if quiet.stats != heard.stats || !slices.Equal(quiet.hot, heard.hot) {
		t.Fatalf("a listener changed the tier:\nquiet %+v\n  hot %v\nheard %+v\n  hot %v", quiet.stats, quiet.hot, heard.stats, heard.hot)
	}
}
