package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"clink/engine/async"
	"clink/sql/ops"
)

// streamFault injects pool faults into the streaming query's state pool
// (the session's pool for this query) or changes the simulated latency.
func (r *Replayer) streamFault(a *args) (string, error) {
	f, ok := r.q.h.Faults()
	if l, has, err := a.latency("latency"); err != nil {
		return "", err
	} else if has {
		r.sim.setLatency(l)
		if lp, ok := f.(interface{ SetLatency(async.Latency) }); ok {
			lp.SetLatency(l)
		}
		return fmt.Sprintf("pool latency is now %s", l), nil
	}
	acts := a.bare()
	if len(acts) != 1 {
		return "", argErr("", "want one action: fail-reads, fail-commits, throttle, clear or latency=DIST")
	}
	n, err := a.integer("n", 1, 1)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errors.New("the query's state pool has no fault injection")
	}
	switch acts[0] {
	case "fail-reads":
		f.FailReads(int(n), nil)
		return fmt.Sprintf("the next %d pool reads fail", n), nil
	case "fail-commits":
		f.FailCommits(int(n), nil)
		return fmt.Sprintf("the next %d checkpoint commits fail", n), nil
	case "throttle":
		f.Throttle(int(n))
		return fmt.Sprintf("the next %d pool reads are throttled", n), nil
	case "clear":
		f.FailReads(0, nil)
		f.FailCommits(0, nil)
		f.Throttle(0)
		return "faults cleared", nil
	case "fail-read", "delay":
		return "", argErr(acts[0], "per-key faults need the counter (a SQL query's state keys are encoded): use fail-reads n=N")
	}
	return "", argErr(acts[0], "unknown fault action")
}

// streamResults prints the query's materialised table (rows sorted unless
// the query has ORDER BY) or its changelog: in sink order, or grouped by
// the first key=N columns (by-key), keeping each key's order.
func (r *Replayer) streamResults(a *args) (string, error) {
	mode, byKey := "table", false
	for _, x := range a.bare() {
		switch x {
		case "table", "changelog":
			mode = x
		case "by-key":
			byKey = true
		default:
			return "", argErr(x, "want table, changelog or by-key (raw is the counter's)")
		}
	}
	cols, err := a.integer("key", 1, 1)
	if err != nil {
		return "", err
	}
	h := r.q.h
	if mode == "table" {
		res := h.Result()
		if len(h.Plan.Order) == 0 {
			slices.SortStableFunc(res.Rows, func(x, y []string) int { return slices.Compare(x, y) })
		}
		return res.String(), nil
	}
	lines := changeLines(h.Changes(), byKey, int(cols))
	if len(lines) == 0 {
		return "(empty)\n", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// changeLines renders changes; by key, they are grouped by their first
// cols values (groups sorted, each in sink order).
func changeLines(chs []ops.Change, byKey bool, cols int) []string {
	type line struct{ key, text string }
	out := make([]line, len(chs))
	for i, ch := range chs {
		var k []string
		for _, v := range ch.Row[:min(cols, len(ch.Row))] {
			k = append(k, v.String())
		}
		out[i] = line{key: strings.Join(k, "\x00"), text: ch.String()}
	}
	if byKey {
		slices.SortStableFunc(out, func(x, y line) int { return strings.Compare(x.key, y.key) })
	}
	texts := make([]string, len(out))
	for i, l := range out {
		texts[i] = l.text
	}
	return texts
}

// streamState prints each stateful subtask's hot tier (keys=false: only
// its counters); stateless stages are left out.
func (r *Replayer) streamState(a *args) (string, error) {
	keys, err := a.boolean("keys", true)
	if err != nil {
		return "", err
	}
	q := r.q
	if q.crashed {
		return "", errors.New("no job is running")
	}
	names := q.h.Subtasks()
	var b strings.Builder
	for i, be := range q.h.Job().Backends() {
		dm, ok := be.(dumper)
		if !ok || i >= len(names) {
			continue
		}
		st := dm.Stats()
		fmt.Fprintf(&b, "%s: %d keys %dB/%s dirty=%d pinned=%d hits=%d misses=%d batches=%d evictions=%d ckpt=%d\n",
			names[i], st.HotKeys, st.HotBytes, budgetText(st.HotMaxBytes), st.Dirty, st.Pinned, st.Hits, st.Misses, st.Batches, st.Evictions, st.LastCheckpoint)
		if !keys {
			continue
		}
		for _, e := range dm.Dump() {
			line := dumpLine(e)
			fmt.Fprintf(&b, "  %s%s\n", e.Key, line[len(e.Key.Key):])
		}
	}
	if b.Len() == 0 {
		return "(no stateful operators)\n", nil
	}
	return b.String(), nil
}
