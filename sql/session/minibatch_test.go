package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// miniBatched is variants[i] with Config.MiniBatch on.
func miniBatched(i int) variant {
	v := variants[i]
	v.name, v.miniBatch = v.name+"-minibatch", true
	return v
}

// TestMiniBatchDifferential: folding GROUP BY changes per group leaves
// every final result equal to SQLite's, on the sync and async paths.
func TestMiniBatchDifferential(t *testing.T) {
	data := genData(3)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, diffQueries, 0)
	for _, v := range []variant{miniBatched(1), miniBatched(3)} {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), diffQueries, want)
		})
	}
}

// TestMiniBatchCrashRestore: the batch flushes at the barrier, so a
// restore from the checkpoint is exactly-once.
func TestMiniBatchCrashRestore(t *testing.T) {
	for _, v := range []variant{miniBatched(1), miniBatched(3)} {
		for qi, q := range recoverQueries {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				want := uninterrupted(t, v, q)
				if got := crashRestoreRows(t, v, q); !slices.Equal(got, want) {
					t.Fatalf("after restore:\n%s", diff(got, want))
				}
			})
		}
	}
}

// TestMiniBatchFolds counts the changes the sink saw: 2000 updates of 10
// groups fold to one +I per group, where the unbatched run emits one
// change per update.
func TestMiniBatchFolds(t *testing.T) {
	tests := []struct {
		v        variant
		min, max int
	}{
		{variants[1], 2000, 4000},
		{miniBatched(1), 10, 10},
		{miniBatched(3), 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.v.name, func(t *testing.T) {
			s := sessionWith(t, tt.v, "CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'values');")
			for i := range 2000 {
				if _, err := s.Exec(context.Background(), fmt.Sprintf("INSERT INTO ev VALUES (%d, %d);", i%10, i)); err != nil {
					t.Fatal(err)
				}
			}
			h, err := s.Query(context.Background(), "SELECT k, COUNT(*), MAX(v) FROM ev GROUP BY k")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			run(t, h)
			if n := h.Len(); n < tt.min || n > tt.max {
				t.Fatalf("the sink saw %d changes, want %d..%d", n, tt.min, tt.max)
			}
			if got := len(h.Table()); got != 10 {
				t.Fatalf("%d result rows, want 10", got)
			}
			res, err := s.Exec(context.Background(), "EXPLAIN SELECT k, COUNT(*) FROM ev GROUP BY k")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(res[0].Message, "mini-batch"); got != tt.v.miniBatch {
				t.Fatalf("EXPLAIN names mini-batch: %v, want %v\n%s", got, tt.v.miniBatch, res[0].Message)
			}
		})
	}
}
