package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"clink/sql/session"
)

func insertBatch(t *testing.T, s *session.Session, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "INSERT INTO ev VALUES (%d, %d, 'g%d');\n", i%17, (i*31)%100, i%5)
	}
	if _, err := s.Exec(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

func rowsOf(h *session.Handle) []string {
	var out []string
	for _, r := range h.Table() {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

const recoverDDL = `CREATE TABLE ev (k BIGINT, v BIGINT, g VARCHAR) WITH (connector = 'values', bounded = 'false');
CREATE TABLE dim (k BIGINT, name VARCHAR) WITH (connector = 'values');
INSERT INTO dim VALUES (1, 'one'), (2, 'two'), (3, 'three'), (20, 'twenty');`

var recoverQueries = []string{
	`SELECT k, COUNT(*), SUM(v), MAX(v) FROM ev GROUP BY k`,
	`SELECT DISTINCT g, k FROM ev`,
	`SELECT d.name, COUNT(*) FROM ev e FULL JOIN dim d ON e.k = d.k GROUP BY d.name`,
}

// TestCheckpointCrashRestore: checkpoint at parallelism 2, process more,
// crash, restore at parallelism 3, finish: the final table equals an
// uninterrupted run's (exactly-once, including the collected result).
func TestCheckpointCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
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

// crashRestoreRows runs q at parallelism 2 over rows 0..150 of ev, takes a
// checkpoint, processes rows 150..250 (the checkpoint must complete),
// crashes, inserts rows 250..300 while down, restores at parallelism 3
// and ends the input: the restored query's final table.
func crashRestoreRows(t *testing.T, v variant, q string) []string {
	t.Helper()
	v.par = 2
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), recoverDDL); err != nil {
		t.Fatal(err)
	}
	insertBatch(t, s, 0, 150)
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	run(t, h)
	id, err := h.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	insertBatch(t, s, 150, 250)
	run(t, h)
	if !slices.Contains(h.Checkpoints(), id) {
		t.Fatalf("checkpoint %d did not complete: %v", id, h.Checkpoints())
	}
	if err := h.Crash(); err != nil {
		t.Fatal(err)
	}
	insertBatch(t, s, 250, 300)
	if err := h.Restore(context.Background(), id, 3); err != nil {
		t.Fatal(err)
	}
	h.EndInput()
	run(t, h)
	if !h.Finished() {
		t.Fatal("restored query did not finish")
	}
	return rowsOf(h)
}

func run(t *testing.T, h *session.Handle) {
	t.Helper()
	if err := h.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
}

func uninterrupted(t *testing.T, v variant, q string) []string {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), recoverDDL); err != nil {
		t.Fatal(err)
	}
	insertBatch(t, s, 0, 300)
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.EndInput()
	run(t, h)
	if !h.Finished() {
		t.Fatal("query did not finish")
	}
	return rowsOf(h)
}
