package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
)

// lateIns inserts (k, v, ms) rows into ev, one statement each, so the
// watermark (ts itself: no delay) follows every row.
func lateIns(t *testing.T, s *session.Session, rows ...[3]any) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "INSERT INTO ev VALUES ('%s', %d, TIMESTAMP '%s');\n", r[0], r[1],
			base.Add(time.Duration(r[2].(int))*time.Millisecond).Format("2006-01-02 15:04:05.000"))
	}
	if _, err := s.Exec(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

const lateDDL = `CREATE TABLE ev (k VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'values');`

// keyLog renders the changes of key k (column 0) with times as seconds
// past the base.
func keyLog(h *session.Handle, k string) []string {
	var out []string
	for _, ch := range h.Changes() {
		if ch.Row[0].String() != k {
			continue
		}
		s := strings.ReplaceAll(ch.Row.String(), "2024-01-01 00:00:", "")
		out = append(out, ch.Kind.String()+" "+strings.ReplaceAll(s, "\t", " "))
	}
	return out
}

// TestLatenessChangelog checks the exact changelog of late rows on every
// variant: a TUMBLE window updated by a late row (-U/+U), a window first
// seen behind the watermark (+I at once), a row past the lateness
// dropped; a SESSION window extended by a late row (-U/+U) and then
// bridged to an open session (the fired result retracted, -D, and the
// merged one emitted at its own fire).
func TestLatenessChangelog(t *testing.T) {
	cases := []struct {
		name, q string
		rows    [][3]any
		want    map[string][]string
	}{
		{"tumble", `SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end`,
			[][3]any{{"a", 1, 1000}, {"a", 2, 3000}, {"b", 5, 6000}, {"a", 4, 2000}, {"c", 7, 4000}, {"x", 0, 7500}, {"a", 9, 1000}},
			map[string][]string{
				"a": {"+I a 00.000 05.000 2 3", "-U a 00.000 05.000 2 3", "+U a 00.000 05.000 3 7"},
				"c": {"+I c 00.000 05.000 1 7"},
				"b": {"+I b 05.000 10.000 1 5"},
			}},
		{"session", `SELECT k, SESSION_START(ts, INTERVAL '2' SECOND), SESSION_END(ts, INTERVAL '2' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '2' SECOND)`,
			[][3]any{{"a", 1, 0}, {"a", 2, 1000}, {"a", 3, 6000}, {"a", 4, 2500}, {"a", 5, 4200}, {"a", 6, 500}},
			map[string][]string{
				"a": {"+I a 00.000 03.000 2 3", "-U a 00.000 03.000 2 3", "+U a 00.000 04.500 3 7",
					"-D a 00.000 04.500 3 7", "+I a 00.000 08.000 5 15"},
			}},
	}
	for _, c := range cases {
		for _, v := range variants {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				s := newSession(t, v)
				if _, err := s.Exec(context.Background(), lateDDL+"\nSET 'window.allowed-lateness' = '5s';"); err != nil {
					t.Fatal(err)
				}
				if c.name == "tumble" { // 2 s: the 1 s row of a is past it when 7.5 s came
					if _, err := s.Exec(context.Background(), "SET 'window.allowed-lateness' = '2s';"); err != nil {
						t.Fatal(err)
					}
				}
				lateIns(t, s, c.rows...)
				h, err := s.Query(context.Background(), c.q)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				run(t, h)
				if !h.Finished() {
					t.Fatal("query did not finish")
				}
				for k, want := range c.want {
					if got := keyLog(h, k); !slices.Equal(got, want) {
						t.Errorf("key %s:\n got %q\nwant %q", k, got, want)
					}
				}
			})
		}
	}
}
