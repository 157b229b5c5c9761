package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"clink/sql/ops"
	"clink/sql/session"
)

const temporalRecoverDDL = `CREATE TABLE o (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (connector = 'values', bounded = 'false');
CREATE TABLE r (k BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND, PRIMARY KEY (k) NOT ENFORCED) WITH (connector = 'values', bounded = 'false');`

// temporalPhases: before the checkpoint versions of keys 0..4 and 7 at
// 0 s, updates of keys 0..2 at 4 s and orders at 1 s (joined: the
// watermark reaches 2 s) and 5 s (buffered at the checkpoint; key 7's
// alone, no later row of key 7 re-arms its timer). Between the
// checkpoint and the crash key 0 gets a version at 6 s, key 1 is deleted
// (a tombstone at its row's 4 s), key 5 appears at 6 s, orders at 7 s
// come and the watermark reaches 5 s (the 5 s orders join). After the
// restore key 2 gets a version at 9 s, orders at 10 s come and the end of
// input joins the rest.
var temporalPhases = [3]string{
	`INSERT INTO r VALUES (0, 0, TIMESTAMP '2024-01-01 00:00:00'), (1, 1, TIMESTAMP '2024-01-01 00:00:00'), (2, 2, TIMESTAMP '2024-01-01 00:00:00'),
  (3, 3, TIMESTAMP '2024-01-01 00:00:00'), (4, 4, TIMESTAMP '2024-01-01 00:00:00'), (7, 7, TIMESTAMP '2024-01-01 00:00:00');
UPDATE r SET w = w + 10, ts = TIMESTAMP '2024-01-01 00:00:04' WHERE k < 3;` + temporalOrders(1, 5) + `
INSERT INTO o VALUES (7, 57, TIMESTAMP '2024-01-01 00:00:05');`,
	`UPDATE r SET w = w + 100, ts = TIMESTAMP '2024-01-01 00:00:06' WHERE k = 0;
DELETE FROM r WHERE k = 1;
INSERT INTO r VALUES (5, 5, TIMESTAMP '2024-01-01 00:00:06'), (9, 9, TIMESTAMP '2024-01-01 00:00:08');` + temporalOrders(7),
	`UPDATE r SET w = w + 1000, ts = TIMESTAMP '2024-01-01 00:00:09' WHERE k = 2;` + temporalOrders(10),
}

// temporalOrders inserts one order per key 0..5 at each time (seconds),
// valued time*10+key.
func temporalOrders(secs ...int) string {
	var b strings.Builder
	for _, sec := range secs {
		for k := range 6 {
			fmt.Fprintf(&b, "\nINSERT INTO o VALUES (%d, %d, TIMESTAMP '2024-01-01 00:00:%02d');", k, sec*10+k, sec)
		}
	}
	return b.String()
}

var temporalRecoverQueries = []string{
	`SELECT o.k, o.v, r.w FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k`,
	`SELECT o.k, o.v, r.w, r.ts FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts ON r.k = o.k AND r.w < 1000`,
}

func temporalBatch(i int) func(*testing.T, *session.Session) {
	return func(t *testing.T, s *session.Session) {
		t.Helper()
		if _, err := s.Exec(context.Background(), temporalPhases[i]); err != nil {
			t.Fatal(err)
		}
	}
}

var temporalRestore = phasedRestore{
	ddl:     temporalRecoverDDL,
	batches: [3]func(*testing.T, *session.Session){temporalBatch(0), temporalBatch(1), temporalBatch(2)},
	checkpointed: func(t *testing.T, chs []ops.Change) {
		t.Helper()
		if len(chs) == 0 {
			t.Fatal("nothing joined before the checkpoint")
		}
	},
	crashed: func(t *testing.T, chs []ops.Change, before int) {
		t.Helper()
		if len(chs) == before {
			t.Fatal("nothing joined between the checkpoint and the crash")
		}
	},
}

// temporalWantLeft is the LEFT query's table derived by hand from the
// phases: each order joins its key's version at or before its time.
var temporalWantLeft = []string{
	"0|10|0", "1|11|1", "2|12|2", "3|13|3", "4|14|4", "5|15|NULL", // 1 s: the 0 s versions
	"0|50|10", "1|51|NULL", "2|52|12", "3|53|3", "4|54|4", "5|55|NULL", // 5 s: 1 is a tombstone from 4 s
	"0|70|110", "1|71|NULL", "2|72|12", "3|73|3", "4|74|4", "5|75|5",
	"0|100|110", "1|101|NULL", "2|102|1012", "3|103|3", "4|104|4", "5|105|5",
	"7|57|7", // joined only through its timer restored from the checkpoint
}

// TestTemporalJoinCrashRestore: probe rows and versions buffered at a
// checkpoint, a crash after joined rows were emitted past it, a restore
// at the same and at another parallelism: every order is joined exactly
// once with the version valid at its time (the hand-derived table for
// the LEFT query), equal to an uninterrupted run's.
func TestTemporalJoinCrashRestore(t *testing.T) {
	var want []string
	for _, r := range temporalWantLeft {
		want = append(want, strings.ReplaceAll(r, "|", "\t"))
	}
	slices.Sort(want)
	for _, v := range variants {
		for qi, q := range temporalRecoverQueries {
			for _, to := range []int{v.par, 5 - v.par} {
				t.Run(fmt.Sprintf("%s/q%d/to-p%d", v.name, qi, to), func(t *testing.T) {
					unint := temporalUninterrupted(t, v, q)
					if qi == 0 && !slices.Equal(unint, want) {
						t.Fatalf("uninterrupted run:\n%s", diff(unint, want))
					}
					h, _ := temporalRestore.run(t, v, q, to)
					checkRowsOnce(t, h.Changes())
					if got := rowsOf(h); !slices.Equal(got, unint) {
						t.Fatalf("after restore:\n%s", diff(got, unint))
					}
				})
			}
		}
	}
}

func temporalUninterrupted(t *testing.T, v variant, q string) []string {
	t.Helper()
	s := sessionWith(t, v, temporalRecoverDDL)
	for i := range temporalPhases {
		temporalBatch(i)(t, s)
	}
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.EndInput()
	run(t, h)
	checkRowsOnce(t, h.Changes())
	return rowsOf(h)
}
