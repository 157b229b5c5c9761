package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// addPart writes part n of a watched directory: rows k = i % 4, v = i
// for i in [from, to).
func addPart(t *testing.T, dir string, n, from, to int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("k,v\n")
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i%4, i)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".part-%d.tmp", n))
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("part-%d.csv", n))); err != nil {
		t.Fatal(err)
	}
}

// wantChain is what views b (k, n10 for k <> 0) and c (groups, total)
// hold over rows [0, upTo).
func wantChain(upTo int) (b [][2]int64, c [2]int64) {
	n := make([]int64, 4)
	for i := range upTo {
		n[i%4]++
	}
	for k := 1; k < 4; k++ {
		if n[k] > 0 {
			b = append(b, [2]int64{int64(k), n[k] * 10})
			c[0]++
			c[1] += n[k] * 10
		}
	}
	return b, c
}

// readChain reads views b and c.
func readChain(t *testing.T, conn *pgx.Conn) (b [][2]int64, c [2]int64) {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, "SELECT k, n10 FROM b ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		b = append(b, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT groups, total FROM c").Scan(&c[0], &c[1]); err != nil {
		t.Fatal(err)
	}
	return b, c
}

// waitChain polls b and c until they hold rows [0, upTo).
func waitChain(t *testing.T, conn *pgx.Conn, upTo int) {
	t.Helper()
	wantB, wantC := wantChain(upTo)
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, c := readChain(t, conn)
		if reflect.DeepEqual(b, wantB) && c == wantC {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("over rows [0, %d): b = %v, c = %v; want %v, %v", upTo, b, c, wantB, wantC)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestViewsOverViews: materialised view b reads materialised view a and
// c reads b; all three follow a watched directory as files arrive, before
// and after a server restart on the same disagg-file:// directory. DROP of
// a (or b) while a view reads it is refused with SQLSTATE 2BP01 naming
// the dependent view, over pgx and psql; dropped in order, they go.
func TestViewsOverViews(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "in")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	addPart(t, data, 1, 0, 100)
	cfg := Config{StateURI: "disagg-file://" + dir + "/state"}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true',
			'source.monitor-interval'='50ms')`, data),
		`CREATE MATERIALIZED VIEW a AS SELECT k, COUNT(*) AS n FROM bids GROUP BY k`,
		`CREATE MATERIALIZED VIEW b AS SELECT k, n * 10 AS n10 FROM a WHERE k <> 0`,
		`CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS groups, SUM(n10) AS total FROM b`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitChain(t, conn, 100)
	addPart(t, data, 2, 100, 250)
	waitChain(t, conn, 250)

	for _, tc := range []struct{ drop, dependent string }{{"a", "b"}, {"b", "c"}} {
		_, err := conn.Exec(ctx, "DROP MATERIALIZED VIEW "+tc.drop)
		var pgErr *pgconn.PgError
		wantDetail := fmt.Sprintf("materialized view %s depends on materialized view %s", tc.dependent, tc.drop)
		if !errors.As(err, &pgErr) || pgErr.Code != "2BP01" || pgErr.Detail != wantDetail {
			t.Fatalf("DROP %s: %#v, want 2BP01 with detail %q", tc.drop, err, wantDetail)
		}
	}
	_, stderr, err := psql(t, ts.port, "DROP MATERIALIZED VIEW a;\n")
	if err == nil || !strings.Contains(stderr, "cannot drop materialized view a because other objects depend on it") ||
		!strings.Contains(stderr, "DETAIL:  materialized view b depends on materialized view a") {
		t.Fatalf("psql DROP a: %v\n%s", err, stderr)
	}

	conn.Close(ctx)
	ts.stop(t)
	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	waitChain(t, conn2, 250)
	addPart(t, data, 3, 250, 333)
	waitChain(t, conn2, 333)
	if _, err := conn2.Exec(ctx, "DROP MATERIALIZED VIEW a"); err == nil {
		t.Fatal("DROP a after the restart: want a refusal, b still reads it")
	}
	for _, v := range []string{"c", "b", "a"} {
		if _, err := conn2.Exec(ctx, "DROP MATERIALIZED VIEW "+v); err != nil {
			t.Fatalf("DROP %s: %v", v, err)
		}
	}
}
