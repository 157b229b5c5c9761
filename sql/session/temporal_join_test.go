package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
)

// temporalDocDDL is Flink's event-time temporal join example (orders and
// a versioned currency_rates table, docs: "Joins / Temporal Joins"),
// with more versions: currency_rates is a values table with a PRIMARY
// KEY, so its INSERTs are +I, each UPDATE -U old/+U new (a new version at
// the new update_time) and the DELETE -D old (a tombstone at the deleted
// row's time, as Flink keeps it). Each table's rows come in time order
// within its watermark delay, so no row is late.
const temporalDocDDL = `CREATE TABLE orders (order_id VARCHAR, price DECIMAL(18, 2), currency VARCHAR, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '15' SECOND) WITH (connector = 'values');
CREATE TABLE currency_rates (currency VARCHAR, conversion_rate DECIMAL(18, 2), update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time - INTERVAL '15' SECOND, PRIMARY KEY (currency) NOT ENFORCED) WITH (connector = 'values');
INSERT INTO currency_rates VALUES ('USD', 1.00, TIMESTAMP '2024-01-01 09:00:00'), ('GBP', 1.30, TIMESTAMP '2024-01-01 11:49:00');
DELETE FROM currency_rates WHERE currency = 'GBP';
INSERT INTO currency_rates VALUES ('EUR', 1.14, TIMESTAMP '2024-01-01 11:55:00'), ('JPY', 0.01, TIMESTAMP '2024-01-01 12:02:00');
UPDATE currency_rates SET conversion_rate = 1.02, update_time = TIMESTAMP '2024-01-01 12:03:00' WHERE currency = 'USD';
UPDATE currency_rates SET conversion_rate = 1.10, update_time = TIMESTAMP '2024-01-01 12:05:00' WHERE currency = 'EUR';
INSERT INTO orders VALUES
  ('o_008', 2.00, 'EUR', TIMESTAMP '2024-01-01 11:50:00'),
  ('o_001', 11.11, 'EUR', TIMESTAMP '2024-01-01 12:00:00'),
  ('o_005', 3.00, 'GBP', TIMESTAMP '2024-01-01 12:01:00'),
  ('o_006', 9.00, 'JPY', TIMESTAMP '2024-01-01 12:01:00'),
  ('o_003', 5.00, 'USD', TIMESTAMP '2024-01-01 12:02:59'),
  ('o_004', 7.00, 'USD', TIMESTAMP '2024-01-01 12:03:00'),
  ('o_007', 1.00, 'CHF', TIMESTAMP '2024-01-01 12:04:00'),
  ('o_002', 12.51, 'EUR', TIMESTAMP '2024-01-01 12:06:00');`

// temporalDocQuery is the documentation's query, as written there.
const temporalDocQuery = `SELECT order_id, price, orders.currency, conversion_rate, order_time
FROM orders
LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time
ON orders.currency = currency_rates.currency`

// temporalDocWant derives the expected rows from the doc's semantics:
// each order joins the latest version of its currency at or before its
// order_time; none (before the first version, an unknown currency, or a
// tombstone) pads with NULL in the LEFT join and drops the order in the
// INNER one. The rows render as the session's Row.String does.
func temporalDocWant(left bool) []string {
	type version struct {
		at   string
		rate string // "" is a tombstone
	}
	versions := map[string][]version{ // per currency, by time
		"EUR": {{"11:55:00", "1.14"}, {"12:05:00", "1.10"}}, // -U 1.14 is skipped, +U starts 1.10
		"USD": {{"09:00:00", "1.00"}, {"12:03:00", "1.02"}},
		"GBP": {{"11:49:00", ""}}, // -D carries the deleted row's time: its version is replaced
		"JPY": {{"12:02:00", "0.01"}},
	}
	orders := [][4]string{{"o_001", "11.11", "EUR", "12:00:00"}, {"o_002", "12.51", "EUR", "12:06:00"},
		{"o_003", "5.00", "USD", "12:02:59"}, {"o_004", "7.00", "USD", "12:03:00"}, {"o_005", "3.00", "GBP", "12:01:00"},
		{"o_006", "9.00", "JPY", "12:01:00"}, {"o_007", "1.00", "CHF", "12:04:00"}, {"o_008", "2.00", "EUR", "11:50:00"}}
	var out []string
	for _, o := range orders {
		rate := ""
		for _, v := range versions[o[2]] {
			if v.at <= o[3] { // same-day HH:MM:SS compare as strings
				rate = v.rate
			}
		}
		if rate == "" && !left {
			continue
		}
		if rate == "" {
			rate = "NULL"
		}
		out = append(out, strings.Join([]string{o[0], num(o[1]), o[2], num(rate), "2024-01-01 " + o[3] + ".000"}, "|"))
	}
	slices.Sort(out)
	return out
}

// num renders a DECIMAL as clink does: no trailing zeros.
func num(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// TestTemporalJoinFlinkDoc runs the documentation's LEFT temporal join
// and its INNER form on every variant (sync and async, parallelism 1 and
// 3) against the hand-derived table, and checks EXPLAIN.
func TestTemporalJoinFlinkDoc(t *testing.T) {
	inner := strings.Replace(temporalDocQuery, "LEFT JOIN", "JOIN", 1)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, temporalDocDDL)
			res, err := s.Exec(context.Background(), "EXPLAIN "+temporalDocQuery)
			if err != nil {
				t.Fatal(err)
			}
			plan := res[0].Message
			for _, want := range []string{"TemporalJoin", "LEFT OUTER AS OF orders.order_time, versions of currency_rates by currency_rates.update_time",
				"(orders.currency = currency_rates.currency)"} {
				if !strings.Contains(plan, want) {
					t.Fatalf("EXPLAIN lacks %q:\n%s", want, plan)
				}
			}
			if v.async && !strings.Contains(plan, "async, coalesced") {
				t.Fatalf("temporal join not on the async path:\n%s", plan)
			}
			for i, q := range []string{temporalDocQuery, inner} {
				want := temporalDocWant(i == 0)
				if got := clinkRows(t, s, q); !slices.Equal(got, want) {
					t.Errorf("query %d\n%s\n%s", i, q, diff(got, want))
				}
			}
		})
	}
}

// TestLookupJoinAsOfProctime: the processing-time temporal join form,
// FOR SYSTEM_TIME AS OF PROCTIME(), against an http lookup table is the
// lookup join (the lookup is at processing time either way): the same
// rows, INNER and LEFT, and the same EXPLAIN operator.
func TestLookupJoinAsOfProctime(t *testing.T) {
	u := newUserService(t)
	script := ordersDDL + u.ddl("ordered = 'true'")
	for _, c := range []struct {
		q    string
		want []string
	}{
		{`SELECT o.oid, u.id, u.name, u.tier FROM orders o JOIN users FOR SYSTEM_TIME AS OF PROCTIME() AS u ON o.user_id = u.id`,
			[]string{"10 | 1 | ann | 3", "11 | 2 | bob | NULL", "13 | 4 | NULL | 1", "15 | 1 | ann | 3"}},
		{`SELECT o.oid, u.name FROM orders o LEFT JOIN users FOR SYSTEM_TIME AS OF proctime() u ON u.id = o.user_id AND u.tier > 1`,
			[]string{"10 | ann", "11 | NULL", "12 | NULL", "13 | NULL", "14 | NULL", "15 | ann"}},
	} {
		got, h, err := runLookup(t, session.Config{Parallelism: 2}, script, c.q)
		if err != nil {
			t.Fatal(err)
		}
		assertRows(t, got, c.want)
		if plan := h.Explain(); !strings.Contains(plan, "LookupJoin") {
			t.Errorf("%s: not a lookup join:\n%s", c.q, plan)
		}
	}
}

// TestTemporalJoinLateProbe: a probe row at or behind the join's
// watermark (the smaller of both sides') when it arrives is dropped, not
// joined nor padded, while one just ahead of it waits and joins the
// version valid at its time, a version arriving after it included.
func TestTemporalJoinLateProbe(t *testing.T) {
	ctx := context.Background()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, `CREATE TABLE o (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'values', bounded = 'false');
CREATE TABLE r (k BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (k) NOT ENFORCED) WITH (connector = 'values', bounded = 'false');
INSERT INTO r VALUES (1, 10, TIMESTAMP '2024-01-01 00:00:00');
UPDATE r SET w = 20, ts = TIMESTAMP '2024-01-01 00:00:10';
INSERT INTO o VALUES (1, 1, TIMESTAMP '2024-01-01 00:00:05'), (1, 2, TIMESTAMP '2024-01-01 00:00:12');`)
			h, err := s.Query(ctx, `SELECT o.v, r.w FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k`)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			run(t, h) // the watermark is min(12 s, 10 s) - 1 s = 9 s: v=1 joined
			if got := rowsOf(h); !slices.Equal(got, []string{"1\t10"}) {
				t.Fatalf("at 9 s: %q", got)
			}
			if _, err := s.Exec(ctx, `INSERT INTO o VALUES (1, 3, TIMESTAMP '2024-01-01 00:00:04'), (1, 4, TIMESTAMP '2024-01-01 00:00:09'), (1, 5, TIMESTAMP '2024-01-01 00:00:10');
UPDATE r SET w = 30, ts = TIMESTAMP '2024-01-01 00:00:11';`); err != nil {
				t.Fatal(err)
			}
			h.EndInput()
			run(t, h)
			if got, want := rowsOf(h), []string{"1\t10", "2\t30", "5\t20"}; !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q (v=3 and v=4 are late)", got, want)
			}
		})
	}
}

// TestTemporalJoinUpsertKafka: an upsert-kafka topic as the versioned
// table (its Upsert stage turns the topic into +I, -U/+U and -D): an
// update starts a version at its time, a tombstone hides the deleted
// row's version (-D carries that row and its time), sync and async.
func TestTemporalJoinUpsertKafka(t *testing.T) {
	k := newKafka(t, 1, "rates")
	for _, r := range [][2]string{
		{`{"currency":"EUR"}`, `{"currency":"EUR","rate":114,"ts":"2024-01-01 00:00:01"}`},
		{`{"currency":"USD"}`, `{"currency":"USD","rate":100,"ts":"2024-01-01 00:00:01"}`},
		{`{"currency":"GBP"}`, `{"currency":"GBP","rate":80,"ts":"2024-01-01 00:00:02"}`},
		{`{"currency":"GBP"}`, ""}, // before the watermark passes o3
		{`{"currency":"EUR"}`, `{"currency":"EUR","rate":119,"ts":"2024-01-01 00:00:05"}`},
	} {
		var v []byte
		if r[1] != "" {
			v = []byte(r[1])
		}
		k.produceKV(t, "rates", 0, []byte(r[0]), v)
	}
	ddl := fmt.Sprintf(`CREATE TABLE rates (currency VARCHAR, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED) WITH (connector = 'upsert-kafka', topic = 'rates', 'properties.bootstrap.servers' = '%s',
  'scan.bounded.mode' = 'latest-offset');
CREATE TABLE orders (id VARCHAR, currency VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'values');
INSERT INTO orders VALUES ('o1', 'EUR', TIMESTAMP '2024-01-01 00:00:03'), ('o2', 'USD', TIMESTAMP '2024-01-01 00:00:03'),
  ('o3', 'GBP', TIMESTAMP '2024-01-01 00:00:03'), ('o4', 'EUR', TIMESTAMP '2024-01-01 00:00:06');`, k.addr)
	q := `SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency`
	want := "o1,114|o2,100|o3,NULL|o4,119"
	for _, uri := range []string{"memory://", "disagg-local://?latency=uniform(0.1ms,1ms)&hot_max_bytes=1KiB"} {
		t.Run(uri, func(t *testing.T) {
			s, err := session.New(session.Config{Parallelism: 2, StateURI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), ddl); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(execRows(t, s, q), "|"); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			res, err := s.Exec(context.Background(), "EXPLAIN "+q)
			if err != nil {
				t.Fatal(err)
			}
			if plan := res[0].Message; !strings.Contains(plan, "Upsert") || !strings.Contains(plan, "TemporalJoin") {
				t.Errorf("EXPLAIN:\n%s", plan)
			}
		})
	}
}

// TestTemporalJoinWindow: the probe side's AS OF column stays a time
// attribute through the join (its rows leave when the watermark passes
// that time, before the join forwards the watermark), so a TUMBLE over
// the joined rows is a watermark-driven window aggregate. Hand-derived
// from temporalDocWant: 12:00-12:05 holds o_001 (11.11 x 1.14), o_003
// (5 x 1.00) and o_004 (7 x 1.02), 12:05-12:10 o_002 (12.51 x 1.10).
func TestTemporalJoinWindow(t *testing.T) {
	q := `SELECT TUMBLE_START(order_time, INTERVAL '5' MINUTE) AS ws, COUNT(*) AS n, SUM(price * conversion_rate) AS total
FROM orders JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time ON orders.currency = currency_rates.currency
GROUP BY TUMBLE(order_time, INTERVAL '5' MINUTE)`
	want := []string{"2024-01-01 12:00:00.000|3|24.8054", "2024-01-01 12:05:00.000|1|13.761"}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, temporalDocDDL)
			res, err := s.Exec(context.Background(), "EXPLAIN "+q)
			if err != nil {
				t.Fatal(err)
			}
			if plan := res[0].Message; !strings.Contains(plan, "WindowAgg") {
				t.Fatalf("not a window aggregate:\n%s", plan)
			}
			got, chs := clinkChanges(t, s, q)
			if !slices.Equal(got, want) {
				t.Fatalf("%s", diff(got, want))
			}
			if len(chs) != len(want) {
				t.Fatalf("changelog %v: each window once", chs)
			}
		})
	}
}

// temporalEvents: versions of keys 0..4 updated in time order every
// ~500 ms and 400 probe rows of those keys up to 1.9 s out of order
// (inside the 2 s delay), over 20 s.
func temporalEvents(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 11))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) string {
		return base.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02 15:04:05.000")
	}
	var b strings.Builder
	b.WriteString(`CREATE TABLE o (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (connector = 'values');
CREATE TABLE r (k BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND, PRIMARY KEY (k) NOT ENFORCED) WITH (connector = 'values');
`)
	for k := range 5 {
		fmt.Fprintf(&b, "INSERT INTO r VALUES (%d, %d, TIMESTAMP '%s');\n", k, k, at(r.IntN(1000)))
	}
	for i := range 40 {
		fmt.Fprintf(&b, "UPDATE r SET w = %d, ts = TIMESTAMP '%s' WHERE k = %d;\n", 100+i, at(1000+i*500), r.IntN(5))
	}
	for i := range 400 {
		fmt.Fprintf(&b, "INSERT INTO o VALUES (%d, %d, TIMESTAMP '%s');\n", r.IntN(5), i, at(max(0, i*50-r.IntN(1900))))
	}
	return b.String()
}

// TestTemporalJoinWindowNoneLate: over many out-of-order rows, a TUMBLE
// window aggregate of the temporal join's output (watermark-driven, so a
// row behind its watermark would be dropped) equals the same grouping as
// a plain GROUP BY over a column that is no time attribute (which drops
// nothing): the join emits each row before forwarding the watermark that
// released it, on every variant.
func TestTemporalJoinWindowNoneLate(t *testing.T) {
	join := `FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k`
	windowed := `SELECT TUMBLE_START(ts, INTERVAL '2' SECOND), COUNT(*), SUM(w) FROM (SELECT o.ts, r.w ` + join + `) GROUP BY TUMBLE(ts, INTERVAL '2' SECOND)`
	plain := `SELECT FLOOR(EXTRACT(EPOCH FROM ts) / 2), COUNT(*), SUM(w) FROM (SELECT o.ts, r.w ` + join + `) GROUP BY FLOOR(EXTRACT(EPOCH FROM ts) / 2)`
	ddl := temporalEvents(3)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			res, err := s.Exec(context.Background(), "EXPLAIN "+windowed)
			if err != nil || !strings.Contains(res[0].Message, "WindowAgg") {
				t.Fatalf("not a window aggregate: %v\n%v", err, res)
			}
			w, p := clinkRows(t, s, windowed), clinkRows(t, s, plain)
			if len(w) < 9 || len(w) != len(p) {
				t.Fatalf("%d windows, %d plain groups", len(w), len(p))
			}
			for i := range w {
				_, wr, _ := strings.Cut(w[i], "|")
				_, pr, _ := strings.Cut(p[i], "|")
				if wr != pr {
					t.Fatalf("window %s: %s, plain %s", w[i], wr, pr)
				}
			}
		})
	}
}
