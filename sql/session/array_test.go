package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/sql/session"
	"clink/sql/types"
)

// arrayDDL is a table with ARRAY columns in both spellings, rows built
// by the constructor, from text, empty and NULL.
const arrayDDL = `CREATE TABLE a (id BIGINT, xs ARRAY<BIGINT>, ys VARCHAR[]) WITH (connector = 'values');
INSERT INTO a VALUES (1, ARRAY[1, 2, 3], ARRAY['a', 'b c']), (2, CAST('{1,2,3}' AS BIGINT[]), NULL),
  (3, ARRAY[], ARRAY['a', 'b c']), (4, NULL, ARRAY[NULL, 'z']);
`

// arrayCases are hand-checked against PostgreSQL's documentation (8.15
// Arrays, 9.19 Array Functions): 1-based subscripts, NULL out of range,
// text output {1,2,NULL,"b c"}, CARDINALITY 0 for an empty array,
// element-wise comparison with a prefix first. Rows are sorted.
var arrayCases = []struct {
	q    string
	want []string
}{
	{`SELECT ARRAY[1, 2, 3], ARRAY['a', NULL, 'b c'], CAST('{1, 2,NULL}' AS INT[]), CAST(ARRAY[1, 2] AS VARCHAR)`,
		[]string{`{1,2,3}|{a,NULL,"b c"}|{1,2,NULL}|{1,2}`}},
	{`SELECT (ARRAY[10, 20, 30])[1], (ARRAY[10, 20, 30])[3], (ARRAY[10, 20, 30])[4], (ARRAY[10, 20, 30])[0], (ARRAY[10, 20, 30])[-1], (ARRAY[10])[NULL]`,
		[]string{`10|30|NULL|NULL|NULL|NULL`}},
	{`SELECT CARDINALITY(ARRAY[1, 2, 3]), CARDINALITY(CAST(ARRAY[] AS INT[])), CARDINALITY(CAST(NULL AS INT[])), CARDINALITY(ARRAY[NULL])`,
		[]string{`3|0|NULL|1`}},
	{`SELECT ARRAY[1, 2] = ARRAY[1, 2], ARRAY[1, 2] < ARRAY[1, 3], ARRAY[1, 2] < ARRAY[1, 2, 0], ARRAY[2] > ARRAY[1, 9], ARRAY[1.5e0, 2] = ARRAY[1.5, 2]`,
		[]string{`true|true|true|true|true`}},
	{`SELECT id, xs, CARDINALITY(xs), xs[1], xs[4], ys[2], ys[0] FROM a`,
		[]string{`1|{1,2,3}|3|1|NULL|b c|NULL`, `2|{1,2,3}|3|1|NULL|NULL|NULL`, `3|{}|0|NULL|NULL|b c|NULL`, `4|NULL|NULL|NULL|NULL|z|NULL`}},
	{`SELECT xs, COUNT(*), ARRAY_AGG(id ORDER BY id) FROM a GROUP BY xs`,
		[]string{`NULL|1|{4}`, `{1,2,3}|2|{1,2}`, `{}|1|{3}`}},
	{`SELECT DISTINCT ys FROM a`, []string{`NULL`, `{NULL,z}`, `{a,"b c"}`}},
	{`SELECT x.id, y.id FROM a x JOIN a y ON x.xs = y.xs AND x.id < y.id`, []string{`1|2`}},
	{`SELECT ys, ARRAY_AGG(xs[2] ORDER BY id DESC) FROM a WHERE ys IS NOT NULL GROUP BY ys`,
		[]string{`{NULL,z}|{NULL}`, `{a,"b c"}|{NULL,2}`}},
	{`SELECT ARRAY_AGG(d ORDER BY d DESC), ARRAY_AGG(d) FROM (VALUES (CAST('1.50' AS NUMERIC)), (CAST('2.000' AS NUMERIC)), (NULL)) AS v (d)`,
		[]string{`{NULL,2.000,1.50}|{1.50,2.000,NULL}`}}, // PostgreSQL: NULLs first descending
	// UNNEST (PostgreSQL 7.2.1.4, 9.19: NULL and empty arrays give no rows;
	// the column is named by the alias; WITH ORDINALITY numbers from 1)
	{`SELECT * FROM UNNEST(ARRAY['x', NULL, 'y']) WITH ORDINALITY AS u`, []string{`NULL|2`, `x|1`, `y|3`}},
	{`SELECT u, u.ordinality FROM UNNEST(ARRAY[5, 6]) WITH ORDINALITY AS u`, []string{`5|1`, `6|2`}},
	{`SELECT unnest.unnest + ordinality FROM UNNEST(ARRAY[5, 6]) WITH ORDINALITY`, []string{`6`, `8`}},
	{`SELECT id, y FROM a CROSS JOIN UNNEST(ys) AS t (y)`, []string{`1|a`, `1|b c`, `3|a`, `3|b c`, `4|NULL`, `4|z`}},
	{`SELECT id, UNNEST(xs) FROM a`, []string{`1|1`, `1|2`, `1|3`, `2|1`, `2|2`, `2|3`}},
	{`SELECT y, COUNT(*) FROM a, UNNEST(a.ys) AS t (y) WHERE y IS NOT NULL GROUP BY y`, []string{`a|2`, `b c|2`, `z|1`}},
}

// TestArrays runs arrayCases on the sync and async paths at parallelism
// 1 and 3 (arrays as group keys, join keys and in aggregate state).
func TestArrays(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, arrayDDL)
			for _, c := range arrayCases {
				got, _ := finalTable(t, s, c.q, func(v types.Value) string { return v.String() })
				if !slices.Equal(got, c.want) {
					t.Errorf("%s\ngot  %q\nwant %q", c.q, got, c.want)
				}
			}
		})
	}
}

// TestArrayErrors: unsupported and ill-typed array forms fail with their
// position.
func TestArrayErrors(t *testing.T) {
	s := sessionWith(t, variants[0], arrayDDL)
	for _, c := range []struct{ q, want string }{
		{`SELECT ARRAY[1, 'x']`, `1:17: ARRAY elements have incompatible types BIGINT and VARCHAR`},
		{`SELECT (id)[1] FROM a`, `1:12: cannot subscript BIGINT: subscripts need an ARRAY`},
		{`SELECT xs['a'] FROM a`, `1:11: array subscript must be an integer, got VARCHAR`},
		{`SELECT CARDINALITY(id) FROM a`, `1:8: CARDINALITY: argument 1: expected an ARRAY, got BIGINT`},
		{`SELECT ARRAY[xs] FROM a`, `1:14: arrays of arrays are not supported`},
		{`SELECT ARRAY(SELECT 1)`, `1:8: ARRAY(subquery) is not supported`},
		{`SELECT ARRAY_AGG(xs) FROM a`, `1:18: ARRAY_AGG of ARRAY<BIGINT>: arrays of arrays are not supported`},
		{`SELECT CAST(1 AS INT[])`, `1:8: cannot cast BIGINT to ARRAY<INT>`},
		{`SELECT CAST('{1,x}' AS INT[])`, `1:8: cast to ARRAY<INT>: element 2: invalid INT "x"`},
		{`CREATE TABLE z (m INT[][])`, `1:19: arrays of arrays are not supported`},
		{`CREATE TABLE z (m ARRAY<ARRAY<INT>>)`, `1:19: arrays of arrays are not supported`},
		{`SELECT ARRAY_AGG(id) OVER (ORDER BY id) FROM a`, `1:8: ARRAY_AGG OVER (...) is not supported`},
		{`SELECT * FROM a, UNNEST(id) AS t (x)`, `1:25: UNNEST needs an ARRAY, got BIGINT`},
		{`SELECT * FROM a, UNNEST(xs) AS t (x, y)`, `1:18: UNNEST has 1 column but 2 column names specified`},
		{`SELECT * FROM a LEFT JOIN UNNEST(xs) AS t (x) ON TRUE`, `1:17: LEFT JOIN UNNEST is not supported: use CROSS JOIN UNNEST(...)`},
		{`SELECT * FROM UNNEST(ARRAY[1], ARRAY[2])`, `1:30: unexpected ",", expected ")" (UNNEST of several arrays is not supported`},
		{`SELECT * FROM UNNEST(xs)`, `1:22: unknown column xs`},
		{`SELECT UNNEST(xs) + 1 FROM a`, `1:8: set-returning function UNNEST is not allowed here`},
		{`SELECT UNNEST(xs), UNNEST(ys) FROM a`, `1:20: one UNNEST per SELECT list is supported`},
		{`SELECT COUNT(*), UNNEST(xs) FROM a`, `1:18: UNNEST in a SELECT list with GROUP BY, aggregates or DISTINCT ON is not supported`},
	} {
		_, err := s.Exec(context.Background(), c.q)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.q, err, c.want)
		}
	}
}

// TestArrayFileSinkRoundTrip: arrays written by the jsonl sink (JSON
// arrays) and the csv sink (PostgreSQL text, quoted) read back equal,
// quotes, commas, NULL elements and empty arrays included.
func TestArrayFileSinkRoundTrip(t *testing.T) {
	sim := async.NewSim(11, async.Fixed(time.Millisecond))
	s, err := session.New(session.Config{StateURI: "memory://", Parallelism: 2, BaseDir: t.TempDir(), Clock: sim, Executor: sim, Idle: sim.Step})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Exec(context.Background(), `CREATE TABLE o (id BIGINT, xs BIGINT[], s VARCHAR[]) WITH (connector = 'jsonl', path = 'out.jsonl');
CREATE TABLE oc (id BIGINT, xs BIGINT[], s VARCHAR[]) WITH (connector = 'csv', path = 'out.csv');
INSERT INTO o SELECT * FROM (VALUES (1, ARRAY[1, NULL], ARRAY['a,b', '"q" x', NULL, '']), (2, ARRAY[], NULL)) AS v (id, xs, s);
INSERT INTO oc SELECT * FROM o;`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`1|{1,NULL}|{"a,b","\"q\" x",NULL,""}`, `2|{}|NULL`}
	for _, q := range []string{`SELECT * FROM o`, `SELECT * FROM oc`} {
		if got, _ := finalTable(t, s, q, func(v types.Value) string { return v.String() }); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", q, got, want)
		}
	}
}
