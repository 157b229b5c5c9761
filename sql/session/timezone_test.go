package session_test

import (
	"context"
	"strings"
	"testing"

	"clink/sql/session"
)

// tzSession is a session in zone (SET 'table.local-time-zone').
func tzSession(t *testing.T, zone string) *session.Session {
	t.Helper()
	s, _ := idleSession(t, "memory://", 1, "SET 'table.local-time-zone' = '"+zone+"';")
	return s
}

// value runs a one-row SELECT and returns its single value.
func value(t *testing.T, s *session.Session, sql string) (string, error) {
	t.Helper()
	res, err := s.Exec(context.Background(), sql)
	if err != nil {
		return "", err
	}
	r := res[len(res)-1]
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %v", sql, r.Rows)
	}
	return r.Rows[0][0], nil
}

// TestTimeZoneFunctions: TIMESTAMP_LTZ values, CASTs, CONVERT_TZ,
// TO_TIMESTAMP_LTZ and AT TIME ZONE, hand-checked against Flink's and
// PostgreSQL's documented semantics (Europe/Berlin is UTC+1 in winter,
// UTC+2 from 2024-03-31 02:00 to 2024-10-27 03:00).
func TestTimeZoneFunctions(t *testing.T) {
	cases := []struct{ zone, expr, want string }{
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(0, 0)", "1970-01-01 01:00:00.000"},
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(1700000000123, 3)", "2023-11-14 23:13:20.123"},
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(1700000000123)", "2023-11-14 23:13:20.123"},
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(1.5, 0)", "1970-01-01 01:00:01.500"},
		{"UTC", "TO_TIMESTAMP_LTZ(0, 0)", "1970-01-01 00:00:00.000"},
		{"Asia/Shanghai", "TO_TIMESTAMP_LTZ(4001, 3)", "1970-01-01 08:00:04.001"}, // Flink's time zone page
		{"+05:30", "TO_TIMESTAMP_LTZ(0, 0)", "1970-01-01 05:30:00.000"},
		{"America/Los_Angeles", "TO_TIMESTAMP_LTZ(0, 0)", "1969-12-31 16:00:00.000"},
		// a TIMESTAMP cast to TIMESTAMP_LTZ is a wall time of the session zone
		{"Europe/Berlin", "CAST(TIMESTAMP '2024-07-01 12:00:00' AS TIMESTAMP_LTZ)", "2024-07-01 12:00:00.000"},
		{"Europe/Berlin", "CAST(TIMESTAMP '2024-07-01 12:00:00' AS TIMESTAMP_LTZ) AT TIME ZONE 'UTC'", "2024-07-01 10:00:00.000"},
		{"Europe/Berlin", "CAST(TIMESTAMP '2024-01-15 12:00:00' AS TIMESTAMPTZ) AT TIME ZONE 'UTC'", "2024-01-15 11:00:00.000"},
		{"Europe/Berlin", "CAST('2024-01-15 12:00:00+05:00' AS TIMESTAMP WITH TIME ZONE)", "2024-01-15 08:00:00.000"},
		{"Europe/Berlin", "CAST('2024-01-15 12:00:00' AS TIMESTAMP_LTZ) AT TIME ZONE 'UTC'", "2024-01-15 11:00:00.000"},
		{"Europe/Berlin", "CAST(TO_TIMESTAMP_LTZ(0, 0) AS TIMESTAMP)", "1970-01-01 01:00:00.000"},
		{"Europe/Berlin", "CAST(TO_TIMESTAMP_LTZ(0, 0) AS VARCHAR)", "1970-01-01 01:00:00.000"},
		// Flink's CONVERT_TZ example, and Berlin just before the spring change
		{"UTC", "CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles')", "1969-12-31 16:00:00"},
		{"UTC", "CONVERT_TZ('2024-03-31 01:30:00', 'Europe/Berlin', 'UTC')", "2024-03-31 00:30:00"},
		{"UTC", "CONVERT_TZ('2024-03-31 03:30:00', 'Europe/Berlin', 'UTC')", "2024-03-31 01:30:00"},
		// PostgreSQL: timestamp AT TIME ZONE z is a timestamptz, timestamptz AT TIME ZONE z a timestamp
		{"Europe/Berlin", "TIMESTAMP '2024-01-01 00:00:00' AT TIME ZONE 'Asia/Tokyo'", "2023-12-31 16:00:00.000"},
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(0, 0) AT TIME ZONE 'America/New_York'", "1969-12-31 19:00:00.000"},
		// EXTRACT and the formatting functions read the session zone's wall time
		{"Europe/Berlin", "EXTRACT(HOUR FROM TO_TIMESTAMP_LTZ(0, 0))", "1"},
		{"Europe/Berlin", "DATE_FORMAT(TO_TIMESTAMP_LTZ(0, 0), 'yyyy-MM-dd HH:mm')", "1970-01-01 01:00"},
		{"Europe/Berlin", "TO_TIMESTAMP_LTZ(0, 0) + INTERVAL '1' HOUR", "1970-01-01 02:00:00.000"},
	}
	for _, tc := range cases {
		t.Run(tc.zone+" "+tc.expr, func(t *testing.T) {
			got, err := value(t, tzSession(t, tc.zone), "SELECT "+tc.expr+";")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestTimeZoneErrors: unknown zones and bad arguments fail with an error
// at the offending text.
func TestTimeZoneErrors(t *testing.T) {
	cases := []struct{ sql, msg, at string }{
		{"SELECT CONVERT_TZ('2024-01-01 00:00:00', 'Nope/Zone', 'UTC');", `unknown time zone "Nope/Zone"`, "1:42"},
		{"SELECT TO_TIMESTAMP_LTZ(1, 6);", "the precision must be the constant 0", "1:28"},
		{"SELECT TIMESTAMP '2024-01-01 00:00:00' AT TIME ZONE 'Mars/Olympus';", `unknown time zone "Mars/Olympus"`, "1:53"},
		{"SET TIME ZONE 'Mars/Olympus';", `table.local-time-zone: unknown time zone "Mars/Olympus"`, "1:15"},
		{"SET 'table.local-time-zone' = 'Nope';", `table.local-time-zone: unknown time zone "Nope"`, "1:31"},
		{"SELECT CAST('soon' AS TIMESTAMP_LTZ);", "invalid TIMESTAMP_LTZ", "1:8"},
		{"CREATE TABLE t (a TIMESTAMP_LTZ(6));", "TIMESTAMP_LTZ(6): clink stores millisecond precision", "1:19"},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := value(t, tzSession(t, "UTC"), tc.sql)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.at) {
				t.Fatalf("got %v, want %q at %s", err, tc.msg, tc.at)
			}
		})
	}
}

// TestTimeZoneWindows: windows over a TIMESTAMP_LTZ attribute align in
// the session zone (Flink): a day in Europe/Berlin starts at 23:00 UTC,
// so 23:30 and 00:30 Berlin time fall in two days, while the same
// instants as UTC TIMESTAMPs share one. A WATERMARK may be declared on
// either timestamp kind; TIMESTAMP values inserted into a TIMESTAMP_LTZ
// column are wall times of the session zone.
func TestTimeZoneWindows(t *testing.T) {
	s := tzSession(t, "Europe/Berlin")
	ddl := `CREATE TABLE e (k VARCHAR, ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
INSERT INTO e VALUES ('a', TIMESTAMP '2024-01-15 23:30:00'), ('b', TIMESTAMP '2024-01-16 00:30:00');
CREATE TABLE u (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
INSERT INTO u VALUES ('a', TIMESTAMP '2024-01-15 22:30:00'), ('b', TIMESTAMP '2024-01-15 23:30:00');`
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		table string
		want  []string
	}{
		{"e", []string{"2024-01-15 00:00:00.000 2024-01-16 00:00:00.000 1", "2024-01-16 00:00:00.000 2024-01-17 00:00:00.000 1"}},
		{"u", []string{"2024-01-15 00:00:00.000 2024-01-16 00:00:00.000 2"}},
	}
	for _, tc := range cases {
		res, err := s.Exec(context.Background(), "SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE "+tc.table+
			", DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end ORDER BY window_start;")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res[0].Rows {
			got = append(got, strings.Join(r, " "))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("table %s: got\n%s\nwant\n%s", tc.table, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
