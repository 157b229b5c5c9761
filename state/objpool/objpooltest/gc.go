package objpooltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"clink/state"
	"clink/state/checksum"
	"clink/state/objpool"
)

// gcRetain is the retention the garbage-collection tests use.
const gcRetain = 3

func gcConfig(c *objpool.Config) { c.Retain, c.MaxRuns = gcRetain, 2 }

// history commits checkpoints from..to on w (each on the previous one) and
// records each checkpoint's model in snaps.
func history(t testing.TB, w state.RemotePool, rng *rand.Rand, model Model, snaps map[state.CheckpointID]Model, from, to state.CheckpointID) {
	t.Helper()
	for id := from; id <= to; id++ {
		d := Workload(rng, model, id, 30, 120)
		d.HotKeys = []state.Key{KeyN(int(id))}
		commit(t, w, d)
		snaps[id] = clone(model)
	}
}

// Reachable reads the store the way a restore would, without objpool's
// code: CURRENT, and every object the newest k manifests of its chain name
// (fewer if older ones are gone), and those checkpoints, newest first.
func Reachable(ctx context.Context, s objpool.ObjectStore, k int) (map[string]bool, []state.CheckpointID, error) {
	type manifest struct {
		Runs      [][]struct{ Key string } `json:"runs"`
		HotKeys   string                   `json:"hot_keys"`
		Ancestors []struct {
			ID       state.CheckpointID `json:"id"`
			Manifest string             `json:"manifest"`
		} `json:"ancestors"`
	}
	b, _, err := s.Get(ctx, "CURRENT")
	if err != nil {
		return nil, nil, err
	}
	var cur struct {
		Checkpoint state.CheckpointID `json:"checkpoint"`
		Manifest   string             `json:"manifest"`
	}
	if err := unmarshalSealed(b, &cur); err != nil {
		return nil, nil, err
	}
	live := map[string]bool{"CURRENT": true}
	var ids []state.CheckpointID
	key, id := cur.Manifest, cur.Checkpoint
	for len(ids) < k && key != "" {
		b, _, err := s.Get(ctx, key)
		if errors.Is(err, objpool.ErrNotFound) && len(ids) > 0 {
			break // collected by a writer that kept fewer
		}
		if err != nil {
			return nil, nil, fmt.Errorf("retained checkpoint %d: %w", id, err)
		}
		var m manifest
		if err := unmarshalSealed(b, &m); err != nil {
			return nil, nil, err
		}
		live[key], ids = true, append(ids, id)
		if m.HotKeys != "" {
			live[m.HotKeys] = true
		}
		for _, runs := range m.Runs {
			for _, r := range runs {
				live[r.Key] = true
			}
		}
		key = ""
		if len(m.Ancestors) > 0 {
			key, id = m.Ancestors[0].Manifest, m.Ancestors[0].ID
		}
	}
	return live, ids, nil
}

// checkRetained demands that the store hold exactly CURRENT and the
// objects of the newest gcRetain checkpoints (garbage == nil) or at least
// those (garbage allowed), and that each of those restores to its model in
// a fresh reader; without garbage, the one before them fails naming them.
func checkRetained(t testing.TB, s objpool.ObjectStore, snaps map[state.CheckpointID]Model, allowGarbage bool) {
	t.Helper()
	ctx := context.Background()
	live, ids, err := Reachable(ctx, patient{s}, gcRetain)
	if err != nil {
		t.Fatalf("retained checkpoints unreadable: %v", err)
	}
	if len(ids) != gcRetain {
		t.Fatalf("chain holds %v, want %d checkpoints", ids, gcRetain)
	}
	if !allowGarbage {
		all, err := patient{s}.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		for _, k := range all {
			if !live[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			t.Fatalf("store holds %d objects no retained checkpoint %v names: %v", len(extra), ids, extra)
		}
	}
	r := newPool(t, s, nil)
	for _, id := range ids {
		if err := r.Restore(ctx, id); err != nil {
			t.Fatalf("Restore(%d) of a retained checkpoint: %v", id, err)
		}
		Check(t, r, snaps[id], 120)
		if hk, err := r.HotKeys(ctx, id); err != nil || len(hk) != 1 || hk[0].String() != KeyN(int(id)).String() {
			t.Fatalf("HotKeys(%d) = %v, %v", id, hk, err)
		}
	}
	if oldest := ids[len(ids)-1]; oldest > 1 && !allowGarbage {
		err := r.Restore(ctx, oldest-1)
		want := "restorable checkpoints: "
		for i := len(ids) - 1; i >= 0; i-- {
			want += fmt.Sprint(ids[i])
			if i > 0 {
				want += ", "
			}
		}
		if !errors.Is(err, state.ErrNoCheckpoint) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Restore(%d) of a collected checkpoint = %v, want ErrNoCheckpoint naming %q", oldest-1, err, want)
		}
	}
}

// testGCRetain: after many commits (compactions, a torn commit) with
// retain=3 the store holds only what the newest 3 manifests name, and
// each of them restores to its model.
func testGCRetain(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	h := NewHookStore(s)
	w := newPool(t, h, gcConfig)
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	history(t, w, rng, model, snaps, 1, 6)
	checkRetained(t, s, snaps, false)
	h.On("put-absent", "manifests/", func() error { return errCrash })
	if err := w.Commit(ctx, Workload(rng, clone(model), 7, 30, 120)); !errors.Is(err, errCrash) {
		t.Fatalf("torn commit = %v, want the injected crash", err)
	}
	h.Clear()
	history(t, w, rng, model, snaps, 7, 14)
	checkRetained(t, s, snaps, false)
	if st := w.GCStats(); st.Deleted == 0 || st.Sweeps < 2 || st.LastErr != nil {
		t.Fatalf("GC stats %+v: want deletions and a sweep after the torn commit", st)
	}
	// A restarted writer with a larger retention keeps what is left: 15
	// and the three retained before it.
	w2 := newPool(t, s, func(c *objpool.Config) { c.Retain = 5 })
	history(t, w2, rng, model, snaps, 15, 15)
	if _, ids, err := Reachable(ctx, patient{s}, 5); err != nil || !slices.Equal(ids, []state.CheckpointID{15, 14, 13, 12}) {
		t.Fatalf("after raising retain: chain %v, %v; want 15, 14, 13, 12", ids, err)
	}
	if st := w2.GCStats(); st.LastErr != nil || st.Passes != 1 {
		t.Fatalf("GC stats after raising retain: %+v", st)
	}
}

// testGCNoList: a store that refuses to list (no s3:ListBucket) still
// gets dropped checkpoints collected, from the manifests that name them.
func testGCNoList(t *testing.T, s objpool.ObjectStore) {
	h := NewHookStore(s)
	h.On("list", "", func() error { return fmt.Errorf("list: %w", objpool.ErrAccessDenied) })
	w := newPool(t, h, gcConfig)
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	history(t, w, rand.New(rand.NewPCG(41, 42)), model, snaps, 1, 9)
	checkRetained(t, s, snaps, false)
	if st := w.GCStats(); st.Sweeps != 0 || st.Deleted == 0 || st.LastErr != nil {
		t.Fatalf("GC stats %+v: want deletions without sweeps", st)
	}
}

// testGCCrash kills garbage collection after each of its deletes (every
// later store call fails), in a listing sweep and in a collection of
// dropped manifests: all retained checkpoints stay restorable, and the
// next writer's collection removes what the killed one left.
func testGCCrash(t *testing.T, newStore NewStore) {
	for _, phase := range []string{"sweep", "dropped"} {
		t.Run(phase, func(t *testing.T) {
			maxPass := 0
			for kill := 0; ; kill++ {
				deleted, finished := gcCrashOnce(t, newStore(t), phase, kill)
				maxPass = max(maxPass, deleted)
				if finished {
					break
				}
			}
			t.Logf("%s pass: %d deletes", phase, maxPass)
			if maxPass < 3 {
				t.Fatalf("the %s pass deleted %d objects; the test needs garbage to collect", phase, maxPass)
			}
		})
	}
}

// gcCrashOnce builds a history, kills the collection after kill deletes
// and checks recovery; finished reports the collection ran to completion.
func gcCrashOnce(t *testing.T, s objpool.ObjectStore, phase string, kill int) (deleted int, finished bool) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, uint64(kill)))
	h := NewHookStore(s)
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	history(t, newPool(t, s, gcConfig), rng, model, snaps, 1, 5)
	torn := newPool(t, h, gcConfig) // a writer dying mid-commit leaves orphans
	h.On("put-absent", "manifests/", func() error { return errCrash })
	if err := torn.Commit(ctx, Workload(rng, clone(model), 6, 30, 120)); !errors.Is(err, errCrash) {
		t.Fatalf("torn commit = %v", err)
	}
	h.Clear()
	w := newPool(t, h, gcConfig) // the restarted writer: its first pass sweeps
	next := state.CheckpointID(6)
	if phase == "dropped" {
		history(t, w, rng, model, snaps, next, next)
		next++
	}
	var mu sync.Mutex
	dead := false
	h.On("", "", func() error {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return errCrash
		}
		return nil
	})
	h.On("delete", "", func() error {
		mu.Lock()
		defer mu.Unlock()
		if deleted == kill {
			dead = true
			return errCrash
		}
		deleted++
		return nil
	})
	history(t, w, rng, model, snaps, next, next) // the commit stands; its GC dies
	mu.Lock()
	finished = !dead
	mu.Unlock()
	if st := w.GCStats(); finished != (st.LastErr == nil) {
		t.Fatalf("kill after %d deletes: finished=%v but GC stats %+v", kill, finished, st)
	}
	checkRetained(t, s, snaps, true)
	w2 := newPool(t, s, gcConfig)
	history(t, w2, rng, model, snaps, next+1, next+1)
	checkRetained(t, s, snaps, false)
	return deleted, finished
}

// patient retries the test's own reads of a faulty store on transient
// errors (the pool retries its reads itself).
type patient struct{ objpool.ObjectStore }

func retryTransient(fn func() error) error {
	err := fn()
	for i := 0; i < 50 && errors.Is(err, objpool.ErrTransient); i++ {
		err = fn()
	}
	return err
}

// Get retries transient failures.
func (p patient) Get(ctx context.Context, key string) (b []byte, etag string, err error) {
	err = retryTransient(func() (e error) { b, etag, e = p.ObjectStore.Get(ctx, key); return e })
	return b, etag, err
}

// List retries transient failures.
func (p patient) List(ctx context.Context, prefix string) (keys []string, err error) {
	err = retryTransient(func() (e error) { keys, e = p.ObjectStore.List(ctx, prefix); return e })
	return keys, err
}

// unmarshalSealed decodes a JSON object, sealed with its checksum line
// (layout 3) or not.
func unmarshalSealed(b []byte, v any) error {
	body, _, err := checksum.Unseal(b)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}
