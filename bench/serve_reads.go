package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// servePointReads fills a view from a bounded generator, then times the
// same sequence of point reads over the wire and in process, interleaved
// round by round.
func servePointReads(ctx context.Context, e *Env, bs *benchServer) error {
	rows := e.size(500_000, 100_000)
	if err := bs.exec(ctx, fmt.Sprintf(serveTable, "src", rows)); err != nil {
		return err
	}
	if _, err := bs.runView(ctx, "mv", "src", nil); err != nil {
		return err
	}
	conn, err := bs.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	reads := e.size(2000, 300)
	sql := fmt.Sprintf(servePointRead, "mv")
	inline := "SELECT k, n, s FROM mv WHERE k = %d"
	wire := func() (float64, error) {
		start := time.Now()
		for i := range reads {
			var k, n, s int64
			if err := conn.QueryRow(ctx, sql, i%serveKeys).Scan(&k, &n, &s); err != nil {
				return 0, fmt.Errorf("over the wire: %w", err)
			}
			if k != int64(i%serveKeys) || n <= 0 {
				return 0, fmt.Errorf("over the wire: key %d read as (%d, %d, %d)", i%serveKeys, k, n, s)
			}
		}
		return float64(reads) / secs(time.Since(start)), nil
	}
	local := func() (float64, error) {
		start := time.Now()
		for i := range reads {
			_, got, err := bs.Query(ctx, fmt.Sprintf(inline, i%serveKeys))
			if err != nil {
				return 0, fmt.Errorf("in process: %w", err)
			}
			if len(got) != 1 || got[0][0].Int() != int64(i%serveKeys) || got[0][1].Int() <= 0 {
				return 0, fmt.Errorf("in process: key %d read as %v", i%serveKeys, got)
			}
		}
		return float64(reads) / secs(time.Since(start)), nil
	}
	res, err := rounds(ctx, e.runs(3, 1), wire, local)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%d point reads, one client, of a %d-row view (GROUP BY over %d generated rows)", reads, serveKeys, rows)
	e.info("point reads over the wire reads/s", median(res[0]), UnitReqPerS, "pgx, prepared SELECT ... WHERE k = $1; "+note)
	e.info("point reads in process reads/s", median(res[1]), UnitReqPerS, "Server.Query with the key inline; "+note)
	e.info("point reads wire/in-process", pairedRatio(res[0], res[1]), UnitRatio, note)
	return nil
}

// serveThroughput runs the same bounded view job alone and under 50 pgx
// readers that point-read it until it ends, interleaved round by round.
func serveThroughput(ctx context.Context, e *Env, bs *benchServer) error {
	rows := e.size(1_000_000, 200_000)
	if err := bs.exec(ctx, fmt.Sprintf(serveTable, "gen", rows)); err != nil {
		return err
	}
	conns := make([]*pgx.Conn, 0, serveReaders)
	defer func() {
		for _, c := range conns {
			c.Close(context.Background())
		}
	}()
	for range serveReaders {
		c, err := bs.connect(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	round := 0
	var readRates []float64
	job := func(readers bool) func() (float64, error) {
		return func() (float64, error) {
			round++
			name := fmt.Sprintf("job%d", round)
			var h *hammer
			var started func()
			if readers {
				started = func() { h = startHammer(ctx, conns, fmt.Sprintf(servePointRead, name)) }
			}
			d, err := bs.runView(ctx, name, "gen", started)
			if h != nil {
				reads, herr := h.stop()
				if err == nil && herr != nil {
					err = fmt.Errorf("a reader: %w", herr)
				}
				readRates = append(readRates, float64(reads)/secs(d))
			}
			if err != nil {
				return 0, err
			}
			if err := bs.exec(ctx, "DROP MATERIALIZED VIEW "+name); err != nil {
				return 0, err
			}
			return float64(rows) / secs(d), nil
		}
	}
	res, err := rounds(ctx, e.runs(3, 1), job(false), job(true))
	if err != nil {
		return err
	}
	note := fmt.Sprintf("a view's job (GROUP BY into %d groups over %d generated rows, checkpoints every 100ms) from CREATE to its end", serveKeys, rows)
	e.info("view job alone rec/s", median(res[0]), UnitRecPerS, note)
	e.info("view job with 50 readers rec/s", median(res[1]), UnitRecPerS, note)
	e.info("50 readers' point reads during the job reads/s", median(readRates), UnitReqPerS, "all readers together, each a prepared SELECT ... WHERE k = $1 in a loop")
	e.atLeast("view job with/without 50 readers", pairedRatio(res[1], res[0]), UnitRatio, serveGoal, note+"; the readers and the job share the machine's cores")
	return nil
}

// hammer is serveReaders pgx clients point-reading a view in a loop.
type hammer struct {
	quit  chan struct{}
	wg    sync.WaitGroup
	reads atomic.Int64
	mu    sync.Mutex
	err   error
}

// startHammer starts one reader per connection on sql (a point read, $1
// the key); each reads until stop.
func startHammer(ctx context.Context, conns []*pgx.Conn, sql string) *hammer {
	h := &hammer{quit: make(chan struct{})}
	for i, c := range conns {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			for r := 0; ; r++ {
				select {
				case <-h.quit:
					return
				default:
				}
				var k, n, s int64
				err := c.QueryRow(ctx, sql, (i*31+r)%serveKeys).Scan(&k, &n, &s)
				if errors.Is(err, pgx.ErrNoRows) {
					err = nil // the key has no group yet in an early barrier's snapshot
				}
				if err != nil {
					h.mu.Lock()
					h.err = errors.Join(h.err, err)
					h.mu.Unlock()
					return
				}
				h.reads.Add(1)
			}
		}()
	}
	return h
}

// stop ends the readers, waits for them and returns how many reads they
// made and their errors.
func (h *hammer) stop() (int64, error) {
	close(h.quit)
	h.wg.Wait()
	return h.reads.Load(), h.err
}
