package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"clink/sql/ops"
)

// The batches of TestLatenessCrashRestore, in seconds, with a 2 s
// watermark delay and a 10 s allowed lateness. Before the checkpoint the
// watermark reaches 9 s: [0,5) fired and kept. After it, a row late for
// [0,5) updates it (only possible if its fired entry survived the
// restore), 18 s fires [5,10) and [10,15) and purges [0,5), and rows late
// for those update them. After the restore, rows past the lateness of
// [0,5) and [5,10) are dropped, and the end fires the rest.
var (
	lateBefore = []int{0, 3, 6, 11, 7}
	lateAfter  = []int{1, 12, 18, 8, 14}
	lateLast   = []int{21, 26, 2, 9}
)

const lateRecoverSet = "SET 'window.allowed-lateness' = '10s';"

// lateRestore: the window restore with the lateness set and its batches.
var lateRestore = phasedRestore{
	ddl:          windowRecoverDDL + lateRecoverSet,
	batches:      windowPhases(lateBefore, lateAfter, lateLast),
	checkpointed: windowFiredBefore,
	crashed: func(t *testing.T, chs []ops.Change, before int) {
		t.Helper()
		if !hasUpdate(chs[before:]) {
			t.Fatal("no late update between the checkpoint and the crash")
		}
	},
}

// TestLatenessCrashRestore: window state kept for the lateness (fired
// entries, their purge timers, fired sessions) is checkpointed: after a
// crash between late updates and the next checkpoint, and a restore at
// the same and at another parallelism, late rows update the restored
// fired windows and sessions exactly as in an uninterrupted run.
func TestLatenessCrashRestore(t *testing.T) {
	for _, v := range variants {
		for qi, q := range windowRecoverQueries {
			for _, to := range []int{v.par, 5 - v.par} {
				t.Run(fmt.Sprintf("%s/q%d/to-p%d", v.name, qi, to), func(t *testing.T) {
					want := lateUninterrupted(t, v, q)
					h, before := lateRestore.run(t, v, q, to)
					if !hasUpdate(h.Changes()[before:]) {
						t.Fatal("no late update after the restore")
					}
					if got := rowsOf(h); !slices.Equal(got, want) {
						t.Fatalf("after restore:\n%s", diff(got, want))
					}
				})
			}
		}
	}
}

// hasUpdate reports whether a changelog retracts anything.
func hasUpdate(chs []ops.Change) bool {
	return slices.ContainsFunc(chs, func(c ops.Change) bool { return c.Kind.Retracts() })
}

func lateUninterrupted(t *testing.T, v variant, q string) []string {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), windowRecoverDDL+lateRecoverSet); err != nil {
		t.Fatal(err)
	}
	windowBatch(t, s, lateBefore...)
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	run(t, h)
	for _, b := range [][]int{lateAfter, lateLast} {
		windowBatch(t, s, b...)
		run(t, h)
	}
	h.EndInput()
	run(t, h)
	if !hasUpdate(h.Changes()) {
		t.Fatal("uninterrupted run: no late update")
	}
	return rowsOf(h)
}
