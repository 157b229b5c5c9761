package bench

import "context"

// windowBidDDL is the Nexmark bid table with a watermark, so a GROUP BY
// over windows plans to a WindowAggregate (one state entry per auction and
// window, a per-key timer at the window's end, the entry deleted when the
// watermark fires it). Event time advances 2000 events per second, so a
// run of n events spans n/2000 s of event time and windows fire during
// the run, not only at the final watermark.
const windowBidDDL = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', events = '%d', seed = '7', events_per_second = '2000')`

// Windowed Nexmark queries of the window suite.
const (
	// HopQuery is Nexmark q5's inner count: bids per auction in 10 s
	// windows sliding by 2 s (each bid counts in five windows).
	HopQuery = `SELECT auction, window_start, window_end, COUNT(*) AS bids
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end`
	// TumbleQuery is a q7-style tumbling window: bids and the top price per
	// auction every 10 s.
	TumbleQuery = `SELECT auction, window_start, window_end, COUNT(*) AS bids, MAX(price) AS top
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end`
)

// windowNote says how the window figures were obtained.
const windowNote = "SQL WindowAggregate on the watermarked Nexmark bid source; the SQL async path always coalesces"

// windowWorkloads are the window suite's subjects: the windowed state
// shrinks as windows fire, so the 10% budget is taken of the peak state
// sampled during the memory:// run.
func windowWorkloads(e *Env, par int) []workload {
	ws := []workload{
		sqlJobWorkload("hop", sqlJob{query: HopQuery, ddl: windowBidDDL, parallelism: par, peak: true},
			e.size(200_000, 40_000), e.size(8_000, 3_000)),
		sqlJobWorkload("tumble", sqlJob{query: TumbleQuery, ddl: windowBidDDL, parallelism: par, peak: true},
			e.size(300_000, 60_000), e.size(20_000, 6_000)),
	}
	for i := range ws {
		ws[i].note = windowNote
	}
	return ws
}

// runWindow is the overlap method (local, async with a 10% hot budget,
// async with ~0, sync with ~0, at 1 ms) on windowed Nexmark queries.
func runWindow(ctx context.Context, e *Env) error {
	const par = 2
	for _, w := range windowWorkloads(e, par) {
		remote := func(hot int64) string { return disaggURI("1ms", hot) }
		if err := overlapOne(ctx, e, w, remote, "1 ms", par); err != nil {
			return err
		}
	}
	return nil
}
