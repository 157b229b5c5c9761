// Package connector holds clink's SQL sources and sinks: the table
// definition a CREATE TABLE produces, the values, nexmark, csv, jsonl and
// datagen sources (each resumable from a checkpointed position, each
// emitting watermarks from the table's WATERMARK FOR declaration), and the
// collecting print sink and the CSV / JSONL file sinks.
package connector

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// Table is a table of the catalog: its columns, watermark and connector.
type Table struct {
	Name      string
	At        ast.Pos
	Columns   []expr.Column
	ColumnPos []ast.Pos
	// Metadata holds, per column, the key of a METADATA FROM column (a
	// Kafka record's 'timestamp', 'partition', ...); "" for a physical
	// column. Nil when the table has none.
	Metadata []string
	// Watermark computes a row's watermark candidate (WATERMARK FOR ts AS
	// expr); nil without a declaration. WatermarkText is its SQL.
	Watermark     expr.Expr
	WatermarkText string
	// WatermarkColumn is the column WATERMARK FOR names: the table's time
	// attribute, whose watermark a window or interval join can rely on.
	WatermarkColumn string
	Connector       string
	Options         map[string]string
	OptionPos       map[string]ast.Pos
	// Values holds a values table's changes (INSERT appends, DELETE and
	// UPDATE retract).
	Values *ValuesLog
	// AppendOnly is a values table's 'append-only' option (default true:
	// append-only until its first DELETE or UPDATE; false: updating from
	// the start).
	AppendOnly bool
	// PrimaryKey holds the PRIMARY KEY's column indexes (nil: none).
	PrimaryKey []int
	// Bounded is decided at CREATE: whether a scan of the table ends.
	Bounded bool
	// Computed holds the computed columns in declaration order (nil:
	// none); Columns holds only the physical ones (computed.go).
	Computed []Computed
	// ProcTime names the processing-time attribute ("pt AS PROCTIME()");
	// "" for none.
	ProcTime string
}

// Schema returns the table's columns qualified by qualifier.
func (t *Table) Schema(qualifier string) *expr.Schema {
	cols := make([]expr.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = expr.Column{Table: qualifier, Name: c.Name, Type: c.Type}
	}
	return expr.NewSchema(cols...)
}

// Opt returns an option's value and whether it was given. Keys compare
// case-insensitively.
func (t *Table) Opt(key string) (string, bool) {
	v, ok := t.Options[strings.ToLower(key)]
	return v, ok
}

// OptErr returns a positioned error about option key.
func (t *Table) OptErr(key, format string, args ...any) error {
	pos, ok := t.OptionPos[strings.ToLower(key)]
	if !ok {
		pos = t.At
	}
	return ast.Errorf(pos, "table %s: option %s: %s", t.Name, key, fmt.Sprintf(format, args...))
}

// IntOpt reads an integer option with a default.
func (t *Table) IntOpt(key string, def int64) (int64, error) {
	s, ok := t.Opt(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, t.OptErr(key, "want an integer, got %q", s)
	}
	return n, nil
}

// FloatOpt reads a number option with a default.
func (t *Table) FloatOpt(key string, def float64) (float64, error) {
	s, ok := t.Opt(key)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, t.OptErr(key, "want a number, got %q", s)
	}
	return f, nil
}

// BoolOpt reads a boolean option with a default.
func (t *Table) BoolOpt(key string, def bool) (bool, error) {
	s, ok := t.Opt(key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return false, t.OptErr(key, "want true or false, got %q", s)
	}
	return b, nil
}

// OptionString renders the options sorted by key, for DESCRIBE.
func (t *Table) OptionString() string {
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s='%s'", k, t.Options[k])
	}
	return strings.Join(parts, ", ")
}

// Env is what a source needs from the session besides its table.
type Env struct {
	// BaseDir resolves relative file paths (the script's directory).
	BaseDir string
	// Clock paces rate-limited sources (nil: no pacing).
	Clock async.Clock
	// EndInput, when set and true, makes unbounded values sources end at
	// the end of their rows.
	EndInput *atomic.Bool
	// Rejects counts rows a source skipped (on_error='skip').
	Rejects *atomic.Int64
	// KafkaLag, when set, receives kafka sources' consumer lag.
	KafkaLag *KafkaLag
	// FileBacklog, when set, receives file sources' remaining bytes.
	FileBacklog *FileBacklog
	// IdleTimeout is the session's default idle timeout of sources
	// (SET 'watermark.idle-timeout'); a table's own option wins. 0: none.
	IdleTimeout time.Duration
	// Subtask and Parallelism place a source subtask among its stage's
	// (a kafka scan spreads partitions over them); zero for one subtask.
	Subtask, Parallelism int
	// MaxOutage is the job's outage limit (clink run --max-outage), the
	// default connect.max-outage of kafka tables: > 0 the limit, < 0
	// forever, 0 the connector's own default (10m).
	MaxOutage time.Duration
	// ProcTick, when > 0, is the spacing of the processing-time window
	// ends the query's windows have (their sizes', slides' and offsets'
	// greatest common divisor): a source with a PROCTIME attribute sets
	// a clock timer at the next end after each row, so the windows fire
	// when the clock reaches it (proctime.go).
	ProcTick time.Duration
	// ProcSpan is the largest size among those windows: after a row the
	// timers go on until its last window has ended.
	ProcSpan time.Duration
	// RowErrors, when set, makes a WATERMARK expression that fails on a
	// row give no watermark for it (counted) instead of failing the query.
	RowErrors *expr.RowErrors
}

// Path resolves a file path option against BaseDir.
func (e Env) Path(p string) string {
	if filepath.IsAbs(p) || e.BaseDir == "" {
		return p
	}
	return filepath.Join(e.BaseDir, p)
}

// FinalWatermark is the +inf watermark a bounded source emits before its end.
const FinalWatermark int64 = math.MaxInt64

// rowReader is a connector's row stream; the watermark wrapper turns it
// into an engine source.
type rowReader interface {
	// next returns the next row; ok=false with end=false means nothing yet.
	next() (row types.Row, ok, end bool, err error)
	position() []byte
	seek(pos []byte) error
	close() error
}

// Source adapts a rowReader to engine.Source: it emits each row as +I
// (a kindReader's with its kind), then a watermark whenever the table's
// watermark expression raises the maximum, and at the end the final
// watermark and EndOfInput.
type Source struct {
	table *Table
	r     rowReader
	kinds kindReader // r when its rows may retract, else nil
	// watermark is the table's WATERMARK expression (nil: none).
	watermark expr.Expr
	wm        int64
	wmDue     bool
	state     uint8 // 0 rows, 1 final watermark sent, 2 ended
	idle      idleness
	// ext, when set, is a source that does all of the above itself (a
	// kafka subtask: per-partition watermarks and positions).
	ext engine.Source[ops.Change]
	// clock stamps the rows' processing time (computed columns).
	clock async.Clock
	// proc, for a table with a PROCTIME attribute, turns the clock into
	// the watermark (proctime.go); nil otherwise.
	proc *procTime
}

// kindReader is a rowReader whose rows carry a change kind (a values
// table's DELETE and UPDATE): lastKind is that of the row next returned.
type kindReader interface{ lastKind() ops.Kind }

func newSource(t *Table, r rowReader) *Source {
	kinds, _ := r.(kindReader)
	return &Source{table: t, r: r, kinds: kinds, watermark: t.Watermark, wm: math.MinInt64, clock: async.RealClock{}}
}
