package bench

import (
	"context"
	"fmt"
	"time"

	"clink/engine/event"
	"clink/sql/nexmark"
	"clink/sql/session"
)

// plainGroupBy is the Nexmark GROUP BY with no engine: the same generator
// (the SQL source's seed) and one Go map from auction to count and max
// price. It returns events per second.
func plainGroupBy(events int) float64 {
	type agg struct{ n, top int64 }
	start := time.Now()
	g := nexmark.New(nexmark.Config{Events: int64(events), Seed: 7})
	m := map[int64]*agg{}
	for {
		ev, ok := g.Next()
		if !ok {
			break
		}
		if ev.Kind != nexmark.KindBid {
			continue
		}
		a := m[ev.Bid.Auction]
		if a == nil {
			a = &agg{}
			m[ev.Bid.Auction] = a
		}
		a.n++
		a.top = max(a.top, ev.Bid.Price)
	}
	return float64(events) / time.Since(start).Seconds()
}

// clinkUncheckpointed runs the SQL GROUP BY on memory:// at parallelism 1
// with the session's default of no periodic checkpoints (sqlJob
// checkpoints every 20 ms for the overlap suite's hot budgets) and returns
// events per second.
func clinkUncheckpointed(ctx context.Context, events int) (float64, error) {
	s, err := session.New(session.Config{StateURI: "memory://", Parallelism: 1, HashSeed: 1, Seed: 1})
	if err != nil {
		return 0, fmt.Errorf("sql session: %w", err)
	}
	if _, err := s.Exec(ctx, fmt.Sprintf(bidDDL, events)+";\n"+fmt.Sprintf(auctionDDL, events)+";"); err != nil {
		return 0, fmt.Errorf("sql tables: %w", err)
	}
	start := time.Now()
	h, err := s.Query(ctx, GroupByQuery)
	if err != nil {
		return 0, fmt.Errorf("sql query: %w", err)
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		return 0, fmt.Errorf("sql query: %w", err)
	}
	return float64(events) / time.Since(start).Seconds(), nil
}

func runBaseline(ctx context.Context, e *Env) error {
	n := e.size(300_000, 60_000)
	clink := sqlJob{query: GroupByQuery, uri: "memory://", events: n, parallelism: 1}
	vals, err := rounds(ctx, e.runs(5, 3),
		func() (float64, error) {
			r, err := clink.run(ctx)
			return r.rate(), err
		},
		func() (float64, error) { return plainGroupBy(n), nil },
		func() (float64, error) { return clinkUncheckpointed(ctx, n) })
	if err != nil {
		return err
	}
	e.info("clink memory:// p=1 events/s", median(vals[0]), UnitRecPerS, "SQL GROUP BY on the Nexmark source, a checkpoint every 20 ms")
	e.info("plain Go map loop events/s", median(vals[1]), UnitRecPerS, "same generator, no engine")
	e.info("clink memory:// p=1, no periodic checkpoint, events/s", median(vals[2]), UnitRecPerS, "the session's default")
	e.atLeast("clink/plain Go", pairedRatio(vals[0], vals[1]), UnitRatio, 0.30, "Nexmark GROUP BY auction: count, max price")
	e.info("clink without periodic checkpoints/plain Go", pairedRatio(vals[2], vals[1]), UnitRatio, "supporting: what the 20 ms checkpoints cost")
	return nil
}

func runObserve(ctx context.Context, e *Env) error {
	n := e.size(200_000, 40_000)
	detached := sqlJob{query: GroupByQuery, uri: "memory://", events: n, parallelism: 2}
	lifecycle := event.AllKinds &^ event.PerRecord
	vals, err := rounds(ctx, e.runs(5, 3),
		func() (float64, error) { return observedRun(ctx, detached, lifecycle) },
		func() (float64, error) {
			r, err := detached.run(ctx)
			return r.rate(), err
		},
		func() (float64, error) { return observedRun(ctx, detached, event.AllKinds) })
	if err != nil {
		return err
	}
	e.info("attached events/s", median(vals[0]), UnitRecPerS, "Bus.Tail(4096, all kinds but per-record) drained by a goroutine")
	e.info("detached events/s", median(vals[1]), UnitRecPerS, "no bus")
	e.info("attached, per-record kinds too, events/s", median(vals[2]), UnitRecPerS, "Bus.Tail(4096, AllKinds)")
	note := "SQL GROUP BY on memory://, parallelism 2"
	e.atLeast("attached/detached", pairedRatio(vals[0], vals[1]), UnitRatio, 0.98, note+"; consumer tails every kind but the per-record ones")
	e.info("attached all kinds/detached", pairedRatio(vals[2], vals[1]), UnitRatio, note+"; consumer also takes submit/finish/hit of every record")
	return nil
}

// observedRun runs j with an event bus whose tail a goroutine drains, as
// the TUI does, and returns events per second.
func observedRun(ctx context.Context, j sqlJob, mask event.Mask) (float64, error) {
	bus := event.NewBus()
	events, _, cancel := bus.Tail(4096, mask)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-events:
			case <-stop:
				return
			}
		}
	}()
	j.bus = bus
	r, err := j.run(ctx)
	cancel()
	close(stop)
	<-done
	return r.rate(), err
}
