package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// subscribeSetup creates an unbounded values table and a view summing it,
// with two rows in, and waits until the view shows them.
func subscribeSetup(t *testing.T) (*testServer, *pgx.Conn) {
	t.Helper()
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='values', bounded='false')`,
		`CREATE MATERIALIZED VIEW sums AS SELECT k, SUM(v) AS s FROM t GROUP BY k`,
		`INSERT INTO t VALUES (1, 10), (2, 20)`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM sums").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			return ts, conn
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPgxSubscribe: SUBSCRIBE TO a view streams its snapshot as +I rows,
// then each later change with its op, until the client cancels it.
func TestPgxSubscribe(t *testing.T) {
	ts, conn := subscribeSetup(t)
	sub := connect(t, ts.addr, "")
	ctx := context.Background()
	rows, err := sub.Query(ctx, "SUBSCRIBE TO sums")
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		if !rows.Next() {
			t.Fatalf("subscription ended: %v", rows.Err())
		}
		var op string
		var k, s int64
		if err := rows.Scan(&op, &k, &s); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s %d %d", op, k, s)
	}
	snap := []string{next(), next()}
	sort.Strings(snap)
	if want := []string{"+I 1 10", "+I 2 20"}; strings.Join(snap, ",") != strings.Join(want, ",") {
		t.Fatalf("snapshot = %v, want %v", snap, want)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (1, 5)"); err != nil {
		t.Fatal(err)
	}
	if got := []string{next(), next()}; got[0] != "-U 1 10" || got[1] != "+U 1 15" {
		t.Fatalf("changes = %v, want [-U 1 10 +U 1 15]", got)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (3, 1)"); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "+I 3 1" {
		t.Fatalf("change = %q, want +I 3 1", got)
	}
	if err := sub.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	var pgErr *pgconn.PgError
	if err := rows.Err(); !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("cancelled SUBSCRIBE: err = %v, want SQLSTATE 57014", err)
	}
	var n int
	if err := sub.QueryRow(ctx, "SELECT COUNT(*) FROM sums").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after the subscription: %d rows, %v", n, err)
	}
}

// TestCopySubscribe: COPY (SUBSCRIBE TO v) TO STDOUT streams the same
// changes as tab-separated COPY text.
func TestCopySubscribe(t *testing.T) {
	ts, conn := subscribeSetup(t)
	sub := connect(t, ts.addr, "")
	ctx := context.Background()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := sub.PgConn().CopyTo(ctx, pw, "COPY (SUBSCRIBE TO sums) TO STDOUT")
		pw.CloseWithError(err)
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("copy ended: %v", lines.Err())
		}
		return lines.Text()
	}
	snap := []string{next(), next()}
	sort.Strings(snap)
	if want := "+I\t1\t10,+I\t2\t20"; strings.Join(snap, ",") != want {
		t.Fatalf("snapshot = %q, want %q", snap, want)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (2, -20)"); err != nil {
		t.Fatal(err)
	}
	if got := next() + "," + next(); got != "-U\t2\t20,+U\t2\t0" {
		t.Fatalf("changes = %q", got)
	}
	if err := sub.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	var pgErr *pgconn.PgError
	if err := <-done; !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("cancelled COPY: err = %v, want SQLSTATE 57014", err)
	}
}

// TestSubscriberDisconnects: a client that closes its connection during a
// quiet SUBSCRIBE (no change to send) is noticed at once: its connection
// ends with one log line and the view drops the subscriber.
func TestSubscriberDisconnects(t *testing.T) {
	ts, conn := subscribeSetup(t)
	before := strings.Count(ts.logBuf.String(), "\n")
	nc, fe := rawStartup(t, ts.addr)
	fe.Send(&pgproto3.Query{String: "SUBSCRIBE TO sums"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for rows := 0; rows < 2; {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.DataRow); ok {
			rows++
		}
	}
	nc.Close()
	for ts.openConnections() > 1 {
		time.Sleep(5 * time.Millisecond)
	}
	logged := strings.Split(strings.TrimSpace(ts.logBuf.String()), "\n")[before:]
	if len(logged) != 1 || !strings.Contains(logged[0], "closed the connection during SUBSCRIBE") {
		t.Fatalf("log = %q", logged)
	}
	ts.core.mu.Lock()
	j := ts.core.mvs["sums"]
	ts.core.mu.Unlock()
	j.mu.Lock()
	subs := len(j.subs)
	j.mu.Unlock()
	if subs != 0 {
		t.Fatalf("the view still has %d subscribers", subs)
	}
	if _, err := conn.Exec(context.Background(), "INSERT INTO t VALUES (9, 9)"); err != nil {
		t.Fatal(err)
	}
}
