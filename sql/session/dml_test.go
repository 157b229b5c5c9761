package session_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"clink/sql/session"
)

// dmlDDL: ev has a PRIMARY KEY (so queries plan for retractions from the
// start); dim has none (append-only until its first DELETE or UPDATE:
// the joins over it do not rely on that).
const dmlDDL = `CREATE TABLE ev (id BIGINT, k BIGINT, v BIGINT, g VARCHAR, PRIMARY KEY (id)) WITH (connector = 'values', bounded = 'false');
CREATE TABLE dim (k BIGINT, name VARCHAR) WITH (connector = 'values', bounded = 'false');`

// dmlQueries pair each streaming query with its SQLite form ("": the same).
var dmlQueries = [][2]string{
	{`SELECT k, COUNT(*), SUM(v), MIN(v), MAX(v) FROM ev GROUP BY k`, ""},
	{`SELECT d.name, e.g, COUNT(*), SUM(e.v) FROM ev e JOIN dim d ON e.k = d.k GROUP BY d.name, e.g`, ""},
	{`SELECT e.id, e.v, d.name FROM ev e LEFT JOIN dim d ON e.k = d.k`, ""},
	{`SELECT g, k, COUNT(*), SUM(v), GROUPING(g, k) FROM ev GROUP BY ROLLUP(g, k)`,
		`SELECT g, k, COUNT(*), SUM(v), 0 FROM ev GROUP BY g, k UNION ALL SELECT g, NULL, COUNT(*), SUM(v), 1 FROM ev GROUP BY g
		 UNION ALL SELECT NULL, NULL, COUNT(*), SUM(v), 3 FROM ev`},
	{`SELECT DISTINCT g, v % 3 FROM ev`, ""},
}

// dmlSteps is the script both engines run: statements (the same SQL on
// SQLite), and for clink "run", "checkpoint" and "crash" (crash, then
// restore the checkpoint at another parallelism: the values positions in
// the checkpoint lie before DELETEs and UPDATEs the restored job re-reads).
func dmlSteps() []string {
	var ins []string
	for i := range 60 {
		ins = append(ins, fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, %d, 'g%d')", i, i%7, (i*37)%50, i%4))
	}
	steps := append(ins, "INSERT INTO dim VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')",
		"run", "checkpoint",
		"DELETE FROM ev WHERE v < 10",
		"UPDATE ev SET v = v + 100 WHERE k = 3",
		"run",
		"UPDATE ev SET id = id + 1000 WHERE g = 'g1'",
		"DELETE FROM dim WHERE k = 2",
		"UPDATE dim SET name = 'three!' WHERE k = 3",
		"crash",
		"INSERT INTO ev VALUES (500, 2, 7, 'g0'), (501, 3, NULL, NULL), (502, 9, 1, 'g2')",
		"INSERT INTO dim VALUES (2, 'two again')",
		"DELETE FROM ev WHERE id % 5 = 0",
		"UPDATE ev SET g = NULL, k = k + 1 WHERE id % 7 = 1",
		"run",
		"DELETE FROM ev WHERE g IS NULL AND v > 100",
	)
	return steps
}

// TestDMLRetractionsDifferential runs dmlQueries as streaming queries over
// unbounded values tables while dmlSteps' INSERTs, DELETEs and UPDATEs
// change them, with a checkpoint, a crash and a restore at another
// parallelism in between, on every variant; each final table must equal
// SQLite's result after the same statements, and the changelogs must hold
// retractions.
func TestDMLRetractionsDifferential(t *testing.T) {
	db := oracle(t, nil)
	defer db.Close()
	for _, ddl := range []string{"CREATE TABLE ev (id INTEGER PRIMARY KEY, k INTEGER, v INTEGER, g TEXT)", "CREATE TABLE dim (k INTEGER, name TEXT)"} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range dmlSteps() {
		if !slices.Contains([]string{"run", "checkpoint", "crash"}, st) {
			if _, err := db.Exec(st); err != nil {
				t.Fatalf("sqlite: %v: %s", err, st)
			}
		}
	}
	var oq []string
	for _, p := range dmlQueries {
		oq = append(oq, cmp.Or(p[1], p[0]))
	}
	want := oracleWant(t, db, oq, 3)
	for _, v := range variants {
		for qi, q := range side(dmlQueries, 0) {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				got, retracts := dmlRun(t, v, q)
				if !slices.Equal(got, want[qi]) {
					t.Errorf("differs from SQLite\n%s\n%s", q, diff(got, want[qi]))
				}
				if !retracts {
					t.Errorf("no -U/-D in the changelog of %s", q)
				}
			})
		}
	}
}

// dmlRun runs q through dmlSteps and returns its final table (normalised
// as the oracle's) and whether its changelog retracted anything.
func dmlRun(t *testing.T, v variant, q string) ([]string, bool) {
	t.Helper()
	return dmlRunSteps(t, v, dmlDDL, dmlSteps(), q)
}

// dmlRunSteps is dmlRun over tables ddl and script steps.
func dmlRunSteps(t *testing.T, v variant, ddl string, steps []string, q string) ([]string, bool) {
	t.Helper()
	ctx := context.Background()
	s := sessionWith(t, v, ddl)
	h, err := s.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	retracts := false
	var ckpt []int64
	for _, st := range steps {
		switch st {
		case "run":
			run(t, h)
		case "checkpoint":
			id, err := h.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ckpt = append(ckpt, int64(id))
		case "crash":
			for _, ch := range h.Changes() {
				retracts = retracts || ch.Kind.Retracts()
			}
			id := h.Checkpoints()[len(h.Checkpoints())-1]
			if int64(id) != ckpt[len(ckpt)-1] {
				t.Fatalf("checkpoint %d did not complete: %v", ckpt[len(ckpt)-1], h.Checkpoints())
			}
			if err := h.Crash(); err != nil {
				t.Fatal(err)
			}
			if err := h.Restore(ctx, id, 4-v.par); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := s.Exec(ctx, st); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
	}
	h.EndInput()
	run(t, h)
	if !h.Finished() {
		t.Fatal("query did not finish")
	}
	for _, ch := range h.Changes() {
		retracts = retracts || ch.Kind.Retracts()
	}
	var out []string
	for _, row := range h.Table() {
		parts := make([]string, len(row))
		for i, x := range row {
			parts[i] = norm(clinkValue(x))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, retracts
}

// TestDMLChangelog checks the exact changes a running SELECT sees and the
// rows-affected messages: UPDATE is -U/+U, or -D/+I when it changes the
// PRIMARY KEY; DELETE is -D; a table without a key always gets -U/+U.
func TestDMLChangelog(t *testing.T) {
	ctx := context.Background()
	s := sessionWith(t, variants[0], `CREATE TABLE p (id BIGINT PRIMARY KEY, v VARCHAR) WITH (bounded = 'false');
CREATE TABLE n (id BIGINT, v VARCHAR) WITH (bounded = 'false');
INSERT INTO p VALUES (1, 'a'), (2, 'b');
INSERT INTO n VALUES (1, 'a');`)
	hp, err := s.Query(ctx, "SELECT * FROM p")
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	hn, err := s.Query(ctx, "SELECT id, v FROM n WHERE id > 0")
	if err != nil {
		t.Fatal(err)
	}
	defer hn.Close()
	for _, c := range []struct{ sql, msg string }{
		{"UPDATE p SET v = 'bb' WHERE id = 2", "UPDATE 1"},
		{"UPDATE p AS x SET id = x.id + 2 WHERE x.v = 'a'", "UPDATE 1"},
		{"DELETE FROM p WHERE v = 'bb'", "DELETE 1"},
		{"DELETE FROM p WHERE id = 99", "DELETE 0"},
		{"UPDATE n SET id = 5, v = v || '!'", "UPDATE 1"},
		{"DELETE FROM n", "DELETE 1"},
	} {
		res, err := s.Exec(ctx, c.sql)
		if err != nil || res[0].Message != c.msg {
			t.Fatalf("%s: %v %v, want %q", c.sql, res, err, c.msg)
		}
	}
	run(t, hp)
	run(t, hn)
	wantChanges(t, hp, "+I[1, a]", "+I[2, b]", "-U[2, b]", "+U[2, bb]", "-D[1, a]", "+I[3, a]", "-D[2, bb]")
	wantChanges(t, hn, "+I[1, a]", "-U[1, a]", "+U[5, a!]", "-D[5, a!]")
	if got := rowsOf(hp); !slices.Equal(got, []string{"3\ta"}) {
		t.Fatalf("p's table %v", got)
	}
}

// TestDMLAppendOnlyPin: a running query whose MIN/MAX relies on a table
// without a key being append-only pins it, so DELETE and UPDATE are
// refused (naming why) until it closes; queries planned after a DELETE
// expect retractions.
func TestDMLAppendOnlyPin(t *testing.T) {
	ctx := context.Background()
	s := sessionWith(t, variants[0], `CREATE TABLE n (k BIGINT, v BIGINT) WITH (bounded = 'false');
INSERT INTO n VALUES (1, 10), (1, 20);`)
	h, err := s.Query(ctx, "SELECT k, MAX(v) FROM n GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	run(t, h)
	for _, st := range []string{"DELETE FROM n WHERE v = 20", "UPDATE n SET v = 0"} {
		_, err := s.Exec(ctx, st)
		if err == nil || !strings.Contains(err.Error(), "a running query reads n as an append-only stream (its MIN/MAX keep only the extreme") {
			t.Fatalf("%s while a MAX query runs: %v", st, err)
		}
	}
	h.Close()
	if _, err := s.Exec(ctx, "DELETE FROM n WHERE v = 20"); err != nil {
		t.Fatal(err)
	}
	h2 := startRun(t, s, "SELECT k, MAX(v) FROM n GROUP BY k")
	defer h2.Close()
	if _, err := s.Exec(ctx, "UPDATE n SET v = 5"); err != nil {
		t.Fatalf("a query planned after the DELETE expects retractions: %v", err)
	}
	h2.EndInput()
	run(t, h2)
	if got := rowsOf(h2); !slices.Equal(got, []string{"1\t5"}) {
		t.Fatalf("MAX after DELETE and UPDATE: %v (changes %v)", got, h2.Changes())
	}
	if !strings.Contains(h2.Explain(), "updating: DELETE and UPDATE retract") {
		t.Fatalf("EXPLAIN does not say the scan retracts:\n%s", h2.Explain())
	}
}

func startRun(t *testing.T, s *session.Session, q string) *session.Handle {
	t.Helper()
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	run(t, h)
	return h
}
