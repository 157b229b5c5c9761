package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// jobIDs lists SHOW JOBS' ids and kinds, through the extended protocol
// (pgx's default: Describe runs SHOW JOBS for its columns).
func jobIDs(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SHOW JOBS")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v %v", v[0], v[1]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stateDirs lists the checkpoint directories under the state directory.
func stateDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestDropAndCancelFreeState: DROP MATERIALIZED VIEW and CANCEL JOB stop
// their jobs, delete their checkpoints and leave the catalog, so a
// restarted server does not bring them back; an INSERT INTO a csv table
// runs as a background job that writes the file.
func TestDropAndCancelFreeState(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 200, 4)
	state := filepath.Join(dir, "state")
	cfg := Config{StateURI: "disagg-file://" + state}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	out := filepath.Join(dir, "out.csv")
	for _, sql := range []string{
		`CREATE TABLE g (id BIGINT) WITH (connector='datagen')`,
		`CREATE MATERIALIZED VIEW a AS SELECT id % 3 AS b, COUNT(*) AS n FROM g GROUP BY id % 3`,
		`CREATE MATERIALIZED VIEW c AS SELECT id % 5 AS b, COUNT(*) AS n FROM g GROUP BY id % 5`,
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		fmt.Sprintf(`CREATE TABLE tens (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv')`, out),
		`INSERT INTO tens SELECT k, v FROM bids WHERE v % 10 = 0`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if got, want := strings.Join(jobIDs(t, conn), ","), "1 materialized view,2 materialized view,3 insert"; got != want {
		t.Fatalf("jobs = %s, want %s", got, want)
	}
	waitJobState(t, conn, 3, "finished")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	sort.Strings(lines)
	var want []string
	for v := 10; v <= 200; v += 10 {
		want = append(want, fmt.Sprintf("%d,%d", v%4, v))
	}
	sort.Strings(want)
	if strings.Join(lines, ";") != strings.Join(want, ";") {
		t.Fatalf("out.csv = %q, want %q", lines, want)
	}
	waitJobState(t, conn, 1, "running")
	waitJobState(t, conn, 2, "running")
	// A view's state directory appears with its first checkpoint.
	for deadline := time.Now().Add(30 * time.Second); len(stateDirs(t, state)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("state dirs before drop: %v", stateDirs(t, state))
		}
	}
	if _, err := conn.Exec(ctx, "DROP MATERIALIZED VIEW a"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CANCEL JOB 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CANCEL JOB 3"); err != nil {
		t.Fatal(err)
	}
	if got := jobIDs(t, conn); len(got) != 0 {
		t.Fatalf("jobs after drop and cancel = %v", got)
	}
	for _, d := range stateDirs(t, state) {
		if strings.HasPrefix(d, "mv-") {
			t.Errorf("checkpoints of a dropped view remain: %s", d)
		}
	}
	_, err = conn.Exec(ctx, "SELECT * FROM a")
	var pgErr *pgconn.PgError
	if err == nil || !strings.Contains(err.Error(), "unknown table or view a") {
		t.Fatalf("reading a dropped view: %v", err)
	}
	_, err = conn.Exec(ctx, "CANCEL JOB 9")
	if !asPgErr(err, &pgErr) || !strings.Contains(pgErr.Message, "no job 9") {
		t.Fatalf("CANCEL JOB 9: %v", err)
	}
	conn.Close(ctx)
	ts.stop(t)

	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	if got := jobIDs(t, conn2); len(got) != 0 {
		t.Fatalf("jobs after restart = %v, want none", got)
	}
}

func asPgErr(err error, target **pgconn.PgError) bool {
	pe, ok := err.(*pgconn.PgError)
	if ok {
		*target = pe
	}
	return ok
}

// TestOneServerPerStateDir: a second server on a state directory in use
// is refused (instead of fencing the first one's jobs); once the first
// closed, it starts.
func TestOneServerPerStateDir(t *testing.T) {
	cfg := Config{StateURI: "disagg-file://" + t.TempDir()}
	ts := startServer(t, cfg)
	cfg2 := cfg
	cfg2.CheckpointInterval, cfg2.Listen = time.Second, "127.0.0.1:0"
	if _, err := New(cfg2); err == nil || !strings.Contains(err.Error(), "is in use by another clink serve") {
		t.Fatalf("second server: %v", err)
	}
	ts.stop(t)
	startServer(t, cfg)
}

// TestInsertJobAcrossRestart: a finished INSERT job is restored as
// finished after a restart, and its output file is not written twice.
func TestInsertJobAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 100, 3)
	cfg := Config{StateURI: "disagg-file://" + filepath.Join(dir, "state")}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	out := filepath.Join(dir, "out.csv")
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		fmt.Sprintf(`CREATE TABLE odd (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv')`, out),
		`INSERT INTO odd SELECT k, v FROM bids WHERE v % 2 = 1`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitJobState(t, conn, 1, "finished")
	before, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(before), "\n"); n != 50 {
		t.Fatalf("out.csv has %d lines, want 50", n)
	}
	conn.Close(ctx)
	ts.stop(t)
	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	waitJobState(t, conn2, 1, "finished")
	after, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("out.csv changed across the restart:\n%s\nvs\n%s", before, after)
	}
}

// TestFailedRestoreIsListed: a view whose table cannot be restored (its
// file was removed) is listed by SHOW JOBS as failed with the cause, a
// read of it names the cause, and DROP MATERIALIZED VIEW removes it.
func TestFailedRestoreIsListed(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 20, 2)
	cfg := Config{StateURI: "disagg-file://" + filepath.Join(dir, "state")}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		`CREATE MATERIALIZED VIEW totals AS SELECT k, COUNT(*) AS n FROM bids GROUP BY k`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitJobState(t, conn, 1, "finished")
	conn.Close(ctx)
	ts.stop(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	var st string
	var errText *string
	if err := conn2.QueryRow(ctx, "SHOW JOBS", pgx.QueryExecModeSimpleProtocol).Scan(nil, nil, nil, nil, &st, nil, nil, nil, nil, nil, &errText, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if st != "failed" || errText == nil || !strings.Contains(*errText, "restore job 1") {
		t.Fatalf("SHOW JOBS: state %s, error %v", st, errText)
	}
	if _, err := conn2.Exec(ctx, "SELECT * FROM totals"); err == nil || !strings.Contains(err.Error(), "restore job 1") {
		t.Fatalf("reading the failed view: %v", err)
	}
	if _, err := conn2.Exec(ctx, "DROP MATERIALIZED VIEW totals"); err != nil {
		t.Fatal(err)
	}
	if got := jobIDs(t, conn2); len(got) != 0 {
		t.Fatalf("jobs after the drop: %v", got)
	}
}
