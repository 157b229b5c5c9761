package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/types"
)

// View is a named query. Names, when CREATE VIEW v (a, b) gave them,
// rename the query's columns.
type View struct {
	Name    string
	Query   *ast.Query
	Text    string
	Names   []string
	Columns []expr.Column
}

// Catalog holds a session's tables and views.
type Catalog struct {
	tables map[string]*connector.Table
	views  map[string]*View
	// lateness is the session's default allowed lateness of windows, ms
	// (bind_window_lateness.go).
	lateness int64
	// zone is the session time zone (catalog_zone.go); zero: UTC.
	zone expr.Zone
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*connector.Table{}, views: map[string]*View{}}
}

func lookup[V any](m map[string]V, name string) (V, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, name) && name == strings.ToLower(name) {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// Table returns a table by name.
func (c *Catalog) Table(name string) (*connector.Table, bool) { return lookup(c.tables, name) }

// View returns a view by name.
func (c *Catalog) View(name string) (*View, bool) { return lookup(c.views, name) }

// Tables returns the table names, sorted.
func (c *Catalog) Tables() []string { return sortedKeys(c.tables) }

// Views returns the view names, sorted.
func (c *Catalog) Views() []string { return sortedKeys(c.views) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *Catalog) exists(name string) bool {
	_, t := c.Table(name)
	_, v := c.View(name)
	return t || v
}

// connectors lists the connectors CREATE TABLE accepts.
var connectors = map[string]bool{"values": true, "nexmark": true, "csv": true, "jsonl": true, "datagen": true, "http": true,
	"kafka": true, "upsert-kafka": true}

// CreateTable adds a table. Connector options are checked now, so a bad
// table fails at CREATE rather than at its first query.
func (c *Catalog) CreateTable(ct *ast.CreateTable) error {
	return c.inZone(func() error { return c.createTable(ct) })
}

func (c *Catalog) createTable(ct *ast.CreateTable) error {
	if c.exists(ct.Name) {
		if ct.IfNotExists {
			return nil
		}
		return ast.Errorf(ct.At, "table or view %s already exists", ct.Name)
	}
	t := &connector.Table{Name: ct.Name, At: ct.At, Options: map[string]string{}, OptionPos: map[string]ast.Pos{}}
	for i, col := range ct.Columns {
		for _, prev := range ct.Columns[:i] {
			if strings.EqualFold(prev.Name, col.Name) {
				return ast.Errorf(col.At, "duplicate column %s", col.Name)
			}
		}
		if col.Computed != nil {
			continue
		}
		t.Columns = append(t.Columns, expr.Column{Name: col.Name, Type: col.Type})
		t.ColumnPos = append(t.ColumnPos, col.At)
		if col.Metadata != "" {
			if t.Metadata == nil {
				t.Metadata = make([]string, len(ct.Columns))
			}
			t.Metadata[len(t.Columns)-1] = col.Metadata
		}
	}
	if err := checkPrimaryKey(ct); err != nil {
		return err
	}
	for _, o := range ct.Options {
		k := strings.ToLower(o.Key)
		t.Options[k], t.OptionPos[k] = o.Value, o.At
	}
	t.Connector = strings.ToLower(t.Options["connector"])
	if t.Connector == "" {
		t.Connector = "values"
	}
	if !connectors[t.Connector] {
		return t.OptErr("connector", "unknown connector %q (known: csv, datagen, http, jsonl, kafka, nexmark, upsert-kafka, values)", t.Connector)
	}
	if t.Connector != "kafka" && t.Connector != "upsert-kafka" {
		for i, m := range t.Metadata {
			if m != "" {
				return ast.Errorf(t.ColumnPos[i], "table %s: column %s: METADATA columns need connector 'kafka' or 'upsert-kafka', not %q", t.Name, t.Columns[i].Name, t.Connector)
			}
		}
	}
	if err := computedColumns(t, ct); err != nil {
		return err
	}
	if err := procTimeWatermark(t, ct.Watermark); err != nil {
		return err
	}
	if err := c.watermark(t, ct.Watermark); err != nil {
		return err
	}
	if err := primaryKey(t, ct); err != nil {
		return err
	}
	if err := checkConnector(t); err != nil {
		return err
	}
	if _, err := connector.IdleTimeout(t); err != nil {
		return err
	}
	if _, _, err := tableLateness(t); err != nil {
		return err
	}
	c.tables[ct.Name] = t
	return nil
}

// checkPrimaryKey: every PRIMARY KEY column is a column of the table,
// named once (PostgreSQL's checks), each error at the name.
func checkPrimaryKey(ct *ast.CreateTable) error {
	for i, name := range ct.PrimaryKey {
		at := ct.At
		if i < len(ct.PrimaryAt) {
			at = ct.PrimaryAt[i]
		}
		if !slices.ContainsFunc(ct.Columns, func(c ast.ColumnDef) bool { return strings.EqualFold(c.Name, name) }) {
			return ast.Errorf(at, "PRIMARY KEY column %s is not a column of table %s", name, ct.Name)
		}
		if slices.ContainsFunc(ct.PrimaryKey[:i], func(p string) bool { return strings.EqualFold(p, name) }) {
			return ast.Errorf(at, "column %s appears twice in PRIMARY KEY", name)
		}
	}
	return nil
}

func (c *Catalog) watermark(t *connector.Table, w *ast.Watermark) error {
	if w == nil {
		return nil
	}
	s := t.ScanSchema("")
	at := w.ColumnAt
	if at == (ast.Pos{}) {
		at = w.At
	}
	idx, err := s.Resolve(&ast.ColumnRef{At: at, Name: w.Column})
	if err != nil {
		return err
	}
	if s.Cols[idx].Type.Kind != types.KindTimestamp {
		return ast.Errorf(w.At, "WATERMARK FOR %s: column must be a TIMESTAMP, got %s", w.Column, s.Cols[idx].Type)
	}
	e, err := expr.Compile(w.Expr, s)
	if err != nil {
		return err
	}
	if e.Type().Kind != types.KindTimestamp {
		return ast.Errorf(w.Expr.Position(), "watermark expression must be a TIMESTAMP, got %s", e.Type())
	}
	t.Watermark, t.WatermarkText, t.WatermarkColumn = e, ast.String(w.Expr), s.Cols[idx].Name
	return nil
}

func checkConnector(t *connector.Table) error {
	if err := connector.CheckOptions(t); err != nil {
		return err
	}
	var err error
	switch t.Connector {
	case "values":
		if t.Bounded, err = t.BoolOpt("bounded", true); err == nil {
			t.AppendOnly, err = t.BoolOpt("append-only", true)
		}
		t.Values = &connector.ValuesLog{}
	case "nexmark":
		var n int64
		n, err = t.IntOpt("events", 0)
		t.Bounded = n > 0
	case "datagen":
		var n int64
		n, err = t.IntOpt("rows", 0)
		t.Bounded = n > 0
	case "http":
		_, err = connector.ParseHTTP(t)
	case "kafka", "upsert-kafka":
		var k *connector.KafkaOptions
		k, err = connector.ParseKafka(t)
		if err == nil {
			t.Bounded = k.Bounded()
		}
	case "csv", "jsonl":
		if _, ok := t.Opt("path"); !ok {
			return ast.Errorf(t.At, "table %s: connector %s needs a path option", t.Name, t.Connector)
		}
		// unbounded when 'source.monitor-interval' watches the path
		t.Bounded, err = connector.FileBounded(t)
	}
	if err != nil {
		return err
	}
	if t.Connector == "nexmark" || t.Connector == "datagen" {
		// open once to check columns and options (cheap: generators)
		if _, err := connector.Open(t, connector.Env{}); err != nil {
			return err
		}
	}
	return nil
}

// CreateView adds a view after planning its query (so errors show at
// CREATE VIEW and the view's columns are known).
func (c *Catalog) CreateView(cv *ast.CreateView) error {
	return c.inZone(func() error { return c.createView(cv) })
}

func (c *Catalog) createView(cv *ast.CreateView) error {
	if c.exists(cv.Name) {
		if cv.IfNotExists {
			return nil
		}
		return ast.Errorf(cv.At, "table or view %s already exists", cv.Name)
	}
	q, err := c.plan(cv.Query)
	if err != nil {
		return err
	}
	cols, err := viewColumns(cv, q.Columns)
	if err != nil {
		return err
	}
	c.views[cv.Name] = &View{Name: cv.Name, Query: cv.Query, Text: cv.Text, Names: cv.Columns, Columns: cols}
	return nil
}

// viewColumns applies CREATE VIEW v (a, b)'s column list: one name per
// column of the query, no duplicates.
func viewColumns(cv *ast.CreateView, cols []expr.Column) ([]expr.Column, error) {
	if cv.Columns == nil {
		return cols, nil
	}
	if len(cv.Columns) != len(cols) {
		return nil, ast.Errorf(cv.At, "view %s names %d column%s but its query has %d", cv.Name, len(cv.Columns), plural(len(cv.Columns)), len(cols))
	}
	out := make([]expr.Column, len(cols))
	for i, name := range cv.Columns {
		for _, prev := range cv.Columns[:i] {
			if strings.EqualFold(prev, name) {
				return nil, ast.Errorf(cv.At, "view %s: column %s named twice", cv.Name, name)
			}
		}
		out[i] = expr.Column{Name: name, Type: cols[i].Type}
	}
	return out, nil
}

// Drop removes a table or view.
func (c *Catalog) Drop(d *ast.Drop) error {
	isView := strings.Contains(strings.ToUpper(d.Object), "VIEW")
	var ok bool
	if isView {
		if _, ok = c.View(d.Name); ok {
			c.dropName(c.views, d.Name)
		}
	} else if _, ok = c.Table(d.Name); ok {
		c.dropName(c.tables, d.Name)
	}
	if !ok && !d.IfExists {
		return ast.Errorf(d.At, "%s %s does not exist", strings.ToLower(d.Object), d.Name)
	}
	return nil
}

func (c *Catalog) dropName(m any, name string) {
	switch m := m.(type) {
	case map[string]*View:
		for k := range m {
			if k == name || strings.EqualFold(k, name) {
				delete(m, k)
				return
			}
		}
	case map[string]*connector.Table:
		for k := range m {
			if k == name || strings.EqualFold(k, name) {
				delete(m, k)
				return
			}
		}
	}
}

// Describe renders a table's or view's columns.
func (c *Catalog) Describe(name string, at ast.Pos) ([][]string, error) {
	if t, ok := c.Table(name); ok {
		var rows [][]string
		for _, col := range t.ScanColumns() {
			wm := ""
			if t.Watermark != nil && strings.Contains(t.WatermarkText, col.Name) {
				wm = t.WatermarkText
			}
			rows = append(rows, []string{col.Name, describeType(t, col), wm})
		}
		return rows, nil
	}
	if v, ok := c.View(name); ok {
		var rows [][]string
		for _, col := range v.Columns {
			rows = append(rows, []string{col.Name, col.Type.String(), ""})
		}
		return rows, nil
	}
	return nil, ast.Errorf(at, "unknown table or view %s%s", name, ast.DidYouMean(name, append(c.Tables(), c.Views()...)))
}

func errorf(pos ast.Pos, format string, args ...any) error {
	return ast.Errorf(pos, "%s", fmt.Sprintf(format, args...))
}
