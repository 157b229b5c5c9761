package session_test

import (
	"context"
	"strings"
	"testing"

	"clink/sql/session"
)

// TestProcTimeWindows: processing-time TUMBLE, HOP and CUMULATE windows
// over a PROCTIME() attribute fire when the session's simulated clock
// reaches their ends (rows read at t=0 and, after the first run, at the
// time the clock stopped). Expected windows are worked by hand from the
// clock (the simulation starts at 2026-01-01 00:00:00).
func TestProcTimeWindows(t *testing.T) {
	cases := []struct {
		name, tvf string
		want      []string // window_start, window_end, count
		stopped   string   // the clock after the second run
	}{
		{"tumble", "TUMBLE(TABLE c, DESCRIPTOR(pt), INTERVAL '10' SECOND)", []string{
			"2026-01-01 00:00:00.000 2026-01-01 00:00:10.000 2",
			"2026-01-01 00:00:10.000 2026-01-01 00:00:20.000 1",
		}, "20s"},
		{"hop", "HOP(TABLE c, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '10' SECOND)", []string{
			"2025-12-31 23:59:55.000 2026-01-01 00:00:05.000 2",
			"2026-01-01 00:00:00.000 2026-01-01 00:00:10.000 2",
			"2026-01-01 00:00:05.000 2026-01-01 00:00:15.000 1",
			"2026-01-01 00:00:10.000 2026-01-01 00:00:20.000 1",
		}, "20s"},
		{"cumulate", "CUMULATE(TABLE c, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '10' SECOND)", []string{
			"2026-01-01 00:00:00.000 2026-01-01 00:00:05.000 2",
			"2026-01-01 00:00:00.000 2026-01-01 00:00:10.000 2",
			"2026-01-01 00:00:10.000 2026-01-01 00:00:15.000 1",
			"2026-01-01 00:00:10.000 2026-01-01 00:00:20.000 1",
		}, "20s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, sim := idleSession(t, "memory://", 2, "CREATE TABLE c (k VARCHAR, pt AS PROCTIME()) WITH (connector = 'values', bounded = 'false');\nINSERT INTO c VALUES ('a'), ('b');")
			start := sim.Now()
			h, err := s.Query(context.Background(), "SELECT window_start, window_end, COUNT(*) FROM TABLE("+tc.tvf+") GROUP BY window_start, window_end")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), "INSERT INTO c VALUES ('c');"); err != nil {
				t.Fatal(err)
			}
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if got := sim.Now().Sub(start).String(); got != tc.stopped {
				t.Errorf("clock stopped at %s, want %s", got, tc.stopped)
			}
			checkRows(t, h, tc.want)
		})
	}
}

func checkRows(t *testing.T, h *session.Handle, want []string) {
	t.Helper()
	var got []string
	for _, r := range h.Table() {
		var parts []string
		for _, v := range r {
			parts = append(parts, v.String())
		}
		got = append(got, strings.Join(parts, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestComputedWatermarkWindow: a WATERMARK on a computed column (ts AS
// TO_TIMESTAMP(s)) drives an event-time window over an unbounded source:
// a window fires once a later row's computed time passes its end, and
// the aggregate reads another computed column (total AS price * qty).
func TestComputedWatermarkWindow(t *testing.T) {
	s, _ := idleSession(t, "memory://", 2, `CREATE TABLE o (s VARCHAR, price INT, qty INT, ts AS TO_TIMESTAMP(s), total AS price * qty,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'values', bounded = 'false');
INSERT INTO o VALUES ('2024-01-01 00:00:01', 2, 3), ('2024-01-01 00:00:04', 5, 1), ('2024-01-01 00:00:10.500', 1, 1);`)
	h, err := s.Query(context.Background(), "SELECT window_start, SUM(total) FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	// watermark 00:00:09.5: [0,5) fired, [5,10) empty, [10,15) open
	checkRows(t, h, []string{"2024-01-01 00:00:00.000 11"})
	if _, err := s.Exec(context.Background(), "INSERT INTO o VALUES ('2024-01-01 00:00:16', 1, 2);"); err != nil {
		t.Fatal(err)
	}
	if err := h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, h, []string{"2024-01-01 00:00:00.000 11", "2024-01-01 00:00:10.000 1"})
}

// TestProcTimeBoundedWhere: PROCTIME() outside a computed column is the
// statement's time, so a bounded query may filter on it.
func TestProcTimeBoundedWhere(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "CREATE TABLE b (k VARCHAR);\nINSERT INTO b VALUES ('a'), ('b');")
	h, err := s.Query(context.Background(), "SELECT k FROM b WHERE PROCTIME() > TIMESTAMP '2020-01-01 00:00:00' AND k <> 'b'")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, h, []string{"a"})
}

// TestProcTimeSessionRefused: a SESSION window over a PROCTIME attribute
// is refused at the window call.
func TestProcTimeSessionRefused(t *testing.T) {
	s, _ := idleSession(t, "memory://", 1, "CREATE TABLE c (k VARCHAR, pt AS PROCTIME());")
	q := "SELECT COUNT(*) FROM TABLE(SESSION(TABLE c, DESCRIPTOR(pt), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"
	_, err := s.Query(context.Background(), q)
	if err == nil || !strings.Contains(err.Error(), "SESSION windows over processing time") || !strings.Contains(err.Error(), "1:22") {
		t.Fatalf("got %v, want the SESSION refusal at 1:22", err)
	}
}
