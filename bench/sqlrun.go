package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/session"
	"clink/state"
)

// Nexmark DDL and queries the SQL suites run.
const (
	bidDDL = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3))
  WITH (connector = 'nexmark', events = '%d', seed = '7')`
	auctionDDL = `CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT, date_time TIMESTAMP(3))
  WITH (connector = 'nexmark', events = '%d', seed = '7')`

	// GroupByQuery is the Nexmark GROUP BY: bids per auction with count and max price.
	GroupByQuery = `SELECT auction, COUNT(*) AS bids, MAX(price) AS top FROM bid GROUP BY auction`
	// JoinQuery is the Nexmark join: each bid with its auction's seller.
	JoinQuery = `SELECT b.auction, b.price, a.seller FROM bid b JOIN auction a ON b.auction = a.id`
)

// sqlJob is one SQL measurement: a query over `events` Nexmark events on a
// state URI, sync or async, checkpointed every `ckpt` so that written keys
// become clean and the hot budget holds.
type sqlJob struct {
	query       string
	uri         string
	events      int
	parallelism int
	sync        bool
	ckpt        time.Duration
	bus         *event.Bus
	// ddl, when set, is the CREATE TABLE script (one %d: the events);
	// empty: the Nexmark bid and auction tables without watermarks.
	ddl string
	// peak samples the state bytes during the run (sqlResult.peakBytes),
	// for state that shrinks again before the end (fired windows).
	peak bool
}

// sqlResult is what a run measured.
type sqlResult struct {
	elapsed time.Duration
	events  int
	stats   state.Stats // summed over stateful subtasks
	// peakBytes is the most state bytes seen during the run (sampled
	// every 5 ms when sqlJob.peak is set; else 0).
	peakBytes int64
}

// rate is events per second.
func (r sqlResult) rate() float64 { return float64(r.events) / r.elapsed.Seconds() }

// run executes the job once.
func (j sqlJob) run(ctx context.Context) (sqlResult, error) {
	s, err := session.New(session.Config{StateURI: j.uri, Parallelism: j.parallelism, ForceSync: j.sync, HashSeed: 1, Seed: 1, Bus: j.bus,
		CheckpointInterval: 20 * time.Millisecond}) // written keys turn clean, so the hot budget holds
	if err != nil {
		return sqlResult{}, fmt.Errorf("sql session on %s: %w", j.uri, err)
	}
	ddl := fmt.Sprintf(bidDDL, j.events) + ";\n" + fmt.Sprintf(auctionDDL, j.events) + ";"
	if j.ddl != "" {
		ddl = fmt.Sprintf(j.ddl, j.events)
	}
	if _, err := s.Exec(ctx, ddl); err != nil {
		return sqlResult{}, fmt.Errorf("sql tables: %w", err)
	}
	start := time.Now()
	h, err := s.Query(ctx, j.query)
	if err != nil {
		return sqlResult{}, fmt.Errorf("sql query on %s: %w", j.uri, err)
	}
	defer h.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if j.ckpt > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkpointEvery(stop, j.ckpt, oneAtATime(h.Job()))
		}()
	}
	var peak int64
	if j.peak {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkpointEvery(stop, 5*time.Millisecond, func() { peak = max(peak, backendStats(h.Job().Backends()).HotBytes) })
		}()
	}
	err = h.Wait(ctx)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		return sqlResult{}, fmt.Errorf("sql query on %s: %w", j.uri, err)
	}
	res := sqlResult{elapsed: elapsed, events: j.events, stats: backendStats(h.Job().Backends()), peakBytes: peak}
	return res, nil
}

// backendStats sums the counters of the backends that keep them.
func backendStats(bs []state.Backend) state.Stats {
	var st state.Stats
	for _, b := range bs {
		if sb, ok := b.(interface{ Stats() state.Stats }); ok {
			st = addStats(st, sb.Stats())
		}
	}
	return st
}

// checkpointEvery calls trigger every d until stop is closed.
func checkpointEvery(stop <-chan struct{}, d time.Duration, trigger func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			trigger()
		}
	}
}

// oneAtATime returns a trigger that starts a checkpoint only when every
// earlier one has completed, so barriers never pile up behind a busy source.
func oneAtATime(job interface {
	TriggerCheckpoint() (state.CheckpointID, error)
	Checkpoints() []engine.CheckpointInfo
}) func() {
	started := 0
	return func() {
		if len(job.Checkpoints()) < started {
			return
		}
		if _, err := job.TriggerCheckpoint(); err == nil {
			started++
		}
	}
}

func addStats(a, b state.Stats) state.Stats {
	a.HotBytes += b.HotBytes
	a.HotKeys += b.HotKeys
	a.Hits += b.Hits
	a.Misses += b.Misses
	a.Batches += b.Batches
	a.LoadedKeys += b.LoadedKeys
	return a
}
