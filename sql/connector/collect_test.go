package connector

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"clink/sql/ops"
	"clink/state"
)

// replay is the oracle: a fresh collector fed the first n changes.
func replay(log []ops.Change) string {
	c := NewCollector()
	for _, ch := range log {
		c.Emit(ch)
	}
	return fmt.Sprint(c.Table())
}

// TestCollectorRewindMatchesReplay checks that rewinding to any kept
// checkpoint leaves exactly the table a replay of the changelog up to its
// barrier builds (rows, multiplicities and order of first appearance).
func TestCollectorRewindMatchesReplay(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		c := NewCollector()
		var log []ops.Change
		marks := map[state.CheckpointID]int{}
		var order []state.CheckpointID
		id := state.CheckpointID(0)
		for step := 0; step < 3000; step++ {
			switch r := rng.IntN(100); {
			case r < 5:
				id++
				c.EmitBarrier(id)
				marks[id] = len(log)
				order = append(order, id)
				if len(order) > MaxRewindMarks {
					order = order[1:]
				}
			case r < 7 && len(order) > 0:
				back := order[rng.IntN(len(order))]
				n, ok := c.Rewind(back)
				if !ok || n != marks[back] {
					t.Fatalf("seed %d: Rewind(%d) = %d, %v; want %d", seed, back, n, ok, marks[back])
				}
				log = log[:n]
				for len(order) > 0 && order[len(order)-1] > back {
					order = order[:len(order)-1]
				}
				if got, want := fmt.Sprint(c.Table()), replay(log); got != want {
					t.Fatalf("seed %d step %d: after Rewind(%d)\n got %s\nwant %s", seed, step, back, got, want)
				}
				checkHead(t, c)
			default:
				kind := ops.Insert
				if rng.IntN(3) == 0 {
					kind = ops.Delete
				}
				ch := change(kind, rng.Int64N(40))
				c.Emit(ch)
				log = append(log, ch)
			}
		}
		if got, want := fmt.Sprint(c.Table()), replay(log); got != want {
			t.Fatalf("seed %d: final table\n got %s\nwant %s", seed, got, want)
		}
		checkHead(t, c)
	}
}

// checkHead compares Head and Rows with the full Table.
func checkHead(t *testing.T, c *Collector) {
	t.Helper()
	all := c.Table()
	if c.Rows() != len(all) {
		t.Fatalf("Rows() = %d, Table has %d", c.Rows(), len(all))
	}
	for _, n := range []int{1, 5, len(all) + 1} {
		if got, want := fmt.Sprint(c.Head(n)), fmt.Sprint(all[:min(n, len(all))]); got != want {
			t.Fatalf("Head(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestCollectorRewindForgetsOldMarks(t *testing.T) {
	c := NewCollector()
	for id := state.CheckpointID(1); id <= MaxRewindMarks+2; id++ {
		c.Emit(change(ops.Insert, int64(id)))
		c.EmitBarrier(id)
	}
	if _, ok := c.Rewind(1); ok {
		t.Fatalf("rewound to checkpoint 1, older than the newest %d marks", MaxRewindMarks)
	}
	if n, ok := c.Rewind(3); !ok || n != 3 {
		t.Fatalf("Rewind(3) = %d, %v; want 3, true", n, ok)
	}
}

// TestCollectorHoldsBoundedState counts what the sink holds after many
// changes: the tail never exceeds its capacity, a NoTable collector holds
// no rows, and the table holds the result, not the changelog.
func TestCollectorHoldsBoundedState(t *testing.T) {
	tests := []struct {
		name              string
		tailCap           int
		noTable           bool
		wantTail, wantRow int
	}{
		{"final: table, no tail", 0, false, 0, 10},
		{"view: table and tail", 100, false, 100, 10},
		{"stream: nothing", 0, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector()
			c.TailCap, c.NoTable = tt.tailCap, tt.noTable
			streamed := 0
			c.OnChange = func(ops.Change) error { streamed++; return nil }
			for i := range 100000 {
				k := int64(i % 10)
				if i >= 10 {
					c.Emit(change(ops.UpdateBefore, k, int64(i-10)))
				}
				c.Emit(change(ops.UpdateAfter, k, int64(i)))
			}
			if got := len(c.tail.buf); got != tt.wantTail {
				t.Errorf("tail holds %d changes, want %d", got, tt.wantTail)
			}
			if got := c.table.distinct(); got != tt.wantRow {
				t.Errorf("table holds %d rows, want %d", got, tt.wantRow)
			}
			if streamed != c.Len() || c.Len() != 199990 {
				t.Errorf("OnChange saw %d of %d changes", streamed, c.Len())
			}
		})
	}
}

func TestCollectorReadSkipsWhatFellOut(t *testing.T) {
	c := NewCollector()
	c.TailCap = 3
	for i := range 10 {
		c.Emit(change(ops.Insert, int64(i)))
	}
	tests := []struct {
		at          int64
		wantVal     string
		wantSkipped int64
		wantOK      bool
	}{
		{0, "+I[7]", 7, true},
		{7, "+I[7]", 0, true},
		{9, "+I[9]", 0, true},
		{10, "", 0, false},
	}
	for _, tt := range tests {
		ch, skipped, ok := c.Read(tt.at)
		got := ""
		if ok {
			got = ch.String()
		}
		if got != tt.wantVal || skipped != tt.wantSkipped || ok != tt.wantOK {
			t.Errorf("Read(%d) = %q, %d, %v; want %q, %d, %v", tt.at, got, skipped, ok, tt.wantVal, tt.wantSkipped, tt.wantOK)
		}
	}
	if got := fmt.Sprint(c.Changes(8)); got != "[+I[8] +I[9]]" {
		t.Errorf("Changes(8) = %s", got)
	}
	none := NewCollector()
	none.Emit(change(ops.Insert, 1))
	if _, skipped, ok := none.Read(0); ok || skipped != 1 {
		t.Errorf("a collector without a tail: Read(0) = %d, %v; want 1 skipped", skipped, ok)
	}
}

// TestCollectorRewindCopiesStayBounded: checkpoints that each follow an
// update of every row keep copies of at most about twice the table, and
// the newest checkpoint still rewinds exactly; NoRewind keeps none.
func TestCollectorRewindCopiesStayBounded(t *testing.T) {
	for _, noRewind := range []bool{false, true} {
		c := NewCollector()
		c.NoRewind = noRewind
		const rows = 5000
		for k := range rows {
			c.Emit(change(ops.Insert, int64(k), 0))
		}
		var log []ops.Change
		for id := state.CheckpointID(1); id <= MaxRewindMarks; id++ {
			c.EmitBarrier(id)
			log = log[:0]
			for k := range rows {
				for _, ch := range []ops.Change{change(ops.UpdateBefore, int64(k), int64(id-1)), change(ops.UpdateAfter, int64(k), int64(id))} {
					c.Emit(ch)
					log = append(log, ch)
				}
			}
		}
		if noRewind {
			if len(c.table.marks) != 0 || c.table.savedRows != 0 {
				t.Fatalf("NoRewind kept %d marks, %d rows", len(c.table.marks), c.table.savedRows)
			}
			if _, ok := c.Rewind(MaxRewindMarks); ok {
				t.Fatal("NoRewind rewound")
			}
			continue
		}
		if limit := 2*rows + rewindSlack; c.table.savedRows > limit {
			t.Fatalf("rewind copies hold %d rows, want at most %d", c.table.savedRows, limit)
		}
		if _, ok := c.Rewind(MaxRewindMarks); !ok {
			t.Fatal("the newest checkpoint cannot be rewound to")
		}
		for _, r := range c.Table() {
			if r[1].Int() != MaxRewindMarks-1 {
				t.Fatalf("after Rewind row %v, want v = %d", r, MaxRewindMarks-1)
			}
		}
	}
}
