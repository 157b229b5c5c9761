package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"clink/engine/event"
)

// flushSide is one coalescing flush policy's figures over the rounds.
type flushSide struct {
	name     string
	stuck    bool
	rates    []float64
	batch    []float64 // keys per pool read
	p50, p99 []float64 // ms a missing record waited for its values
}

// runFlush measures the two coalescing flush policies on the counter job
// at 1 ms remote latency with a 10% hot budget, interleaved round by
// round: flush at every pause of the input (clink's default) against
// only when nothing is ready to resume (the seed's "controller stuck").
func runFlush(ctx context.Context, e *Env) error {
	const par = 2
	n, keys := e.size(300_000, 60_000), e.size(100_000, 20_000)
	local, err := counterJob{uri: "memory://", records: n, keys: keys, parallelism: par, coalesce: true}.run(ctx)
	if err != nil {
		return err
	}
	uri := disaggURI("1ms", local.stats.HotBytes/10/par)
	sides := []*flushSide{{name: "at every pause"}, {name: "when stuck", stuck: true}}
	for r := 0; r < e.runs(3, 2); r++ {
		for _, s := range sides {
			if err := s.measure(ctx, uri, n, keys, par); err != nil {
				return err
			}
		}
	}
	const note = "engine-level counter job, coalescing, disagg-local 1 ms, 10% hot"
	for _, s := range sides {
		e.info("counter rec/s flush "+s.name, median(s.rates), UnitRecPerS, note)
		e.info("keys per read, flush "+s.name, median(s.batch), "keys", note)
		e.info("read wait p50 ms, flush "+s.name, median(s.p50), "ms", "a missing record's wait for its values, batching included")
		e.info("read wait p99 ms, flush "+s.name, median(s.p99), "ms", "a missing record's wait for its values, batching included")
	}
	e.info("flush when stuck / at every pause rec/s", pairedRatio(sides[1].rates, sides[0].rates), UnitRatio, note)
	return nil
}

func (s *flushSide) measure(ctx context.Context, uri string, n, keys, par int) error {
	bus := event.NewBus()
	var mu sync.Mutex
	var waits []time.Duration
	cancel := bus.SubscribeKinds(event.MaskOf(event.ReadDone), func(ev event.Event) {
		mu.Lock()
		waits = append(waits, ev.Suspended)
		mu.Unlock()
	})
	res, err := counterJob{uri: uri, records: n, keys: keys, parallelism: par, coalesce: true, ckpt: overlapCkpt,
		flushWhenStuck: s.stuck, bus: bus}.run(ctx)
	cancel()
	if err != nil {
		return fmt.Errorf("flush %s: %w", s.name, err)
	}
	s.rates = append(s.rates, res.rate())
	s.batch = append(s.batch, float64(res.stats.LoadedKeys)/float64(max(res.stats.Batches, 1)))
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(waits)
	s.p50 = append(s.p50, ms(quantile(waits, 0.5)))
	s.p99 = append(s.p99, ms(quantile(waits, 0.99)))
	return nil
}

// quantile is the q-th of sorted durations (0 when empty).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
