package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/sql/session"
)

// idleDDL makes two unbounded watermarked sources with the idle timeout
// opt (empty: no option) and a query over their union.
func idleDDL(opt string) string {
	with := "connector = 'values', bounded = 'false'"
	if opt != "" {
		with += ", 'watermark.idle-timeout' = '" + opt + "'"
	}
	var b strings.Builder
	for _, t := range []string{"a", "b"} {
		fmt.Fprintf(&b, "CREATE TABLE %s (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (%s);\n", t, with)
	}
	b.WriteString("INSERT INTO b VALUES (9, TIMESTAMP '2024-01-01 00:00:00.500');\n")
	for i := range 10 { // a runs on to 00:00:09.5; b goes quiet at 00:00:00.5
		fmt.Fprintf(&b, "INSERT INTO a VALUES (%d, TIMESTAMP '2024-01-01 00:00:0%d.500');\n", i%2, i)
	}
	return b.String()
}

const idleQuery = `SELECT TUMBLE_START(ts, INTERVAL '2' SECOND) AS s, COUNT(*) AS n FROM (SELECT k, ts FROM a UNION ALL SELECT k, ts FROM b) u GROUP BY TUMBLE(ts, INTERVAL '2' SECOND)`

func idleSession(t *testing.T, uri string, par int, ddl string) (*session.Session, *async.Sim) {
	t.Helper()
	sim := async.NewSim(3, async.Fixed(time.Millisecond))
	s, err := session.New(session.Config{StateURI: uri, Parallelism: par, HashSeed: 5, Clock: sim, Executor: sim, Idle: sim.Step})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	return s, sim
}

// stepAll steps the query without advancing the simulated clock.
func stepAll(t *testing.T, h *session.Handle) {
	t.Helper()
	for range 10000 {
		p, err := h.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !p {
			return
		}
	}
	t.Fatal("query never settled")
}

// TestIdleSourceFiresAfterTimeout: b goes quiet, so without an idle
// timeout its watermark holds every window back; with one, windows fire
// exactly when b has been quiet for the timeout on the session's clock,
// and not a millisecond before.
func TestIdleSourceFiresAfterTimeout(t *testing.T) {
	s, sim := idleSession(t, "memory://", 2, idleDDL("5s"))
	h, err := s.Query(context.Background(), idleQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	start := sim.Now()
	stepAll(t, h)
	if n := len(h.Table()); n != 0 {
		t.Fatalf("%d windows fired while b was active", n)
	}
	sim.AdvanceTo(start.Add(5*time.Second - time.Millisecond))
	stepAll(t, h)
	if n := len(h.Table()); n != 0 {
		t.Fatalf("%d windows fired before the idle timeout", n)
	}
	sim.AdvanceTo(start.Add(5 * time.Second))
	stepAll(t, h)
	got := h.Table()
	// a's watermark is 9.5 s: windows [0,2) .. [6,8) fire; [8,10) waits.
	want := []string{"2024-01-01 00:00:00.000\t3", "2024-01-01 00:00:02.000\t2", "2024-01-01 00:00:04.000\t2", "2024-01-01 00:00:06.000\t2"}
	if len(got) != len(want) {
		t.Fatalf("after the timeout: %v, want %v", got, want)
	}
	for i, r := range got {
		if r.String() != want[i] {
			t.Fatalf("window %d: %v, want %v", i, r, want[i])
		}
	}
}

// TestIdleSourceVariants: run to quiescence (the simulated clock advances
// to the timeout by itself) on the sync and async paths at parallelism 1
// and 3; without the option nothing fires; a row into b after the
// timeout reactivates it and its late row is dropped.
func TestIdleSourceVariants(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s, sim := idleSession(t, v.uri, v.par, idleDDL(""))
			h, err := s.Query(context.Background(), idleQuery)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if n := len(h.Table()); n != 0 {
				t.Fatalf("no idle timeout: %d windows fired", n)
			}
			h.Close()

			s, sim = idleSession(t, v.uri, v.par, idleDDL("2s"))
			start := sim.Now()
			if h, err = s.Query(context.Background(), idleQuery); err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if n := len(h.Table()); n != 4 {
				t.Fatalf("with the idle timeout: %d windows, want 4: %v", n, h.Table())
			}
			if el := sim.Now().Sub(start); el < 2*time.Second {
				t.Fatalf("windows fired after %v, before the 2s timeout", el)
			}
			if _, err := s.Exec(context.Background(), "INSERT INTO b VALUES (7, TIMESTAMP '2024-01-01 00:00:01.000'), (7, TIMESTAMP '2024-01-01 00:00:11.000');"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), "INSERT INTO a VALUES (1, TIMESTAMP '2024-01-01 00:00:12.000');"); err != nil {
				t.Fatal(err)
			}
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			rows := h.Table()
			if len(rows) != 5 || rows[0].String() != "2024-01-01 00:00:00.000\t3" || rows[4].String() != "2024-01-01 00:00:08.000\t2" {
				t.Fatalf("after b came back: %v", rows)
			}
		})
	}
}

// TestIdleTimeoutOptionErrors: a bad idle timeout is refused at CREATE,
// naming the option.
func TestIdleTimeoutOptionErrors(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "CREATE TABLE ok (k BIGINT) WITH ('watermark.idle-timeout' = '0');")
	for _, bad := range []string{"5", "soon", "-1s"} {
		_, err := s.Exec(context.Background(), "CREATE TABLE t (k BIGINT) WITH ('watermark.idle-timeout' = '"+bad+"');")
		if err == nil || !strings.Contains(err.Error(), "watermark.idle-timeout") {
			t.Errorf("%q: error %v does not name the option", bad, err)
		}
	}
}
