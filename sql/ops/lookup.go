package ops

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/lookup"
	"clink/engine/resilience"
	"clink/sql/expr"
	"clink/sql/types"
)

// HTTPResponse is what a lookup GET returned.
type HTTPResponse struct {
	Status int
	Body   []byte
}

// HTTPClient sends one lookup stage's GETs. Get's task must complete
// through s (the subtask's controller, or the operator's own scheduler on
// the synchronous path); it may be called from several runners at once.
type HTTPClient interface {
	Get(s async.Scheduler, url string, timeout time.Duration) *async.Task[HTTPResponse]
	Close() error
}

// HTTPClientOptions configure the client of one lookup stage.
type HTTPClientOptions struct {
	// Table names the http table (for errors).
	Table string
	// MaxConnections is max_concurrency x parallelism: every subtask's
	// lookups can be in flight at once without exhausting the pool.
	MaxConnections int
	// Timeout bounds one request.
	Timeout time.Duration
	// Clock times requests out (nil: wall time).
	Clock async.Clock
}

// HTTPOpener opens a lookup stage's client.
type HTTPOpener func(HTTPClientOptions) (HTTPClient, error)

// LookupEnv is what lookup joins need from the session.
type LookupEnv struct {
	// Open opens a stage's HTTP client (nil: the default, a uring.HTTPPool).
	Open HTTPOpener
	// OnClose registers a closer run when the query is closed.
	OnClose func(func() error)
	// Idle is the synchronous path's hook under a deterministic driver.
	Idle func() bool
	// Clock is the session clock (nil: wall time).
	Clock async.Clock
}

// LookupClient is one lookup stage's HTTP client, shared by its subtasks
// and opened at the first lookup (so EXPLAIN opens nothing).
type LookupClient struct {
	open HTTPOpener
	opts HTTPClientOptions

	mu     sync.Mutex
	client HTTPClient
	err    error
	closed bool
}

// NewLookupClient returns a client opened lazily with open(opts).
func NewLookupClient(open HTTPOpener, opts HTTPClientOptions) *LookupClient {
	return &LookupClient{open: open, opts: opts}
}

func (c *LookupClient) get() (HTTPClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return nil, fmt.Errorf("lookup %s: client closed", c.opts.Table)
	case c.client == nil && c.err == nil:
		if c.open == nil {
			c.err = fmt.Errorf("lookup %s: no HTTP client available", c.opts.Table)
			break
		}
		c.client, c.err = c.open(c.opts)
	}
	return c.client, c.err
}

// Close closes the client if it was opened.
func (c *LookupClient) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.client == nil {
		return nil
	}
	err := c.client.Close()
	c.client = nil
	return err
}

// LookupJoinConfig configures a lookup join of a stream with an http table.
type LookupJoinConfig struct {
	Name string
	Kind JoinKind // InnerJoin or LeftJoin
	// Keys are the stream-side key expressions, one per URL placeholder
	// column, already of that column's type; KeyCols the columns.
	Keys    []expr.Expr
	KeyCols []int
	// URL fills the template with the key values; ok false on a NULL.
	URL func(keys []types.Value) (string, bool)
	// Decode turns a 2xx body into a row of the table's Width columns.
	Decode func(body []byte) (types.Row, error)
	Width  int
	// Cond is a residual condition over the joined row (nil: none).
	Cond expr.Expr

	Ordered        bool
	MaxConcurrency int
	Timeout        time.Duration
	Retry          *resilience.RetryPolicy
	Breaker        *resilience.CircuitBreaker
	OnFailure      lookup.FailurePolicy
	// Adapt (nil: a fixed cap) adapts the in-flight cap below MaxConcurrency.
	Adapt *lookup.AdaptConfig
	// Gate keeps per-key order in unordered mode (a retracting input).
	Gate     bool
	HashSeed uint64
	Client   *LookupClient
	Idle     func() bool
}

// lookupOut is a lookup's outcome: the row to emit (the stream row
// joined, or null-padded), or nothing.
type lookupOut struct {
	row  types.Row
	emit bool
}

// permanentError is a lookup failure a retry cannot fix (a body that is
// not JSON, a 4xx, a residual condition that fails to evaluate).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// StatusError is a lookup response whose status fails the attempt.
type StatusError struct {
	Status int
	URL    string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: status %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// Retryable reports whether a lookup error is worth another attempt: a
// transport error, a timeout, a 5xx or 429; not a bad body or another 4xx.
func Retryable(err error) bool {
	var p *permanentError
	return !errors.As(err, &p)
}

// NewLookupJoin returns the lookup join operator: an
// engine/lookup.AsyncLookupOperator over changes, each change's lookup a
// GET through cfg.Client. Change kinds pass through, so a retracting input
// retracts its enriched rows (looked up again).
func NewLookupJoin(cfg LookupJoinConfig) engine.Operator[Change] {
	lj := &lookupJoin{cfg: cfg}
	mode := lookup.Ordered
	if !cfg.Ordered {
		mode = lookup.Unordered
	}
	lc := lookup.Config[Change, *lookupOut]{
		Name: cfg.Name, Lookup: lj.lookup, Merge: lj.merge, Mode: mode,
		MaxConcurrency: cfg.MaxConcurrency, Timeout: cfg.Timeout, Retry: cfg.Retry,
		Breaker: cfg.Breaker, OnFailure: cfg.OnFailure, Idle: cfg.Idle, Adapt: cfg.Adapt,
	}
	if cfg.Gate {
		lc.Key = lj.gateKey
	}
	return lookup.New(lc)
}

type lookupJoin struct{ cfg LookupJoinConfig }

func (j *lookupJoin) keys(row types.Row) ([]types.Value, error) {
	ks := make([]types.Value, len(j.cfg.Keys))
	for i, e := range j.cfg.Keys {
		v, err := e.Eval(row)
		if err != nil {
			return nil, err
		}
		ks[i] = v
	}
	return ks, nil
}

func (j *lookupJoin) gateKey(c Change) uint64 {
	return EdgeHash(KeyFn{Exprs: j.cfg.Keys}, j.cfg.HashSeed)(c)
}

// lookup starts one attempt: NULL keys match nothing without a request.
func (j *lookupJoin) lookup(s async.Scheduler, c Change) *async.Task[*lookupOut] {
	ks, err := j.keys(c.Row)
	if err != nil {
		if expr.DropRow(err) { // the row-level error rule: dropped, counted
			return async.Resolved(&lookupOut{}, nil)
		}
		return async.Resolved[*lookupOut](nil, &permanentError{err})
	}
	u, ok := j.cfg.URL(ks)
	if !ok {
		out, err := j.join(c.Row, ks, nil)
		return async.Resolved(out, err)
	}
	cl, err := j.cfg.Client.get()
	if err != nil {
		return async.Resolved[*lookupOut](nil, err)
	}
	inner := cl.Get(s, u, j.cfg.Timeout)
	return async.New(func(t *async.Task[*lookupOut]) {
		async.Await(inner, func(resp HTTPResponse, err error) {
			if err != nil {
				t.Complete(nil, fmt.Errorf("GET %s: %w", u, err))
				return
			}
			t.Complete(j.response(c.Row, ks, u, resp))
		})
	})
}

// response interprets a status: 2xx decodes, 404 is no match, 5xx and 429
// fail the attempt (retried), any other status fails it for good.
func (j *lookupJoin) response(row types.Row, ks []types.Value, u string, resp HTTPResponse) (*lookupOut, error) {
	switch {
	case resp.Status == http.StatusNotFound:
		return j.join(row, ks, nil)
	case resp.Status >= 500 || resp.Status == http.StatusTooManyRequests:
		return nil, &StatusError{Status: resp.Status, URL: u}
	case resp.Status < 200 || resp.Status > 299:
		return nil, &permanentError{&StatusError{Status: resp.Status, URL: u}}
	}
	r, err := j.cfg.Decode(resp.Body)
	if err != nil {
		return nil, &permanentError{fmt.Errorf("GET %s: %w", u, err)}
	}
	for i, col := range j.cfg.KeyCols {
		if r[col].IsNull() {
			r[col] = ks[i]
		}
	}
	return j.join(row, ks, r)
}

// join builds the output for a match (r non-nil) or a miss.
func (j *lookupJoin) join(row types.Row, _ []types.Value, r types.Row) (*lookupOut, error) {
	if r != nil {
		joined := append(append(make(types.Row, 0, len(row)+j.cfg.Width), row...), r...)
		ok := true
		if j.cfg.Cond != nil {
			v, err := j.cfg.Cond.Eval(joined)
			if err != nil {
				return nil, &permanentError{err}
			}
			ok = !v.IsNull() && v.Bool()
		}
		if ok {
			return &lookupOut{row: joined, emit: true}, nil
		}
	}
	if j.cfg.Kind == LeftJoin {
		return &lookupOut{row: j.pad(row), emit: true}, nil
	}
	return &lookupOut{}, nil
}

func (j *lookupJoin) pad(row types.Row) types.Row {
	return append(append(make(types.Row, 0, len(row)+j.cfg.Width), row...), make(types.Row, j.cfg.Width)...)
}

// merge emits the outcome with the input's change kind; a nil outcome is
// on_failure='null': the row with NULL lookup columns.
func (j *lookupJoin) merge(c Change, out *lookupOut) (Change, bool) {
	if out == nil {
		return Change{Kind: c.Kind, Row: j.pad(c.Row)}, true
	}
	return Change{Kind: c.Kind, Row: out.row}, out.emit
}
