package session_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// evRow is a row of the arrival test's table ev (id, k, v, g).
type evRow struct {
	id, k, v int64
	g        string
}

// arrivalStep is a statement and its effect on the rows in the order a
// running query receives them: an INSERT appends; a DELETE retracts; an
// UPDATE retracts each row it changes (in table order) and appends the
// new one, as the values log emits -U/+U (-D/+I on a key change).
type arrivalStep struct {
	sql    string
	match  func(evRow) bool // DELETE, UPDATE
	update func(evRow) evRow
	rows   []evRow // INSERT
}

func arrivalSteps() []arrivalStep {
	ins := func(from, to int) arrivalStep {
		var rows []evRow
		var vals []string
		for i := from; i < to; i++ {
			r := evRow{int64(i), int64(i % 5), int64((i * 37) % 23), fmt.Sprintf("g%d", i%4)}
			rows = append(rows, r)
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, '%s')", r.id, r.k, r.v, r.g))
		}
		return arrivalStep{sql: "INSERT INTO ev VALUES " + strings.Join(vals, ", "), rows: rows}
	}
	return []arrivalStep{
		ins(0, 60), {sql: "run"}, {sql: "checkpoint"},
		{sql: "DELETE FROM ev WHERE id % 7 = 3", match: func(r evRow) bool { return r.id%7 == 3 }},
		{sql: "UPDATE ev SET g = g || '!' WHERE v < 6", match: func(r evRow) bool { return r.v < 6 },
			update: func(r evRow) evRow { r.g += "!"; return r }},
		{sql: "run"}, {sql: "crash"},
		ins(60, 90),
		{sql: "DELETE FROM ev WHERE id % 11 = 0", match: func(r evRow) bool { return r.id%11 == 0 }},
		{sql: "UPDATE ev SET id = id + 1000 WHERE k = 2", match: func(r evRow) bool { return r.k == 2 },
			update: func(r evRow) evRow { r.id += 1000; return r }},
		{sql: "run"},
	}
}

// arrivalOrder replays the steps: the final rows in arrival order.
func arrivalOrder(steps []arrivalStep) []evRow {
	var table, arrived []evRow // table order (the values log's) and arrival order
	for _, st := range steps {
		switch {
		case st.rows != nil:
			table, arrived = append(table, st.rows...), append(arrived, st.rows...)
		case st.match != nil:
			var kept []evRow
			for _, r := range table {
				if !st.match(r) {
					kept = append(kept, r)
					continue
				}
				arrived = slices.Delete(arrived, slices.Index(arrived, r), slices.Index(arrived, r)+1)
				if st.update != nil {
					nr := st.update(r)
					kept, arrived = append(kept, nr), append(arrived, nr)
				}
			}
			table = kept
		}
	}
	return arrived
}

// arrivalQueries pair queries with list aggregates by arrival (and, for
// comparison, ordered ones) over ev with their SQLite form over evs, the
// final rows numbered in arrival order (arr).
var arrivalQueries = [][2]string{
	{`SELECT k, STRING_AGG(g, ','), FIRST_VALUE(v), LAST_VALUE(v), LAST_VALUE(g), STRING_AGG(DISTINCT CAST(v AS VARCHAR), ';'), COUNT(*) FROM ev GROUP BY k`,
		`SELECT k, string_agg(g, ',' ORDER BY arr), ` + firstBy("v", "evs", "k", "y.arr") + `, ` + firstBy("v", "evs", "k", "y.arr DESC") + `, ` +
			firstBy("g", "evs", "k", "y.arr DESC") + `, (SELECT string_agg(CAST(v AS TEXT), ';' ORDER BY a) FROM (SELECT v, MIN(arr) AS a FROM evs y WHERE y.k = o.k GROUP BY v)), COUNT(*) FROM evs o GROUP BY k`},
	{`SELECT g, FIRST_VALUE(id), LAST_VALUE(k), STRING_AGG(CAST(k AS VARCHAR), ''), STRING_AGG(CAST(id AS VARCHAR), ',' ORDER BY v DESC, id) FROM ev GROUP BY g`,
		`SELECT g, ` + firstBy("id", "evs", "g", "y.arr") + `, ` + firstBy("k", "evs", "g", "y.arr DESC") + `, string_agg(CAST(k AS TEXT), '' ORDER BY arr),
		 string_agg(CAST(id AS TEXT), ',' ORDER BY v DESC, id) FROM evs o GROUP BY g`},
	{`SELECT STRING_AGG(CAST(id AS VARCHAR), ','), FIRST_VALUE(g), LAST_VALUE(id) FROM ev`,
		`SELECT string_agg(CAST(id AS TEXT), ',' ORDER BY arr), (SELECT g FROM evs ORDER BY arr LIMIT 1), (SELECT id FROM evs ORDER BY arr DESC LIMIT 1) FROM evs`},
}

// TestDifferentialArrivalDML runs arrivalQueries while INSERTs, DELETEs
// and UPDATEs change ev, with a checkpoint and a crash restored at
// another parallelism, on every variant: FIRST_VALUE, LAST_VALUE and
// STRING_AGG by arrival equal SQLite's over the rows in the order the
// query received them, so a DELETE or UPDATE removed its own row (not an
// older row with the same value).
func TestDifferentialArrivalDML(t *testing.T) {
	steps := arrivalSteps()
	db := oracle(t, nil)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE evs (arr INTEGER, id INTEGER, k INTEGER, v INTEGER, g TEXT)"); err != nil {
		t.Fatal(err)
	}
	for i, r := range arrivalOrder(steps) {
		if _, err := db.Exec("INSERT INTO evs VALUES (?, ?, ?, ?, ?)", i, r.id, r.k, r.v, r.g); err != nil {
			t.Fatal(err)
		}
	}
	want := oracleWant(t, db, side(arrivalQueries, 1), 1)
	var script []string
	for _, st := range steps {
		script = append(script, st.sql)
	}
	ddl := `CREATE TABLE ev (id BIGINT, k BIGINT, v BIGINT, g VARCHAR, PRIMARY KEY (id)) WITH (connector = 'values', bounded = 'false');`
	for _, v := range variants {
		for qi, q := range side(arrivalQueries, 0) {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				got, retracts := dmlRunSteps(t, v, ddl, script, q)
				if !slices.Equal(got, want[qi]) {
					t.Errorf("differs from SQLite\n%s\n%s", q, diff(got, want[qi]))
				}
				if !retracts {
					t.Errorf("no -U/-D in the changelog of %s", q)
				}
			})
		}
	}
}
