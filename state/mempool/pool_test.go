package mempool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"clink/engine/async"
	"clink/state"
)

var ctx = context.Background()

func key(s string) state.Key { return state.Key{Op: 1, Key: []byte(s)} }

func delta(id, parent state.CheckpointID, kv ...string) *state.Delta {
	d := &state.Delta{ID: id, Parent: parent}
	for i := 0; i+1 < len(kv); i += 2 {
		e := state.Entry{Key: key(kv[i]), Value: []byte(kv[i+1])}
		if kv[i+1] == "-" {
			e.Value, e.Deleted = nil, true
		}
		d.Entries = append(d.Entries, e)
	}
	return d
}

func read(t *testing.T, p state.RemotePool, k string) string {
	t.Helper()
	res, err := p.GetMany(ctx, []state.Key{key(k)})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Found {
		return "<absent>"
	}
	return string(res[0].Value)
}

func TestCommitFencingAndRestore(t *testing.T) {
	p := New()
	steps := []struct {
		d       *state.Delta
		wantErr error
	}{
		{delta(1, 0, "a", "1", "b", "1"), nil},
		{delta(2, 0, "a", "x"), state.ErrFenced}, // stale parent
		{delta(2, 1, "a", "2", "b", "-"), nil},
		{delta(2, 1, "a", "y"), state.ErrFenced}, // parent no longer head
	}
	for i, s := range steps {
		if err := p.Commit(ctx, s.d); !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
			t.Fatalf("step %d: commit = %v, want %v", i, err, s.wantErr)
		}
	}
	if a, b := read(t, p, "a"), read(t, p, "b"); a != "2" || b != "<absent>" {
		t.Fatalf("head 2 serves a=%s b=%s", a, b)
	}
	if err := p.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if a, b := read(t, p, "a"), read(t, p, "b"); a != "1" || b != "1" {
		t.Fatalf("restored 1 serves a=%s b=%s", a, b)
	}
	// After a restore the job continues from 1; the abandoned 2 may be reused.
	if err := p.Commit(ctx, delta(2, 1, "c", "3")); err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(ctx, 9); !errors.Is(err, state.ErrNoCheckpoint) {
		t.Fatalf("restore of a missing checkpoint = %v", err)
	}
	if err := p.Restore(ctx, 0); err != nil || read(t, p, "a") != "<absent>" {
		t.Fatalf("restore 0 must serve an empty state: %v", err)
	}
}

func TestFaults(t *testing.T) {
	p := New()
	p.Throttle(1)
	p.FailReads(1, nil)
	if _, err := p.GetMany(ctx, []state.Key{key("a")}); !errors.Is(err, ErrThrottled) {
		t.Fatalf("first read = %v, want throttle", err)
	}
	if _, err := p.GetMany(ctx, []state.Key{key("a")}); !errors.Is(err, ErrInjected) {
		t.Fatalf("second read = %v, want injected", err)
	}
	if _, err := p.GetMany(ctx, []state.Key{key("a")}); err != nil {
		t.Fatalf("third read = %v", err)
	}
	p.FailCommits(1, nil)
	if err := p.Commit(ctx, delta(1, 0, "a", "1")); !errors.Is(err, ErrInjected) {
		t.Fatalf("commit = %v", err)
	}
	if head, _ := p.Latest(ctx); head != 0 || read(t, p, "a") != "<absent>" {
		t.Fatal("a failed commit became visible")
	}
	if st := p.Stats(); st.FailedReads != 2 || st.FailedCommits != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestScanKeyGroups(t *testing.T) {
	p := New()
	d := &state.Delta{ID: 1, Entries: []state.Entry{
		{Key: key("a"), KeyGroup: 3, Value: []byte("1")},
		{Key: key("b"), KeyGroup: 7, Value: []byte("2")},
		{Key: key("c"), KeyGroup: 5, Deleted: true},
	}}
	if err := p.Commit(ctx, d); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := p.ScanKeyGroups(ctx, 0, 6, func(e state.Entry) error { got = append(got, string(e.Key.Key)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("scan [0,6) = %v, want [a]", got)
	}
}

func TestLatencyAsyncHoldsNoThread(t *testing.T) {
	sim := async.NewSim(1, nil)
	inner := New()
	if err := inner.Commit(ctx, delta(1, 0, "a", "1")); err != nil {
		t.Fatal(err)
	}
	p := WithLatency(inner, async.Fixed(time.Millisecond), sim, 1)
	const n = 6000
	done := 0
	for range n {
		p.GetManyAsync(ctx, []state.Key{key("a")}, func(res []state.Lookup, err error) {
			if err != nil || string(res[0].Value) != "1" {
				t.Errorf("read = %v %v", res, err)
			}
			done++
		})
	}
	if done != 0 || p.InFlight() != n {
		t.Fatalf("%d reads finished before their round-trip", done)
	}
	sim.AdvanceTo(async.SimEpoch.Add(time.Millisecond))
	if done != n || p.InFlight() != 0 {
		t.Fatalf("%d of %d reads finished after 1ms", done, n)
	}
}

func TestLatencyCancelAndClose(t *testing.T) {
	sim := async.NewSim(1, nil)
	p := WithLatency(New(), async.Fixed(time.Second), sim, 1)
	cctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, 2)
	p.GetManyAsync(cctx, []state.Key{key("a")}, func(_ []state.Lookup, err error) { errs <- err })
	p.GetManyAsync(ctx, []state.Key{key("b")}, func(_ []state.Lookup, err error) { errs <- err })
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read = %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("read pending at close = %v", err)
	}
	sim.AdvanceTo(async.SimEpoch.Add(2 * time.Second)) // the timers were stopped
}

// A retaining pool keeps only the newest checkpoints' deltas: each of those
// restores to its model state (also after a restore and a new branch), an
// older one is refused with ErrNoCheckpoint, and no delta outside the
// window stays in memory.
func TestRetainingPool(t *testing.T) {
	ctx := context.Background()
	const retain = 4
	p := NewRetaining(retain)
	models := map[state.CheckpointID]map[string]string{0: {}}
	commit := func(id, parent state.CheckpointID) {
		t.Helper()
		m := maps.Clone(models[parent])
		d := &state.Delta{ID: id, Parent: parent, HotKeys: []state.Key{{Op: 1, Key: fmt.Appendf(nil, "hot%d", id)}}}
		for i := range 5 {
			k := fmt.Sprintf("k%d", (int(id)*3+i)%11)
			if i == 4 {
				d.Entries = append(d.Entries, state.Entry{Key: state.Key{Op: 1, Key: []byte(k)}, Deleted: true})
				delete(m, k)
				continue
			}
			v := fmt.Sprintf("v%d-%d", id, i)
			d.Entries = append(d.Entries, state.Entry{Key: state.Key{Op: 1, Key: []byte(k)}, Value: []byte(v)})
			m[k] = v
		}
		if err := p.Commit(ctx, d); err != nil {
			t.Fatal(err)
		}
		models[id] = m
	}
	check := func(id state.CheckpointID) {
		t.Helper()
		if err := p.Restore(ctx, id); err != nil {
			t.Fatalf("restore %d: %v", id, err)
		}
		for i := range 11 {
			k := fmt.Sprintf("k%d", i)
			got, err := p.GetMany(ctx, []state.Key{{Op: 1, Key: []byte(k)}})
			if err != nil {
				t.Fatal(err)
			}
			want, ok := models[id][k]
			if got[0].Found != ok || string(got[0].Value) != want {
				t.Fatalf("checkpoint %d key %s: %+v, want %q %v", id, k, got[0], want, ok)
			}
		}
		if hk, err := p.HotKeys(ctx, id); err != nil || len(hk) != 1 || string(hk[0].Key) != fmt.Sprintf("hot%d", id) {
			t.Fatalf("hot keys of %d: %v %v", id, hk, err)
		}
	}
	for id := state.CheckpointID(1); id <= 20; id++ {
		commit(id, id-1)
	}
	if n := len(p.ckpts); n != retain {
		t.Fatalf("%d deltas kept, want %d", n, retain)
	}
	for id := state.CheckpointID(16); id <= 20; id++ {
		check(id) // 16 is the base, 17..20 the kept deltas
	}
	if err := p.Restore(ctx, 15); !errors.Is(err, state.ErrNoCheckpoint) {
		t.Fatalf("restore of a folded checkpoint: %v", err)
	}
	check(18)
	for id := state.CheckpointID(21); id <= 26; id++ { // a new branch from 18
		parent := id - 1
		if id == 21 {
			parent = 18
		}
		commit(id, parent)
	}
	if n := len(p.ckpts); n > retain {
		t.Fatalf("%d deltas kept after a branch, want at most %d", n, retain)
	}
	for id := state.CheckpointID(22); id <= 26; id++ {
		check(id)
	}
	if err := p.Restore(ctx, 19); !errors.Is(err, state.ErrNoCheckpoint) {
		t.Fatalf("restore of the abandoned branch: %v", err)
	}
	if err := p.Restore(ctx, 0); err != nil {
		t.Fatal(err)
	}
	commit(1, 0)
	check(1)
}
