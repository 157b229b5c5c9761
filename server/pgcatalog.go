package server

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"clink/sql/types"
)

// The catalog subset: clink has no pg_catalog tables, so the queries psql
// and drivers send about it are recognised by shape and answered from
// clink's catalog (docs/serve.md lists them). A catalog query that is not
// recognised gets its select list's columns and no rows, which psql shows
// as an empty section.

// relation is one table, view or materialised view as the catalog
// queries see it.
type relation struct {
	oid  int64
	name string
	kind string // r, v or m (pg_class.relkind)
	cols []column
}

// isCatalogQuery reports whether a statement reads PostgreSQL's catalog
// or its functions.
func isCatalogQuery(t string) bool {
	l := strings.ToLower(t)
	if !strings.HasPrefix(l, "select") && !strings.HasPrefix(l, "with") {
		return false
	}
	for _, w := range []string{"pg_catalog.", "pg_class", "pg_type", "pg_namespace", "pg_attribute", "pg_database",
		"pg_settings", "pg_roles", "pg_user", "information_schema.", "version()", "current_setting(",
		"current_database()", "current_schema", "current_user", "session_user", "pg_backend_pid()", "set_config(",
		"has_table_privilege", "pg_is_in_recovery()"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// relations lists the catalog's relations, sorted by name.
func (c *core) relations() []relation {
	c.mu.Lock()
	defer c.mu.Unlock()
	cat := c.sess.Catalog()
	var out []relation
	for _, n := range cat.Tables() {
		if j := c.mvs[strings.ToLower(n)]; j != nil {
			out = append(out, relation{name: n, kind: "m", cols: j.cols})
			continue
		}
		t, _ := cat.Table(n)
		r := relation{name: n, kind: "r"}
		for _, col := range t.Columns {
			r.cols = append(r.cols, column{Name: col.Name, Type: col.Type})
		}
		out = append(out, r)
	}
	for _, n := range cat.Views() {
		v, _ := cat.View(n)
		r := relation{name: n, kind: "v"}
		for i, col := range v.Columns {
			name := col.Name
			if i < len(v.Names) && v.Names[i] != "" {
				name = v.Names[i]
			}
			r.cols = append(r.cols, column{Name: name, Type: col.Type})
		}
		out = append(out, r)
	}
	for i := range out {
		out[i].oid = relOID(out[i].name)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

// relOID is a relation's stable oid (psql looks a relation up by name,
// then asks about it by oid).
func relOID(name string) int64 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(name)))
	return 16384 + int64(h.Sum32()%1000000)
}

var (
	reRelName  = regexp.MustCompile(`(?i)relname\s+operator\(pg_catalog\.~\)\s+'\^\((.*?)\)\$'`)
	reRelOID   = regexp.MustCompile(`(?i)c\.oid\s*=\s*'(\d+)'`)
	reAttRel   = regexp.MustCompile(`(?i)a\.attrelid\s*=\s*'(\d+)'`)
	reRelKinds = regexp.MustCompile(`(?i)c\.relkind\s+in\s*\(([^)]*)\)`)
	reSetting  = regexp.MustCompile(`(?i)current_setting\(\s*'([^']+)'`)
	reISName   = regexp.MustCompile(`(?i)table_name\s*=\s*'([^']+)'`)
)

// catalogQuery answers a catalog query.
func (c *core) catalogQuery(cs *connState, q string) (*result, error) {
	l := strings.ToLower(q)
	cols := selectList(q)
	switch {
	case strings.Contains(l, "from pg_catalog.pg_class c") && strings.Contains(l, "pg_get_userbyid"):
		return c.listRelations(q, cols), nil
	case reRelName.MatchString(q):
		return c.relationByName(reRelName.FindStringSubmatch(q)[1], cols), nil
	case strings.Contains(l, "c.relchecks") && reRelOID.MatchString(q):
		return c.relationInfo(reRelOID.FindStringSubmatch(q)[1], cols), nil
	case strings.Contains(l, "from pg_catalog.pg_attribute a") && reAttRel.MatchString(q):
		return c.attributes(reAttRel.FindStringSubmatch(q)[1], cols), nil
	case strings.Contains(l, "information_schema.tables"):
		return c.schemaTables(q, cols), nil
	case strings.Contains(l, "information_schema.columns"):
		return c.schemaColumns(q, cols), nil
	case !hasTopLevelFrom(q):
		return functionRow(cs, q, cols), nil
	}
	return &result{Columns: textColumns(cols...), Tag: "SELECT 0"}, nil
}

// functionRow answers a SELECT of functions without FROM (version(),
// current_setting('x'), current_database(), ...): one row.
func functionRow(cs *connState, q string, cols []string) *result {
	row := make(types.Row, len(cols))
	exprs := selectExprs(q)
	for i := range cols {
		e := ""
		if i < len(exprs) {
			e = strings.ToLower(exprs[i])
		}
		v := ""
		switch {
		case strings.Contains(e, "version()"):
			v = "PostgreSQL " + ServerVersion + " (clink streaming SQL engine)"
		case strings.Contains(e, "current_setting("):
			if m := reSetting.FindStringSubmatch(e); m != nil {
				v, _ = cs.get(m[1])
			}
		case strings.Contains(e, "current_database()"):
			v = "clink"
		case strings.Contains(e, "current_schema"):
			v = "public"
		case strings.Contains(e, "current_user"), strings.Contains(e, "session_user"):
			v = "clink"
		case strings.Contains(e, "pg_backend_pid()"):
			v = strconv.Itoa(int(cs.pid))
		case strings.Contains(e, "pg_is_in_recovery()"):
			v = "f"
		}
		row[i] = types.NewVarchar(v)
	}
	return &result{Columns: textColumns(cols...), Rows: []types.Row{row}, Tag: "SELECT 1"}
}

// listRelations answers psql's \d, \dt, \dv and \dm: Schema, Name, Type,
// Owner of the relations of the asked kinds.
func (c *core) listRelations(q string, cols []string) *result {
	kinds := "rvm"
	if m := reRelKinds.FindStringSubmatch(q); m != nil {
		kinds = strings.NewReplacer("'", "", ",", "", " ", "").Replace(m[1])
	}
	names := map[string]string{"r": "table", "v": "view", "m": "materialized view"}
	r := &result{Columns: textColumns(cols...)}
	for _, rel := range c.relations() {
		if !strings.Contains(kinds, rel.kind) {
			continue
		}
		vals := []string{"public", rel.name, names[rel.kind], "clink"}
		r.Rows = append(r.Rows, fillRow(cols, vals))
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	return r
}

// relationByName answers \d NAME's lookup: oid, nspname, relname.
func (c *core) relationByName(pattern string, cols []string) *result {
	re, err := regexp.Compile("(?i)^(" + pattern + ")$")
	r := &result{Columns: textColumns(cols...)}
	if err == nil {
		for _, rel := range c.relations() {
			if re.MatchString(rel.name) {
				r.Rows = append(r.Rows, fillRow(cols, []string{strconv.FormatInt(rel.oid, 10), "public", rel.name}))
			}
		}
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	return r
}

func (c *core) relationOf(oid string) (relation, bool) {
	for _, rel := range c.relations() {
		if strconv.FormatInt(rel.oid, 10) == oid {
			return rel, true
		}
	}
	return relation{}, false
}

// relationInfo answers \d NAME's second query (relkind and flags), one
// row whose columns psql reads by position: flags false, relkind real.
func (c *core) relationInfo(oid string, cols []string) *result {
	rel, ok := c.relationOf(oid)
	r := &result{Columns: textColumns(cols...), Tag: "SELECT 0"}
	if !ok {
		return r
	}
	row := make(types.Row, len(cols))
	for i, name := range cols {
		v := ""
		switch n := strings.ToLower(name); {
		case strings.HasPrefix(n, "relhas"), n == "relrowsecurity", n == "relforcerowsecurity", n == "relispartition":
			v = "f"
		}
		switch strings.ToLower(name) {
		case "relkind":
			v = rel.kind
		case "relchecks":
			v = "0"
		case "relpersistence":
			v = "p"
		case "relreplident":
			v = "d"
		}
		row[i] = types.NewVarchar(v)
	}
	r.Rows, r.Tag = []types.Row{row}, "SELECT 1"
	return r
}

// attributes answers \d NAME's column query: name, type, default,
// not-null and the rest empty.
func (c *core) attributes(oid string, cols []string) *result {
	rel, ok := c.relationOf(oid)
	r := &result{Columns: textColumns(cols...), Tag: "SELECT 0"}
	if !ok {
		return r
	}
	for _, col := range rel.cols {
		row := make(types.Row, len(cols))
		for i := range cols {
			switch i {
			case 0:
				row[i] = types.NewVarchar(col.Name)
			case 1:
				row[i] = types.NewVarchar(pgTypeName(col.Type))
			case 3:
				row[i] = types.NewVarchar("f")
			default:
				row[i] = types.NewVarchar("")
			}
		}
		if len(cols) > 2 {
			row[2] = types.NullValue
		}
		r.Rows = append(r.Rows, row)
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	return r
}

// schemaTables answers information_schema.tables: table_catalog,
// table_schema, table_name, table_type (filtered by table_name = 'x').
func (c *core) schemaTables(q string, cols []string) *result {
	want := ""
	if m := reISName.FindStringSubmatch(q); m != nil {
		want = m[1]
	}
	types := map[string]string{"r": "BASE TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW"}
	var rows []map[string]string
	for _, rel := range c.relations() {
		if want == "" || strings.EqualFold(want, rel.name) {
			rows = append(rows, map[string]string{"table_catalog": "clink", "table_schema": "public",
				"table_name": rel.name, "table_type": types[rel.kind]})
		}
	}
	return project(cols, rows)
}

// schemaColumns answers information_schema.columns.
func (c *core) schemaColumns(q string, cols []string) *result {
	want := ""
	if m := reISName.FindStringSubmatch(q); m != nil {
		want = m[1]
	}
	var rows []map[string]string
	for _, rel := range c.relations() {
		if want != "" && !strings.EqualFold(want, rel.name) {
			continue
		}
		for i, col := range rel.cols {
			rows = append(rows, map[string]string{"table_catalog": "clink", "table_schema": "public",
				"table_name": rel.name, "column_name": col.Name, "ordinal_position": strconv.Itoa(i + 1),
				"data_type": pgTypeName(col.Type), "is_nullable": "YES"})
		}
	}
	return project(cols, rows)
}

// project lays named values out in the select list's columns ("*": all
// of the first row's, in a fixed order).
func project(cols []string, rows []map[string]string) *result {
	if len(cols) == 1 && cols[0] == "*" {
		cols = []string{"table_catalog", "table_schema", "table_name", "table_type", "column_name",
			"ordinal_position", "data_type", "is_nullable"}
		if len(rows) > 0 {
			kept := cols[:0]
			for _, c := range cols {
				if _, ok := rows[0][c]; ok {
					kept = append(kept, c)
				}
			}
			cols = kept
		}
	}
	r := &result{Columns: textColumns(cols...)}
	for _, m := range rows {
		row := make(types.Row, len(cols))
		for i, c := range cols {
			row[i] = types.NewVarchar(m[strings.ToLower(c)])
		}
		r.Rows = append(r.Rows, row)
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	return r
}

// fillRow puts vals in the first columns and empty strings in the rest.
func fillRow(cols []string, vals []string) types.Row {
	row := make(types.Row, len(cols))
	for i := range cols {
		row[i] = types.NewVarchar("")
		if i < len(vals) {
			row[i] = types.NewVarchar(vals[i])
		}
	}
	return row
}
