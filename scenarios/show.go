package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"clink/state"
)

// fault injects failures and delays into the pool the job reads and
// commits through. One action per directive.
func (r *Replayer) fault(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamFault(a)
	}
	w := r.w
	if w.incarnation == 0 {
		return "", errors.New("no operator: run `operator counter` first")
	}
	if l, ok, err := a.latency("latency"); err != nil {
		return "", err
	} else if ok {
		w.cfg.Latency, w.opCfg.Latency = l, l
		if w.pool != nil {
			w.pool.SetLatency(l)
			w.sim.SetLatency(l)
		}
		return fmt.Sprintf("pool latency is now %s", l), nil
	}
	acts := a.bare()
	if len(acts) != 1 {
		return "", argErr("", "want one action: fail-reads, fail-read, delay, fail-commits, throttle, clear or latency=DIST")
	}
	n, err := a.integer("n", 1, 1)
	if err != nil {
		return "", err
	}
	switch acts[0] {
	case "fail-reads":
		w.durable.FailReads(int(n), nil)
		return fmt.Sprintf("the next %d pool reads fail", n), nil
	case "fail-commits":
		w.durable.FailCommits(int(n), nil)
		return fmt.Sprintf("the next %d checkpoint commits fail", n), nil
	case "throttle":
		w.durable.Throttle(int(n))
		return fmt.Sprintf("the next %d pool reads are throttled (503 SlowDown)", n), nil
	case "clear":
		w.durable.FailReads(0, nil)
		w.durable.FailCommits(0, nil)
		w.durable.Throttle(0)
		*w.rules = *newKeyRules()
		return "faults cleared", nil
	case "fail-read", "delay":
		return r.keyFault(acts[0], a, int(n))
	}
	return "", argErr(acts[0], "unknown fault action")
}

func (r *Replayer) keyFault(act string, a *args, n int) (string, error) {
	key, ok, err := a.str("key", "")
	if err != nil {
		return "", err
	}
	if !ok || key == "" {
		return "", argErr("key", "%s needs key=K", act)
	}
	rules := r.w.rules
	if act == "fail-read" {
		rules.fail[key] += n
		return fmt.Sprintf("the next %d reads of key %s fail", n, key), nil
	}
	by, ok, err := a.duration("by")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", argErr("by", "delay needs by=DURATION")
	}
	rules.delay[key] = by
	rules.left[key] = n
	if a.has("always") {
		rules.left[key] = -1
		return fmt.Sprintf("every read of key %s takes %s longer", key, by), nil
	}
	return fmt.Sprintf("the next %d reads of key %s take %s longer", n, key, by), nil
}

// results prints the sink: the materialised table (default) or the
// changelog (arrival order, or by-key), raw including rolled-back outputs.
func (r *Replayer) results(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamResults(a)
	}
	mode := "table"
	byKey, raw := false, false
	for _, x := range a.bare() {
		switch x {
		case "table", "changelog":
			mode = x
		case "by-key":
			byKey = true
		case "raw":
			raw = true
		default:
			return "", argErr(x, "want table, changelog, by-key or raw")
		}
	}
	if mode == "table" {
		return r.w.sink.table(), nil
	}
	return r.w.sink.changelog(byKey, raw), nil
}

var traceClasses = []string{"gate", "read", "epoch", "timer", "evict", "checkpoint", "error"}

// traceCmd prints the runtime events since the last trace, filtered by
// class (bare arguments) and operator (op=NAME or op=NAME/SUBTASK).
func (r *Replayer) traceCmd(d *Directive, a *args) (string, error) {
	classes := map[string]bool{}
	for _, c := range a.bare() {
		ok := false
		for _, k := range traceClasses {
			ok = ok || k == c
		}
		if !ok {
			return "", argErr(c, "unknown event class (known: %s)", strings.Join(traceClasses, ", "))
		}
		classes[c] = true
	}
	op, _, err := a.str("op", "")
	if err != nil {
		return "", err
	}
	evs := r.w.trace.take(classes, op)
	if len(evs) == 0 {
		return "(no events)\n", nil
	}
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// dumper is what `state` reads from a backend.
type dumper interface {
	Dump() []state.DumpEntry
	Stats() state.Stats
}

// state prints each subtask's hot tier: its keys with dirty/pinned flags
// and bytes (unless keys=false), and its counters.
func (r *Replayer) state(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamState(a)
	}
	w := r.w
	if w.job == nil {
		return "", errors.New("no job is running")
	}
	keys, err := a.boolean("keys", true)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, be := range w.job.Backends() {
		dm, ok := be.(dumper)
		if !ok {
			fmt.Fprintf(&b, "count/%d: %T cannot be dumped\n", i, be)
			continue
		}
		st := dm.Stats()
		fmt.Fprintf(&b, "count/%d: %d keys %dB/%s dirty=%d pinned=%d hits=%d misses=%d batches=%d evictions=%d ckpt=%d\n",
			i, st.HotKeys, st.HotBytes, budgetText(st.HotMaxBytes), st.Dirty, st.Pinned, st.Hits, st.Misses, st.Batches, st.Evictions, st.LastCheckpoint)
		if !keys {
			continue
		}
		for _, e := range dm.Dump() {
			fmt.Fprintf(&b, "  %s\n", dumpLine(e))
		}
	}
	if s3, ok := w.durable.(s3Durable); ok {
		total, injected := s3.fake.Requests()
		fmt.Fprintf(&b, "s3 (in process): %d requests, %d answered with an injected error\n", total, injected)
	}
	return b.String(), nil
}

// dumpLine renders a hot key, its value decoded as the counter's total.
func dumpLine(e state.DumpEntry) string {
	s := fmt.Sprintf("%s %dB", e.Key.Key, e.Bytes)
	if e.Deleted {
		s += " absent"
	}
	if e.Dirty {
		s += " dirty"
	}
	if e.Pinned {
		s += " pinned"
	}
	return s
}
