package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

// defaultWatchEvery is \watch's interval without SECONDS (psql's).
const defaultWatchEvery = 2 * time.Second

// cmdWatch is \watch [SECONDS] [c=N]: run the last query again every
// SECONDS until Ctrl-C (or N times), each run shown as a SELECT typed
// anew, its results never paged. Only a bounded query can be watched: an
// unbounded one never ends, and its live view already updates.
func (s *Shell) cmdWatch(ctx context.Context, arg string) error {
	every, count, err := parseWatch(arg)
	if err != nil {
		return err
	}
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	if !q.h.Plan.Bounded() {
		return errors.New(`\watch re-runs a bounded query; the last one reads an unbounded source, and its live view already updates (run it again to watch it)`)
	}
	if count == 0 && s.opts.Stepped {
		return errors.New(`\watch in a notebook needs a count: \watch SECONDS c=N`)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	s.watching = true
	defer func() { s.watching = false }()
	sql := q.sql
	for run := 1; count == 0 || run <= count; run++ {
		if run > 1 && !sleepCtx(ctx, every) {
			return nil
		}
		fmt.Fprintf(s.out, "-- \\watch every %s: run %d at %s (Ctrl-C stops)\n", every, run, time.Now().Format("15:04:05"))
		if err := s.runQuery(ctx, sql); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// parseWatch reads \watch's arguments: SECONDS (or i=SECONDS) and c=N,
// psql's spellings.
func parseWatch(arg string) (every time.Duration, count int, err error) {
	every = defaultWatchEvery
	for _, f := range strings.Fields(arg) {
		key, val, named := strings.Cut(f, "=")
		if !named {
			key, val = "i", f
		}
		switch strings.ToLower(key) {
		case "i", "interval":
			sec, err := strconv.ParseFloat(val, 64)
			if err != nil || sec <= 0 || sec > 86400 {
				return 0, 0, fmt.Errorf(`\watch: the interval must be seconds above 0 (and at most a day), got %q`, val)
			}
			every = time.Duration(sec * float64(time.Second))
		case "c", "count":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return 0, 0, fmt.Errorf(`\watch: the count must be a positive integer, got %q`, val)
			}
			count = n
		default:
			return 0, 0, fmt.Errorf(`\watch: unknown option %q (want SECONDS, i=SECONDS or c=N)`, f)
		}
	}
	return every, count, nil
}

// sleepCtx waits d, or until ctx is done; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
