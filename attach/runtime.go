package attach

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine"
	"clink/engine/event"
	"clink/tui"
)

// RuntimeConfig tunes an attached runtime.
type RuntimeConfig struct {
	// Every is how often the snapshot is polled (0: 500 ms, the
	// dashboard's tick).
	Every time.Duration
	// FullTap asks the server for every event instead of its sampled tap.
	FullTap bool
	// Buffer is the event channel's capacity (0: 8192); events are
	// dropped, and counted, when the dashboard lags.
	Buffer int
	// Retry is the pause before the event stream reconnects (0: 1 s).
	Retry time.Duration
}

// Runtime is a remote job as the dashboard reads it: a tui.Runtime whose
// snapshots are polled over the attach protocol and whose events are the
// server's tap, streamed. Checkpoint and CrashAndRestore act on the remote
// job. Close stops its goroutines.
type Runtime struct {
	c   *Client
	job string
	cfg RuntimeConfig
	ch  chan event.Event

	dropped atomic.Int64
	mu      sync.Mutex
	last    Snapshot
	err     error // the last poll's error, shown in the header

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Attach reads job's first snapshot (so an unknown job fails here) and
// starts polling it and streaming its events.
func (c *Client) Attach(ctx context.Context, job string, cfg RuntimeConfig) (*Runtime, error) {
	if cfg.Every <= 0 {
		cfg.Every = 500 * time.Millisecond
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 8192
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	first, err := c.Snapshot(ctx, job, maxResults)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{c: c, job: job, cfg: cfg, ch: make(chan event.Event, cfg.Buffer), last: first, cancel: cancel}
	r.wg.Add(2)
	go r.poll(ctx)
	go r.stream(ctx)
	return r, nil
}

func (r *Runtime) poll(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := r.c.Snapshot(ctx, r.job, maxResults)
		r.mu.Lock()
		if err == nil {
			r.last = s
		}
		r.err = err
		r.mu.Unlock()
	}
}

// stream follows the event stream, reconnecting after a pause when it
// breaks, until ctx ends.
func (r *Runtime) stream(ctx context.Context) {
	defer r.wg.Done()
	for {
		_ = r.c.Stream(ctx, r.job, r.cfg.FullTap, r.deliver)
		t := time.NewTimer(r.cfg.Retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (r *Runtime) deliver(w Event) bool {
	e, err := w.Event()
	if err != nil {
		return true // a kind this client does not know
	}
	select {
	case r.ch <- e:
	default:
		r.dropped.Add(1)
	}
	return true
}

func (r *Runtime) snap() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// Snapshot is the newest polled snapshot.
func (r *Runtime) Snapshot() engine.JobSnapshot { return r.snap().JobSnapshot() }

// Events is the streamed tap.
func (r *Runtime) Events() <-chan event.Event { return r.ch }

// Results returns up to n of the newest polled result rows.
func (r *Runtime) Results(n int) []string {
	res := r.snap().Results
	return res[:min(max(n, 0), len(res))]
}

// ResultTable returns the polled results as cells under their column
// names (tui.ResultTable), as the local dashboard shows them; cols is nil
// when the server sends no columns (an older server, or a job without
// them), and the dashboard then shows Results' lines.
func (r *Runtime) ResultTable(n int) (cols []string, rows [][]string) {
	s := r.snap()
	if len(s.Columns) == 0 {
		return nil, nil
	}
	return s.Columns, s.Rows[:min(max(n, 0), len(s.Rows))]
}

// DecodeKey renders a remote SQL job's state key as its values
// (tui.KeyDecoder), as the local dashboard does.
func (r *Runtime) DecodeKey(key []byte) (string, bool) { return tui.DecodeSQLKey(key) }

// Info is the remote job's description, with the attachment after the
// state URI and in the sampling line, and a lost connection in the query
// line.
func (r *Runtime) Info() tui.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := r.last.Info
	in.Dropped += r.dropped.Load()
	in.Sampling = fmt.Sprintf("attached to %s (%s)", r.c.base, in.Sampling)
	in.StateURI += " │ attached to " + strings.TrimPrefix(r.c.base, "http://")
	if r.err != nil {
		in.Query = "[connection lost: " + r.err.Error() + "] " + in.Query
	}
	return in
}

// Checkpoint checkpoints the remote job.
func (r *Runtime) Checkpoint() (string, error) {
	return r.c.Checkpoint(context.Background(), r.job)
}

// CrashAndRestore crashes the remote job and restores it from its newest
// durable checkpoint.
func (r *Runtime) CrashAndRestore() (string, error) {
	return r.c.Crash(context.Background(), r.job)
}

// errLocalOnly refuses the knobs that change the serving process.
var errLocalOnly = errors.New("not over attach: latency and hot budget are knobs of the process that runs the job")

// AdjustLatency is refused over attach.
func (r *Runtime) AdjustLatency(int) (string, error) { return "", errLocalOnly }

// AdjustHotBudget is refused over attach.
func (r *Runtime) AdjustHotBudget(int) (string, error) { return "", errLocalOnly }

// Close stops polling and streaming and waits for both goroutines.
func (r *Runtime) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}

var (
	_ tui.Runtime     = (*Runtime)(nil)
	_ tui.KeyDecoder  = (*Runtime)(nil)
	_ tui.ResultTable = (*Runtime)(nil)
)
