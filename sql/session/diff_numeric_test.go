package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"clink/sql/session"
	"clink/sql/types"
)

// numericRows are (k, x DOUBLE, n NUMERIC, d DECIMAL(10,2)); n has values
// of several scales, x sums to 10230.98 plus double residue.
var numericRows = [][4]string{
	{"1", "1000.1", "2443.691829", "12.50"},
	{"1", "2000.2", "1.5", "0.25"},
	{"2", "3000.3", "0.000001", "99.99"},
	{"2", "4230.38", "100.0", ""},
	{"3", "", "", "1.00"},
	{"4", "0.5", "1.50", "1.5"},
}

// numericQueries pair a query with its expected table, each checked on
// PostgreSQL 15 (rows sorted, columns joined by |). They run over a values
// table and over the same rows read from csv and jsonl files.
var numericQueries = []struct {
	q    string
	want []string
}{
	{`SELECT ROUND(SUM(x)::NUMERIC, 2), CAST(2443.691829 AS NUMERIC) FROM m`, []string{"10231.48|2443.691829"}},
	{`SELECT ROUND(SUM(x)::NUMERIC, 2) FROM m WHERE k < 3`, []string{"10230.98"}},
	{`SELECT SUM(n), SUM(d), MAX(n), MIN(n), COUNT(DISTINCT n) FROM m`, []string{"2546.691830|115.24|2443.691829|0.000001|4"}},
	{`SELECT k, SUM(n), ROUND(AVG(n)::NUMERIC, 1), ROUND(AVG(n)::NUMERIC, 4) FROM m WHERE k < 4 GROUP BY k`, []string{
		"1|2445.191829|1222.6|1222.5959", "2|100.000001|50.0|50.0000", "3|NULL|NULL|NULL"}},
	{`SELECT k, SUM(n), ROUND(AVG(n)::NUMERIC, 1) FROM m WHERE k > 3 GROUP BY k`, []string{"4|1.50|1.5"}},
	{`SELECT k, n * 2, n + d, n - 1, -n FROM m WHERE n IS NOT NULL`, []string{
		"1|3.0|1.75|0.5|-1.5", "1|4887.383658|2456.191829|2442.691829|-2443.691829",
		"2|0.000002|99.990001|-0.999999|-0.000001", "2|200.0|NULL|99.0|-100.0", "4|3.00|3.00|0.50|-1.50"}},
	{`SELECT k, ROUND(n, 1), ROUND(n, -1), TRUNC(n, 1), CAST(x AS NUMERIC) FROM m WHERE n IS NOT NULL`, []string{
		"1|1.5|0|1.5|2000.2", "1|2443.7|2440|2443.6|1000.1", "2|0.0|0|0.0|3000.3", "2|100.0|100|100.0|4230.38",
		"4|1.5|0|1.5|0.5"}},
	// retractions: the inner MAX updates, the outer SUM retracts
	{`SELECT SUM(mx), COUNT(mx) FROM (SELECT k, MAX(n) AS mx FROM m GROUP BY k) x`, []string{"2545.191829|3"}},
	{`SELECT a.k, b.k, a.n FROM m a JOIN m b ON a.n = b.d`, []string{"1|4|1.5", "4|4|1.50"}},
}

// numericDDL creates m as a values table, mc as a csv file and mj as a
// jsonl file (numbers unquoted), all holding numericRows.
func numericDDL(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var ins, csv, jsonl []string
	for _, r := range numericRows {
		vals := make([]string, 4)
		var fields []string
		for i, v := range r {
			vals[i] = v
			if v == "" {
				vals[i] = "NULL"
				continue
			}
			fields = append(fields, fmt.Sprintf(`"%s":%s`, []string{"k", "x", "n", "d"}[i], v))
		}
		ins = append(ins, "("+strings.Join(vals, ", ")+")")
		csv = append(csv, strings.Join(r[:], ","))
		jsonl = append(jsonl, "{"+strings.Join(fields, ",")+"}")
	}
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cols := "(k BIGINT, x DOUBLE, n NUMERIC, d DECIMAL(10,2))"
	return fmt.Sprintf(`CREATE TABLE m %s WITH (connector = 'values');
INSERT INTO m VALUES %s;
CREATE TABLE mc %s WITH (connector = 'csv', path = '%s');
CREATE TABLE mj %s WITH (connector = 'jsonl', path = '%s');`,
		cols, strings.Join(ins, ", "), cols, write("m.csv", csv), cols, write("m.jsonl", jsonl))
}

// exactRows runs q to its end and renders its final table exactly (each
// value's own digits), sorted.
func exactRows(t *testing.T, s *session.Session, q string) []string {
	t.Helper()
	out, _ := finalTable(t, s, q, types.Value.String)
	return out
}

// TestDifferentialNumeric: unconstrained NUMERIC keeps each value's scale
// through DDL columns, CAST, arithmetic, SUM/AVG/MIN/MAX, ROUND/TRUNC,
// joins and retractions, from values, csv and jsonl tables, on every
// variant; the expected tables are PostgreSQL's.
func TestDifferentialNumeric(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, numericDDL(t))
			for _, table := range []string{"m", "mc", "mj"} {
				for i, c := range numericQueries {
					q := strings.NewReplacer(" m ", " "+table+" ", " m a ", " "+table+" a ", " m b ", " "+table+" b ").Replace(c.q + " ")
					if got := exactRows(t, s, q); !slices.Equal(got, c.want) {
						t.Errorf("%s query %d:\n%s\n%s", table, i, q, diff(got, c.want))
					}
				}
			}
		})
	}
}

// numericValue is row i's NUMERIC value: its scale grows with i, so a
// group's SUM scale widens after the checkpoint and again after the crash.
func numericValue(i int) (unscaled int64, scale uint8) {
	scale = uint8(i % 2)
	switch {
	case i >= 250:
		scale = uint8(i % 6)
	case i >= 150:
		scale = uint8(i % 4)
	}
	return int64((i*7919)%100000 - 30000), scale
}

func insertNumeric(t *testing.T, s *session.Session, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		u, sc := numericValue(i)
		fmt.Fprintf(&b, "INSERT INTO nv VALUES (%d, %s);\n", i%7, types.FormatDecimal(u, sc))
	}
	if _, err := s.Exec(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

// wantNumericSums is each group's exact SUM over rows 0..299 at the
// largest scale of its rows (PostgreSQL's SUM scale), as "k|sum".
func wantNumericSums() []string {
	sums, scales := map[int]int64{}, map[int]uint8{}
	for i := range 300 {
		_, sc := numericValue(i)
		scales[i%7] = max(scales[i%7], sc)
	}
	for i := range 300 {
		u, sc := numericValue(i)
		sums[i%7] += u * types.Pow10(scales[i%7]-sc)
	}
	var out []string
	for k, s := range sums {
		out = append(out, fmt.Sprintf("%d|%s", k, types.FormatDecimal(s, scales[k])))
	}
	slices.Sort(out)
	return out
}

// TestNumericSumCrashRestore: a SUM over NUMERIC keeps its widening scale
// in its checkpointed state: checkpoint at parallelism 2, more rows of
// larger scales, crash, restore at 3, more rows: the exact sums.
func TestNumericSumCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		t.Run(v.name, func(t *testing.T) {
			v.par = 2
			s := newSession(t, v)
			ctx := context.Background()
			if _, err := s.Exec(ctx, "CREATE TABLE nv (k BIGINT, n NUMERIC) WITH (connector = 'values', bounded = 'false')"); err != nil {
				t.Fatal(err)
			}
			insertNumeric(t, s, 0, 150)
			h, err := s.Query(ctx, "SELECT k, SUM(n) FROM nv GROUP BY k")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			run(t, h)
			id, err := h.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			insertNumeric(t, s, 150, 250)
			run(t, h)
			if err := h.Crash(); err != nil {
				t.Fatal(err)
			}
			insertNumeric(t, s, 250, 300)
			if err := h.Restore(ctx, id, 3); err != nil {
				t.Fatal(err)
			}
			h.EndInput()
			run(t, h)
			var got []string
			for _, r := range h.Table() {
				got = append(got, r[0].String()+"|"+r[1].String())
			}
			slices.Sort(got)
			if want := wantNumericSums(); !slices.Equal(got, want) {
				t.Fatalf("after restore:\n%s", diff(got, want))
			}
		})
	}
}
