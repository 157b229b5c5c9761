package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// sweepLatencies are the remote read latencies of the sweep.
var sweepLatencies = []time.Duration{0, 100 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}

// sweepModes are the curves of the sweep.
var sweepModes = []struct {
	name           string
	sync, coalesce bool
}{{"sync", true, false}, {"async", false, false}, {"async+coalescing", false, true}}

// SweepPoint is one measured point of the sweep.
type SweepPoint struct {
	Mode    string
	Latency time.Duration
	Rate    float64 // records per second, median of the runs
}

func runSweep(ctx context.Context, e *Env) error {
	const par = 2
	n := e.size(100_000, 20_000)
	keys := e.size(100_000, 20_000)
	syncSeconds := 0.4
	if e.Quick {
		syncSeconds = 0.15
	}
	var pts []SweepPoint
	for _, lat := range sweepLatencies {
		uri := disaggURI(fmt.Sprintf("%dus", lat.Microseconds()), 1)
		sides := make([]func() (float64, error), len(sweepModes))
		hits := make([]float64, len(sweepModes))
		for i, m := range sweepModes {
			records := n
			if m.sync && lat > 0 {
				// a sync subtask does about 1/lat records a second
				records = min(n, max(50, int(syncSeconds*par/lat.Seconds())))
			}
			job := counterJob{uri: uri, records: records, keys: keys, parallelism: par, sync: m.sync, coalesce: m.coalesce, ckpt: overlapCkpt}
			sides[i] = func() (float64, error) {
				r, err := job.run(ctx)
				hits[i] = hitRate(r.stats)
				return r.rate(), err
			}
		}
		vals, err := rounds(ctx, e.runs(3, 2), sides...)
		if err != nil {
			return err
		}
		for i, m := range sweepModes {
			p := SweepPoint{Mode: m.name, Latency: lat, Rate: median(vals[i])}
			pts = append(pts, p)
			e.info(fmt.Sprintf("%s at %s", m.name, fmtLatency(lat)), p.Rate, UnitRecPerS,
				fmt.Sprintf("engine-level counter job, hot budget 1 byte (dirty keys stay until the 20 ms checkpoint): hit rate %.2f", hits[i]))
		}
		e.logf("latency %s done", fmtLatency(lat))
	}
	if e.OutDir != "" {
		path := filepath.Join(e.OutDir, "bench-sweep.png")
		if err := plotSweep(pts, path); err != nil {
			return err
		}
		e.wrote(path)
	}
	return nil
}

// fmtLatency renders a sweep latency in milliseconds.
func fmtLatency(d time.Duration) string {
	return fmt.Sprintf("%g ms", float64(d.Microseconds())/1000)
}
