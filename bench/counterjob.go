package bench

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"clink/engine"
	"clink/engine/counter"
	"clink/engine/event"
	"clink/state"
	"clink/state/stateuri"
)

// counterJob is the engine-level workload: the built-in keyed counter over
// `records` records whose keys cycle through `keys` distinct keys with a
// stride (so a key comes back only after every other key), checkpointed
// every `ckpt` so that written keys become clean and the hot budget holds.
type counterJob struct {
	uri         string
	records     int
	keys        int
	parallelism int
	sync        bool
	coalesce    bool
	ckpt        time.Duration
	// flushWhenStuck is engine.JobConfig's; bus (nil: none) gets the
	// state tier's events.
	flushWhenStuck bool
	bus            *event.Bus
}

// counterResult is what a counter run measured.
type counterResult struct {
	elapsed time.Duration
	records int
	stats   state.Stats
}

func (r counterResult) rate() float64 { return float64(r.records) / r.elapsed.Seconds() }

// hitRate is the share of reads served by the hot tier.
func hitRate(s state.Stats) float64 {
	if s.Hits+s.Misses == 0 {
		return 1
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// nullSink drops the counts: the figures measure the engine.
type nullSink struct{}

func (nullSink) Emit(counter.Rec)               {}
func (nullSink) EmitWatermark(int64)            {}
func (nullSink) EmitBarrier(state.CheckpointID) {}
func (nullSink) EndOfInput()                    {}

// counterKeys returns the input of a counter run: keys drawn from a Zipf
// distribution (s = 1.1) over `keys` keys with a fixed seed, so a hot tier
// holding a tenth of the state serves most reads, as with Nexmark's hot
// auctions.
func counterKeys(records, keys int) []counter.Rec {
	z := rand.NewZipf(rand.New(rand.NewSource(7)), 1.1, 1, uint64(keys-1))
	recs := make([]counter.Rec, records)
	for i := range recs {
		recs[i] = counter.Rec{Key: fmt.Appendf(nil, "key-%07d", z.Uint64()), Value: 1}
	}
	return recs
}

// run executes the job once on a fresh state tier.
func (c counterJob) run(ctx context.Context) (counterResult, error) {
	const seed = 1
	f, err := stateuri.Open(c.uri, stateuri.Options{HashSeed: seed, Seed: seed, Bus: c.bus})
	if err != nil {
		return counterResult{}, fmt.Errorf("counter job: %w", err)
	}
	defer f.Close()
	log := &engine.Log[counter.Rec]{}
	for _, r := range counterKeys(c.records, c.keys) {
		log.Append(r)
	}
	log.Close()
	g := engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "source", Parallelism: 1, NewSource: log.Source},
		{Name: "count", Parallelism: c.parallelism, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] {
				return counter.New(counter.Config{HashSeed: seed, Coalesce: c.coalesce})
			},
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash, GateKey: true,
				Key: func(r counter.Rec) uint64 { return state.Hash(seed, r.Key) }}}},
	}}
	j, err := engine.NewJob(g, engine.Sink[counter.Rec](nullSink{}), engine.JobConfig{
		HashSeed: seed, Pool: f.Pool(), NewBackend: f.New, ForceSync: c.sync, FlushWhenStuck: c.flushWhenStuck,
	})
	if err != nil {
		return counterResult{}, fmt.Errorf("counter job on %s: %w", c.uri, err)
	}
	defer j.Close()
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if c.ckpt > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkpointEvery(stop, c.ckpt, oneAtATime(j))
		}()
	}
	err = j.Run(ctx)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		return counterResult{}, fmt.Errorf("counter job on %s: %w", c.uri, err)
	}
	res := counterResult{elapsed: elapsed, records: c.records}
	for _, b := range j.Backends() {
		if sb, ok := b.(interface{ Stats() state.Stats }); ok {
			res.stats = addStats(res.stats, sb.Stats())
		}
	}
	return res, nil
}
