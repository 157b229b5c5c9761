package lookup

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/state"
)

// simJob runs a stepped job on a Sim: a log source, the lookup stage at
// parallelism p (records spread round-robin), and the recorder as sink.
func simJob(t *testing.T, log *engine.Log[Rec], p int, mode Mode, forceSync bool) (*recorder, *engine.Job[Rec]) {
	t.Helper()
	sim := async.NewSim(3, nil)
	out := &recorder{}
	g := engine.Graph[Rec]{Stages: []engine.StageSpec[Rec]{
		{Name: "log", Parallelism: 1, NewSource: log.Source},
		{Name: "enrich", Parallelism: p, OpID: 1,
			NewOperator: func(int) engine.Operator[Rec] {
				svc := newFake(sim, func(id int) time.Duration { return ms(1 + (id*37)%23) })
				return New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Mode: mode,
					MaxConcurrency: 8, Idle: sim.Step})
			},
			Inputs: []engine.Edge[Rec]{{From: 0, Partitioning: engine.Rebalance}}},
	}}
	j, err := engine.NewJob(g, engine.Sink[Rec](out), engine.JobConfig{
		Clock: sim, Persist: sim, Idle: sim.Step, ForceSync: forceSync,
		NewBackend: func(stage string, sub, p int) (state.Backend, error) {
			return state.NewMemoryBackend(state.Options{Name: stage}.ForSubtask(sub, p), nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	if err := j.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if !j.Finished() || !out.ended {
		t.Fatal("job did not reach the end of its input")
	}
	return out, j
}

func scenarioLog() *engine.Log[Rec] {
	log := &engine.Log[Rec]{}
	for i := 1; i <= 40; i++ {
		log.Append(Rec{ID: i})
		if i%10 == 0 {
			log.AppendWatermark(int64(i))
		}
	}
	log.Close()
	return log
}

// checkNoLate fails if a record that preceded watermark W in the input
// (id <= W) reaches the sink after W: the watermark must wait for every
// lookup before it. Records after W may reach it early from the other
// subtask: the sink's watermark is the minimum over its inputs.
func checkNoLate(t *testing.T, trace []string) {
	t.Helper()
	seen := map[int]bool{}
	for _, l := range trace {
		var w, id int
		if _, err := fmt.Sscanf(l, "wm %d", &w); err == nil {
			for i := 1; i <= w; i++ {
				if !seen[i] {
					t.Fatalf("record %d after wm %d: %v", i, w, trace)
				}
			}
			continue
		}
		if _, err := fmt.Sscanf(l, "%d=", &id); err != nil {
			t.Fatalf("bad trace line %q", l)
		}
		seen[id] = true
	}
	if len(seen) != 40 {
		t.Fatalf("%d records reached the sink, want 40", len(seen))
	}
}

// TestScenarioOrderedJob is the golden, scenario-style run: at parallelism
// 1 an ordered lookup stage reproduces its input exactly, watermarks in
// place, the same as the synchronous path.
func TestScenarioOrderedJob(t *testing.T) {
	var want []string
	for i := 1; i <= 40; i++ {
		want = append(want, fmt.Sprintf("%d=v%d", i, i))
		if i%10 == 0 {
			want = append(want, fmt.Sprintf("wm %d", i))
		}
	}
	for _, forceSync := range []bool{false, true} {
		out, j := simJob(t, scenarioLog(), 1, Ordered, forceSync)
		if got := out.trace(); !slices.Equal(got, want) {
			t.Fatalf("forceSync=%v:\n%s", forceSync, strings.Join(got, " "))
		}
		if async := j.Runners()[0].Async(); async == forceSync {
			t.Fatalf("forceSync=%v but runner async=%v", forceSync, async)
		}
	}
}

// TestScenarioParallelJob: at parallelism 2 in both modes, the run is
// deterministic on the Sim and no record is late for a watermark.
func TestScenarioParallelJob(t *testing.T) {
	syncOut, _ := simJob(t, scenarioLog(), 2, Ordered, true)
	checkNoLate(t, syncOut.trace())
	for _, mode := range []Mode{Ordered, Unordered} {
		a, _ := simJob(t, scenarioLog(), 2, mode, false)
		b, _ := simJob(t, scenarioLog(), 2, mode, false)
		if !slices.Equal(a.trace(), b.trace()) {
			t.Fatalf("%s: two runs differ:\n%v\n%v", mode, a.trace(), b.trace())
		}
		checkNoLate(t, a.trace())
	}
}
