package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"clink/engine/async"
	"clink/repl"
	"clink/sql/session"
)

// clinkRun runs script the way `clink run -f q.sql` does (repl.RunScript,
// the script's directory as BaseDir), its output going to a new file at
// out (the bytes a user reads), and returns the wall time. The soft memory
// limit a disaggregated query sets is put back afterwards, so the next
// measurement in this process starts from the same runtime settings.
func clinkRun(ctx context.Context, dir, script, out string, o repl.RunOptions) (time.Duration, error) {
	f, err := os.Create(out)
	if err != nil {
		return 0, fmt.Errorf("clink run: %w", err)
	}
	defer f.Close()
	o.BaseDir, o.Notices = dir, io.Discard
	if o.StateURI == "" {
		o.StateURI = "memory://"
	}
	limit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(limit)
	start := time.Now()
	if err := repl.RunScript(ctx, o, script, f); err != nil {
		return 0, fmt.Errorf("clink run on %s: %w", redact(o.StateURI), err)
	}
	d := time.Since(start)
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("clink run: %w", err)
	}
	return d, nil
}

// groupByStateBytes is the GROUP BY's keyed state in bytes as memory://
// accounts it (key + value of every entry, summed over the stateful
// subtasks) after a run over in, read from the backends' stats.
func groupByStateBytes(ctx context.Context, dir string, in e2eInput) (int64, error) {
	s, err := session.New(session.Config{StateURI: "memory://", BaseDir: dir, Clock: async.RealClock{}})
	if err != nil {
		return 0, fmt.Errorf("state probe: %w", err)
	}
	if _, err := s.Exec(ctx, tableDDL(in)); err != nil {
		return 0, fmt.Errorf("state probe: %w", err)
	}
	h, err := s.Query(ctx, e2eGroupBy)
	if err != nil {
		return 0, fmt.Errorf("state probe: %w", err)
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		return 0, fmt.Errorf("state probe: %w", err)
	}
	return backendStats(h.Job().Backends()).HotBytes, nil
}

// secs is a duration in seconds (never zero, so rates stay finite).
func secs(d time.Duration) float64 { return max(d.Seconds(), 1e-9) }
