package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"clink/engine"
	"clink/engine/counter"
	"clink/state"
	"clink/state/stateuri"
)

func init() {
	register("demo", "count records per key, sync vs async, on a simulated remote state tier unless -state says otherwise", runDemo)
}

// demoStateURI is the embedded default: a simulated remote tier with 1 ms
// reads and a hot tier far smaller than the state, so most reads miss.
const demoStateURI = "disagg-local://?latency=1ms&hot_max_bytes=256KiB&io_threads=1"

type demoOptions struct {
	state       string
	records     int
	syncRecords int
	keys        int
	parallelism int
	coalesce    bool
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demoOptions
	fs.StringVar(&o.state, "state", demoStateURI, "state URI (memory://, disagg-local://..., remote-read://...)")
	fs.IntVar(&o.records, "records", 200_000, "records for the async run")
	fs.IntVar(&o.syncRecords, "sync-records", 2_000, "records for the synchronous run (it waits out every cold read)")
	fs.IntVar(&o.keys, "keys", 50_000, "distinct keys")
	fs.IntVar(&o.parallelism, "parallelism", runtime.NumCPU(), "subtasks of the counting operator")
	fs.BoolVar(&o.coalesce, "coalesce", true, "batch cold reads of a subtask into one pool read")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))
	}
	for name, v := range map[string]int{"records": o.records, "sync-records": o.syncRecords, "keys": o.keys, "parallelism": o.parallelism} {
		if v <= 0 {
			return fmt.Errorf("demo: -%s must be positive, got %d", name, v)
		}
	}
	fmt.Fprintf(stdout, "clink demo: a keyed count over %d keys at parallelism %d on %s\n\n", o.keys, o.parallelism, o.state)
	syncRes, err := demoRun(o, o.syncRecords, true)
	if err != nil {
		return err
	}
	asyncRes, err := demoRun(o, o.records, false)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\trecords\tseconds\trecords/s\thot hits\tcold misses\tpool reads\tcheckpoint keys\t")
	for _, r := range []demoResult{syncRes, asyncRes} {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%d\t%d\t%d\t%d\t\n", r.path, r.records, r.elapsed.Seconds(), r.rate(), r.hits, r.misses, r.batches, r.ckptKeys)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nasync / sync throughput, measured in this run: %.0fx\n", asyncRes.rate()/syncRes.rate())
	fmt.Fprintln(stdout, "Try -state memory:// (all local), -coalesce=false, or a latency such as disagg-local://?latency=uniform(0.5ms,5ms).")
	return nil
}

type demoResult struct {
	path                  string
	records               int
	elapsed               time.Duration
	hits, misses, batches int64
	ckptKeys              int
}

func (r demoResult) rate() float64 { return float64(r.records) / r.elapsed.Seconds() }

// demoRun counts n records (keys cycling with a stride so most reads miss a
// small hot tier). Half the input is there at the start; a checkpoint is
// taken after a quarter, then the rest arrives.
func demoRun(o demoOptions, n int, forceSync bool) (demoResult, error) {
	const seed = 1
	f, err := stateuri.Open(o.state, stateuri.Options{HashSeed: seed})
	if err != nil {
		return demoResult{}, err
	}
	defer f.Close()
	log := &engine.Log[counter.Rec]{}
	appendRange := func(from, to int) {
		for i := from; i < to; i++ {
			log.Append(counter.Rec{Key: fmt.Appendf(nil, "key-%06d", (i*7919)%o.keys), Value: 1})
		}
	}
	appendRange(0, n/2)
	g := engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "source", Parallelism: 1, NewSource: log.Source},
		{Name: "count", Parallelism: o.parallelism, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] {
				return counter.New(counter.Config{HashSeed: seed, Coalesce: o.coalesce})
			},
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash,
				Key: func(r counter.Rec) uint64 { return state.Hash(seed, r.Key) }}}},
	}}
	res := demoResult{path: "async", records: n}
	if forceSync {
		res.path = "sync"
	}
	sink := &halfway{at: n / 4}
	j, err := engine.NewJob(g, engine.Sink[counter.Rec](sink), engine.JobConfig{
		HashSeed: seed, Pool: f.Pool(), NewBackend: f.New, ForceSync: forceSync,
		OnCheckpoint: func(c engine.CheckpointInfo) { res.ckptKeys = c.DeltaKeys },
	})
	if err != nil {
		return res, err
	}
	defer j.Close()
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	sink.trigger = func() {
		_, _ = j.TriggerCheckpoint()
		appendRange(n/2, n) // the rest of the input arrives after the checkpoint
		log.Close()
	}
	go func() { done <- j.Run(ctx) }()
	if err := <-done; err != nil {
		return res, fmt.Errorf("%s run: %w", res.path, err)
	}
	res.elapsed = time.Since(start)
	for _, b := range j.Backends() {
		if rb, ok := b.(interface{ Stats() state.Stats }); ok {
			s := rb.Stats()
			res.hits, res.misses, res.batches = res.hits+s.Hits, res.misses+s.Misses, res.batches+s.Batches
		}
	}
	return res, nil
}

// halfway is a sink that drops the counts (the demo measures the engine)
// and calls trigger once `at` records were counted.
type halfway struct {
	seen, at int
	trigger  func()
}

func (h *halfway) Emit(counter.Rec) {
	if h.seen++; h.seen == h.at {
		h.trigger()
	}
}
func (*halfway) EmitWatermark(int64)            {}
func (*halfway) EmitBarrier(state.CheckpointID) {}
func (*halfway) EndOfInput()                    {}
