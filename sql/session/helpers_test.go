package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"clink/sql/session"
)

// sessionWith returns newSession(t, v) with ddl executed on it.
func sessionWith(t *testing.T, v variant, ddl string) *session.Session {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	return s
}

// valuesDDL creates each generated table as a bounded values table and
// inserts its rows.
func valuesDDL(data []genTable) string {
	var ddl strings.Builder
	for _, tb := range data {
		fmt.Fprintf(&ddl, "CREATE TABLE %s (%s) WITH (connector = 'values');\n%s", tb.name, tb.ddl, inserts(tb))
	}
	return ddl.String()
}

// oracleWant runs each query on SQLite; with min > 0 it fails unless each
// result has at least min rows.
func oracleWant(t *testing.T, db *sql.DB, qs []string, min int) [][]string {
	t.Helper()
	want := make([][]string, len(qs))
	for i, q := range qs {
		want[i] = oracleRows(t, db, q)
		if len(want[i]) < min {
			t.Fatalf("oracle %d: only %d rows", i, len(want[i]))
		}
	}
	return want
}

// side is element j of each (clink, SQLite) query pair.
func side(pairs [][2]string, j int) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[j]
	}
	return out
}

// checkQuery reports (without stopping) query i's clink table differing
// from want.
func checkQuery(t *testing.T, s *session.Session, i int, q string, want []string) {
	t.Helper()
	if got := clinkRows(t, s, q); !slices.Equal(got, want) {
		t.Errorf("query %d differs from SQLite\n%s\n%s", i, q, diff(got, want))
	}
}

// checkQueries is checkQuery on every query.
func checkQueries(t *testing.T, s *session.Session, qs []string, want [][]string) {
	t.Helper()
	for i, q := range qs {
		checkQuery(t, s, i, q, want[i])
	}
}

// loadTimed creates the SQLite table name (k, v, ts as ms) with rows,
// leaving the late ones (v = lateV) out when dropLate; it returns how
// many it left out.
func loadTimed(t *testing.T, db *sql.DB, name string, rows [][3]int64, dropLate bool) int {
	t.Helper()
	if _, err := db.Exec("CREATE TABLE " + name + " (k INTEGER, v INTEGER, ts INTEGER)"); err != nil {
		t.Fatal(err)
	}
	late := 0
	for _, r := range rows {
		if dropLate && r[1] == lateV {
			late++
			continue
		}
		if _, err := db.Exec("INSERT INTO "+name+" VALUES (?, ?, ?)", r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	return late
}

// okOracle is a SQLite database with ev_ok: windowEvents' rows that are
// not late.
func okOracle(t *testing.T, rows [][3]int64) *sql.DB {
	t.Helper()
	db := oracle(t, nil)
	loadTimed(t, db, "ev_ok", rows, true)
	return db
}

// intervalOracle is a SQLite database with intervalEvents' l (k, v, ts)
// and r (k, w, ts).
func intervalOracle(t *testing.T, tables map[string][][3]any) *sql.DB {
	t.Helper()
	db := oracle(t, nil)
	for name, rows := range tables {
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (k INTEGER, %s INTEGER, ts INTEGER)", name, map[string]string{"l": "v", "r": "w"}[name])); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if _, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (?, ?, ?)", name), row[0], row[1], row[2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

// sqliteOrderBy is an ORDER BY list closed by a parenthesis: an ordered
// aggregate's or a window's.
var sqliteOrderBy = regexp.MustCompile(`ORDER BY ([^()]*)\)`)

// pgNulls spells out PostgreSQL's NULL order (last ascending, first
// descending), which clink follows, in every parenthesised ORDER BY of
// SQLite queries: SQLite sorts NULLs first ascending.
func pgNulls(qs []string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = sqliteOrderBy.ReplaceAllStringFunc(q, func(m string) string {
			list, rest := m[len("ORDER BY "):len(m)-1], ""
			for _, clause := range []string{" LIMIT ", " ROWS ", " RANGE "} {
				if i := strings.Index(list, clause); i >= 0 {
					list, rest = list[:i], list[i:]
				}
			}
			keys := strings.Split(list, ",")
			for j, k := range keys {
				k = strings.TrimSpace(k)
				switch {
				case strings.Contains(k, "NULLS"):
				case strings.HasSuffix(k, " DESC"):
					k += " NULLS FIRST"
				default:
					k += " NULLS LAST"
				}
				keys[j] = k
			}
			return "ORDER BY " + strings.Join(keys, ", ") + rest + ")"
		})
	}
	return out
}
