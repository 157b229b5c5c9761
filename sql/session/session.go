// Package session is clink's SQL entry point for the REPL, `clink run`,
// notebooks and scenario files: a catalog of tables and views, Exec for
// statements that return a printable result, and Query for a streaming
// SELECT whose changes can be iterated, checkpointed, crashed and restored,
// threaded or stepped deterministically.
package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/parser"
	"clink/sql/plan"
	"clink/state"
	"clink/state/stateuri"
)

// Config configures a session. Zero values take defaults.
type Config struct {
	// StateURI names the state backend of keyed operators (default
	// memory://), e.g. disagg-local://?latency=1ms&hot_max_bytes=64MiB.
	StateURI string
	// Parallelism of keyed operators (default: number of CPUs).
	Parallelism int
	// MaxInFlight caps each async subtask's in-flight records (0: engine default).
	MaxInFlight int
	// HashSeed seeds partitioning and key groups.
	HashSeed uint64
	// Bus receives runtime events (nil: none).
	Bus *event.Bus
	// Clock and Executor make runs deterministic: the state tier's latency
	// and completions run on them (an *async.Sim). Idle, when set, makes
	// queries stepped: the caller drives Step / RunUntilIdle and Idle is
	// called when nothing is runnable (a Sim's Step).
	Clock    async.Clock
	Executor async.Executor
	Idle     func() bool
	// BaseDir resolves relative file paths of csv/jsonl tables.
	BaseDir string
	// ForceSync runs every keyed operator on its synchronous path.
	ForceSync bool
	// ChannelCapacity bounds exchange buffers in threaded mode (0: default).
	ChannelCapacity int
	// Seed seeds the simulated latency of disagg-local://.
	Seed uint64
	// CheckpointInterval, when positive, checkpoints every threaded query
	// that often (see docs/durability.md).
	CheckpointInterval time.Duration
	// Resume makes queries started with Query (and INSERT INTO a file
	// table) resume from their checkpoints in the durable state URI:
	// "latest" or a checkpoint id; "" starts them fresh.
	Resume string
	// MaxOutage, when positive, fails a threaded query whose checkpoints
	// keep failing (the remote tier is down) for longer than this; its last
	// completed checkpoint stays intact for a later --restore.
	MaxOutage time.Duration
	// OnCheckpointFailed, when set, is told of every failed checkpoint of
	// a threaded query at once (the query's checkpoint name, the id and
	// why), so no failure is silent; it runs with the job's checkpoint
	// lock held and must not call into the query.
	OnCheckpointFailed func(query string, id state.CheckpointID, err error)
	// OnWritesOutpace, when set, is told when a threaded query's sources
	// have waited a second for a checkpoint to commit the state past its
	// hot budget and a quarter (episodes 1, 2, 4, ...; see behind.go). It runs on the
	// query's checkpoint ticker and must not block.
	OnWritesOutpace func(query string, err error)
	// LookupHTTP, when set, replaces the HTTP client of http lookup tables
	// (a test hook: an in-process, deterministic service for stepped runs
	// on a Sim). nil opens a uring.HTTPPool per lookup stage.
	LookupHTTP ops.HTTPOpener
	// IdleTimeout is the default 'watermark.idle-timeout' of source tables
	// (SET 'watermark.idle-timeout' = '5s'); a table's own option wins.
	// 0: sources never go idle.
	IdleTimeout time.Duration
	// SoftMemoryLimit makes each started query set the process's Go soft
	// memory limit from its hot budget (SoftMemoryLimit), unless GOMEMLIMIT
	// is set: `clink run`, the REPL and the TUI turn it on.
	SoftMemoryLimit bool
	// ResultTail is how many of the newest changes each query keeps for
	// views (Handle.Next, Changes, Tail); older ones are counted, not kept.
	// 0: DefaultResultTail; negative: none.
	ResultTail int
	// MiniBatch folds each GROUP BY's changes per group until the next
	// barrier, watermark or end of input, for results that need only each
	// group's latest row (`clink run --final`): a group updated a million
	// times costs one emitted update per batch.
	MiniBatch bool
	// StrictExpressions makes a row-level expression error (division by
	// zero, overflow, a bad cast of a value) fail the query, as Flink does
	// (SET 'expression.errors' = 'fail'); by default the row gets NULL
	// there (or is dropped where a key fails) and the error is counted
	// (Handle.ExprErrors), as RisingWave does.
	StrictExpressions bool
	// OnQuery, when set, is told of every query's handle before its job
	// starts: SELECTs and the jobs INSERT INTO runs. The done it returns
	// runs once, when the handle closes and before its job is torn down,
	// so the job's final counters are still readable (`clink run
	// --metrics` registers each query's metrics and attach job here).
	OnQuery func(h *Handle) (done func())
}

// DefaultResultTail is the changelog tail a query keeps for its views.
const DefaultResultTail = 10000

// Session holds a catalog and runs statements. Exec and Query must not be
// called concurrently; a running query's handle is safe to read from
// another goroutine.
type Session struct {
	cfg  Config
	cat  *plan.Catalog
	seen map[string]int // query name -> times started (see queryName)
	// warnings logs each configuration warning once per session.
	warnings engine.Warnings
}

// New returns a session; the state URI is checked now.
func New(cfg Config) (*Session, error) {
	if cfg.StateURI == "" {
		cfg.StateURI = "memory://"
	}
	if cfg.Parallelism == 0 {
		cfg.Parallelism = runtime.NumCPU()
	}
	if cfg.Parallelism < 0 {
		return nil, fmt.Errorf("session: parallelism must be positive, got %d", cfg.Parallelism)
	}
	if _, _, err := stateuri.Parse(cfg.StateURI); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if _, _, err := ParseRestore(cfg.Resume); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if cfg.Resume != "" && !Durable(cfg.StateURI) {
		return nil, fmt.Errorf("session: restore %s needs a durable state URI (disagg-file:// or remote-read://), not %s", cfg.Resume, schemeOf(cfg.StateURI))
	}
	return &Session{cfg: cfg, cat: plan.NewCatalog()}, nil
}

// Config returns the session's configuration after defaults.
func (s *Session) Config() Config { return s.cfg }

// Catalog exposes the tables and views (read-only use).
func (s *Session) Catalog() *plan.Catalog { return s.cat }

// SetStateURI changes the state backend for later queries.
func (s *Session) SetStateURI(uri string) error {
	if _, _, err := stateuri.Parse(uri); err != nil {
		return err
	}
	s.cfg.StateURI = uri
	return nil
}

// SetMaxInFlight changes the in-flight cap of later queries' async
// subtasks (0: the engine default).
func (s *Session) SetMaxInFlight(n int) error {
	if n < 0 {
		return fmt.Errorf("in-flight cap must not be negative, got %d", n)
	}
	s.cfg.MaxInFlight = n
	return nil
}

// SetParallelism changes the keyed operators' parallelism for later queries.
func (s *Session) SetParallelism(p int) error {
	if p < 1 {
		return fmt.Errorf("parallelism must be at least 1, got %d", p)
	}
	s.cfg.Parallelism = p
	return nil
}

// Error is a statement error with the SQL it refers to; Error() renders
// "error at L:C: msg" plus the offending line and a caret when the cause
// is positioned.
type Error struct {
	SQL string
	Err error
}

// Error renders the message and caret.
func (e *Error) Error() string {
	var ae *ast.Error
	if errors.As(e.Err, &ae) {
		msg := ae.Error()
		if full := e.Err.Error(); full != msg {
			msg = full
		}
		return msg + "\n" + ast.Caret(e.SQL, ae.Pos)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Pos returns the error's position, if it has one.
func (e *Error) Pos() (ast.Pos, bool) {
	var ae *ast.Error
	if errors.As(e.Err, &ae) {
		return ae.Pos, true
	}
	return ast.Pos{}, false
}

func wrap(src string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{SQL: src, Err: err}
}

// Exec runs every statement of a script and returns one result per
// statement. A SELECT runs to the end of its (bounded) inputs and returns
// the final materialised table with ORDER BY / LIMIT applied. The first
// failing statement stops the script.
func (s *Session) Exec(ctx context.Context, script string) ([]*Result, error) {
	stmts, err := parser.ParseScript(script)
	if err != nil {
		return nil, wrap(script, err)
	}
	var out []*Result
	for _, st := range stmts {
		r, err := s.exec(ctx, st.AST, st.Text)
		if err != nil {
			return out, wrap(script, err)
		}
		r.Statement = st.Text
		out = append(out, r)
	}
	return out, nil
}

func (s *Session) exec(ctx context.Context, st ast.Statement, text string) (*Result, error) {
	switch st := st.(type) {
	case *ast.CreateTable:
		if err := s.cat.CreateTable(st); err != nil {
			return nil, err
		}
		return message("created table %s", st.Name), nil
	case *ast.CreateView:
		if err := s.cat.CreateView(st); err != nil {
			return nil, err
		}
		return message("created view %s", st.Name), nil
	case *ast.Drop:
		if err := s.cat.Drop(st); err != nil {
			return nil, err
		}
		return message("dropped %s %s", strings.ToLower(st.Object), st.Name), nil
	case *ast.Show:
		return s.show(st)
	case *ast.Describe:
		rows, err := s.cat.Describe(st.Name, st.At)
		if err != nil {
			return nil, err
		}
		return &Result{Columns: []string{"column", "type", "watermark"}, Rows: rows}, nil
	case *ast.Explain:
		return s.explain(st)
	case *ast.Insert:
		return s.insert(ctx, st)
	case *ast.Delete:
		return s.deleteRows(st)
	case *ast.Update:
		return s.updateRows(st)
	case *ast.Set:
		return s.set(st)
	case *ast.QueryStmt:
		return s.runToEnd(ctx, st.Query)
	}
	return nil, ast.Errorf(st.Position(), "statement not supported yet")
}

func (s *Session) show(st *ast.Show) (*Result, error) {
	var rows [][]string
	switch strings.ToUpper(st.What) {
	case "TABLES":
		for _, n := range s.cat.Tables() {
			t, _ := s.cat.Table(n)
			rows = append(rows, []string{n, "table", t.Connector})
		}
		for _, n := range s.cat.Views() {
			rows = append(rows, []string{n, "view", ""})
		}
	case "VIEWS":
		for _, n := range s.cat.Views() {
			rows = append(rows, []string{n, "view", ""})
		}
	case "ALL":
		return &Result{Columns: []string{"setting", "value"}, Rows: s.settings()}, nil
	case "SETTING":
		for _, kv := range s.settings() {
			if kv[0] == strings.ToLower(st.Setting) || (kv[0] == "state" && isStateKey(st.Setting)) {
				return &Result{Columns: []string{kv[0]}, Rows: [][]string{{kv[1]}}}, nil
			}
		}
		return nil, ast.Errorf(st.At, "unknown setting %s (SHOW ALL lists them)", st.Setting)
	default:
		return nil, ast.Errorf(st.At, "SHOW %s is not supported", st.What)
	}
	return &Result{Columns: []string{"name", "kind", "connector"}, Rows: rows}, nil
}

// settings lists what SET changes, with the current values (the state
// URI redacted), for SHOW ALL and SHOW name.
func (s *Session) settings() [][]string {
	return [][]string{
		{"parallelism", strconv.Itoa(s.cfg.Parallelism)},
		{"state", stateuri.Redact(s.cfg.StateURI)},
		{plan.AllowedLatenessOption, (time.Duration(s.cat.AllowedLateness()) * time.Millisecond).String()},
		{connector.IdleTimeoutOption, s.cfg.IdleTimeout.String()},
		{ExpressionErrorsOption, s.expressionErrorsValue()},
		{plan.LocalTimeZoneOption, s.cat.Zone().Name},
	}
}

func isStateKey(k string) bool {
	switch strings.ToLower(k) {
	case "state", "state.uri", "state_uri":
		return true
	}
	return false
}

func (s *Session) set(st *ast.Set) (*Result, error) {
	switch key := strings.ToLower(st.Key); {
	case isStateKey(key):
		if err := s.SetStateURI(st.Value); err != nil {
			return nil, ast.Errorf(st.At, "%v", err)
		}
	case key == "parallelism":
		var p int
		if _, err := fmt.Sscan(st.Value, &p); err != nil || p < 1 {
			return nil, ast.Errorf(st.At, "parallelism must be a positive integer, got %q", st.Value)
		}
		s.cfg.Parallelism = p
	case key == plan.AllowedLatenessOption:
		ms, err := plan.ParseLateness(st.Value)
		if err != nil {
			return nil, ast.Errorf(st.At, "%v", err)
		}
		s.cat.SetAllowedLateness(ms)
	case key == connector.IdleTimeoutOption:
		d, err := time.ParseDuration(strings.TrimSpace(st.Value))
		if err != nil || d < 0 {
			return nil, ast.Errorf(st.At, "%s: want a non-negative duration such as '5s' or '500ms', got %q", connector.IdleTimeoutOption, st.Value)
		}
		s.cfg.IdleTimeout = d
	case key == ExpressionErrorsOption:
		strict, err := parseExpressionErrors(st.Value)
		if err != nil {
			return nil, ast.Errorf(st.At, "%v", err)
		}
		s.cfg.StrictExpressions = strict
	case key == plan.LocalTimeZoneOption || key == "timezone" || key == "time zone":
		z, err := expr.NewZone(st.Value)
		if err != nil {
			at := st.ValueAt
			if at == (ast.Pos{}) {
				at = st.At
			}
			return nil, ast.Errorf(at, "%s: %v", plan.LocalTimeZoneOption, err)
		}
		s.cat.SetZone(z)
	default:
		return nil, ast.Errorf(st.At, "unknown setting %s (known: parallelism, state, %s, %s, %s, %s)", st.Key,
			plan.AllowedLatenessOption, connector.IdleTimeoutOption, ExpressionErrorsOption, plan.LocalTimeZoneOption)
	}
	return message("set %s = %s", st.Key, st.Value), nil
}

// schemeOf names a URI's scheme without printing the rest (it may hold
// secrets).
func schemeOf(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		return uri[:i+3]
	}
	return "an invalid URI"
}
