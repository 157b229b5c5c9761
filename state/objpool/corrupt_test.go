package objpool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/state"
	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

// corruptFixture is a pool of a few checkpoints (runs of several blocks,
// small and large, hot keys) and the model of its latest checkpoint.
type corruptFixture struct {
	objs   map[string][]byte
	model  objpooltest.Model
	latest state.CheckpointID
	runs   []objpool.RunRef // the latest checkpoint's runs, partition by partition
	parts  [][]objpool.RunRef
	man    string // the latest manifest's key
}

const corruptKeys = 3000

func corruptConfig(st objpool.ObjectStore) objpool.Config {
	return objpool.Config{Store: st, BlockSize: 512, SmallRun: 2048, Partitions: 4, MaxRuns: 4, WriterID: "w"}
}

func newCorruptFixture(t *testing.T) corruptFixture {
	t.Helper()
	ctx := context.Background()
	st := objpool.NewMemStore()
	w, err := objpool.New(corruptConfig(st))
	if err != nil {
		t.Fatal(err)
	}
	f := corruptFixture{model: objpooltest.Model{}, objs: map[string][]byte{}}
	rng := rand.New(rand.NewPCG(7, 9))
	for id := state.CheckpointID(1); id <= 4; id++ {
		n := 2500
		if id > 2 {
			n = 150 // small runs in front of the big ones
		}
		d := objpooltest.Workload(rng, f.model, id, n, corruptKeys)
		d.HotKeys = []state.Key{objpooltest.KeyN(1), objpooltest.KeyN(2)}
		if err := w.Commit(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	f.latest = 4
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		f.objs[k], _, _ = st.Get(ctx, k)
	}
	f.man, f.parts = objpool.ServedRuns(w)
	for _, p := range f.parts {
		f.runs = append(f.runs, p...)
	}
	return f
}

// store copies the fixture's objects into a fresh store.
func (f corruptFixture) store(t *testing.T) *objpool.MemStore {
	st := objpool.NewMemStore()
	for k, v := range f.objs {
		if _, err := st.PutIfAbsent(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// readAll restores the latest checkpoint in a new pool and reads
// everything: every key, a scan of every run, the hot keys, and a commit
// on top (which reads CURRENT and the parent manifest and compacts). It
// returns the first error, or a non-nil wrong result as an error marked
// wrong.
func (f corruptFixture) readAll(st objpool.ObjectStore) (wrong bool, err error) {
	ctx := context.Background()
	p, err := objpool.New(corruptConfig(st))
	if err != nil {
		return false, err
	}
	defer p.Close()
	latest, err := p.Latest(ctx)
	if err != nil {
		return false, err
	}
	if latest != f.latest {
		return true, fmt.Errorf("latest checkpoint %d, want %d", latest, f.latest)
	}
	if err := p.Restore(ctx, latest); err != nil {
		return false, err
	}
	ks := make([]state.Key, corruptKeys)
	for i := range ks {
		ks[i] = objpooltest.KeyN(i)
	}
	got, err := p.GetMany(ctx, ks)
	if err != nil {
		return false, err
	}
	for i, k := range ks {
		want, ok := f.model[k.String()]
		if got[i].Found != ok || !bytes.Equal(got[i].Value, want) {
			return true, fmt.Errorf("key %s: got (%q, %v), want (%q, %v)", k, got[i].Value, got[i].Found, want, ok)
		}
	}
	n := 0
	if err := p.ScanKeyGroups(ctx, 0, 1<<30, func(e state.Entry) error {
		n++
		if want, ok := f.model[e.Key.String()]; !ok || !bytes.Equal(e.Value, want) {
			return fmt.Errorf("%w: scan: key %s = %q, want (%q, %v)", errWrong, e.Key, e.Value, want, ok)
		}
		return nil
	}); err != nil {
		return errors.Is(err, errWrong), err
	}
	if n != len(f.model) {
		return true, fmt.Errorf("scan found %d entries, want %d", n, len(f.model))
	}
	hot, err := p.HotKeys(ctx, latest)
	if err != nil {
		return false, err
	}
	if len(hot) != 2 || !bytes.Equal(hot[0].Key, objpooltest.KeyN(1).Key) || !bytes.Equal(hot[1].Key, objpooltest.KeyN(2).Key) {
		return true, fmt.Errorf("hot keys %v", hot)
	}
	d := &state.Delta{ID: latest + 1, Parent: latest}
	for i := range corruptKeys / 10 { // touch every partition: each compacts
		d.Entries = append(d.Entries, state.Entry{Key: objpooltest.KeyN(i * 10), Value: []byte("new")})
	}
	return false, p.Commit(ctx, d)
}

var errWrong = errors.New("wrong result")

// A corruption is a change to the fixture's objects and the key of the
// object it damaged (the error must name it).
type corruption struct {
	name   string
	object string
	apply  func(objs map[string][]byte)
}

// TestCorruptionDetected damages a pool's objects every way the issue
// lists (a flipped byte in a run's data blocks, its index, its footer, a
// manifest, CURRENT or the hot keys; a truncated or extended object; two
// run files swapped; a partition's runs dropped from a manifest) and
// checks that reading the latest checkpoint fails with an error that names
// the damaged object, every time, and never returns a wrong result.
func TestCorruptionDetected(t *testing.T) {
	f := newCorruptFixture(t)
	if _, err := f.readAll(f.store(t)); err != nil {
		t.Fatalf("the undamaged pool: %v", err)
	}
	var cases []corruption
	big, small := f.bigRun(t), f.smallRun(t)
	for _, run := range []objpool.RunRef{big, small} {
		size := fmt.Sprintf("%s run", map[bool]string{true: "large", false: "small"}[run.Key == big.Key])
		cases = append(cases, flips(size+" data", run.Key, 0, int(run.IndexOff), 97)...)
		cases = append(cases, flips(size+" index", run.Key, int(run.IndexOff), int(run.IndexOff+run.IndexLen), 61)...)
		cases = append(cases, flips(size+" footer", run.Key, int(run.IndexOff+run.IndexLen), int(run.Size), 1)...)
		cases = append(cases,
			corruption{size + " truncated by one byte", run.Key, func(o map[string][]byte) { o[run.Key] = o[run.Key][:run.Size-1] }},
			corruption{size + " truncated to half", run.Key, func(o map[string][]byte) { o[run.Key] = o[run.Key][:run.Size/2] }},
			corruption{size + " extended by one byte", run.Key, func(o map[string][]byte) { o[run.Key] = append(o[run.Key], 0) }},
			corruption{size + " extended by a block", run.Key, func(o map[string][]byte) { o[run.Key] = append(o[run.Key], o[run.Key][:512]...) }},
		)
	}
	man, cur := f.man, "CURRENT"
	hot := f.hotKeysKey(t)
	cases = append(cases, flips("manifest", man, 0, len(f.objs[man]), 13)...)
	cases = append(cases, flips("CURRENT", cur, 0, len(f.objs[cur]), 1)...)
	cases = append(cases, flips("hot keys", hot, 0, len(f.objs[hot]), 1)...)
	for _, o := range []struct{ what, key string }{{"manifest", man}, {"CURRENT", cur}, {"hot keys", hot}} {
		k := o.key
		cases = append(cases,
			corruption{o.what + " truncated by one byte", k, func(o map[string][]byte) { o[k] = o[k][:len(o[k])-1] }},
			corruption{o.what + " truncated to half", k, func(o map[string][]byte) { o[k] = o[k][:len(o[k])/2] }},
			corruption{o.what + " extended by one byte", k, func(o map[string][]byte) { o[k] = append(o[k], ' ') }},
		)
	}
	for _, o := range []struct{ what, key string }{{"manifest", man}, {"large run", big.Key}, {"small run", small.Key}, {"hot keys", hot}} {
		k := o.key
		cases = append(cases, corruption{o.what + " deleted", k, func(o map[string][]byte) { delete(o, k) }})
	}
	a, b := f.parts[0][0], f.parts[1][0]
	cases = append(cases, corruption{"two run files swapped", a.Key, func(o map[string][]byte) { o[a.Key], o[b.Key] = o[b.Key], o[a.Key] }})
	c, d := f.parts[2][0], f.parts[2][len(f.parts[2])-1]
	cases = append(cases, corruption{"a partition's runs swapped", c.Key, func(o map[string][]byte) { o[c.Key], o[d.Key] = o[d.Key], o[c.Key] }})
	for p := range f.parts {
		cases = append(cases, corruption{fmt.Sprintf("partition %d's runs dropped from the manifest", p), man, func(o map[string][]byte) {
			o[man] = editManifest(t, o[man], func(m map[string]any) { m["runs"].([]any)[p] = []any{} })
		}})
	}
	cases = append(cases, corruption{"a run dropped from the manifest", man, func(o map[string][]byte) {
		o[man] = editManifest(t, o[man], func(m map[string]any) {
			runs := m["runs"].([]any)[2].([]any)
			m["runs"].([]any)[2] = runs[1:]
		})
	}})

	detected, wrongs := 0, 0
	byClass := map[string][2]int{}
	for _, tc := range cases {
		objs := clone(f.objs)
		tc.apply(objs)
		st := objpool.NewMemStore()
		for k, v := range objs {
			if _, err := st.PutIfAbsent(context.Background(), k, v); err != nil {
				t.Fatal(err)
			}
		}
		wrong, err := f.readAll(st)
		class := strings.TrimRight(strings.SplitN(tc.name, " byte ", 2)[0], " 0123456789")
		c := byClass[class]
		c[1]++
		switch {
		case wrong:
			wrongs++
			t.Errorf("%s: WRONG RESULT: %v", tc.name, err)
		case err == nil:
			t.Errorf("%s: not detected", tc.name)
		case !errors.Is(err, state.ErrCorrupt):
			t.Errorf("%s: error does not say the data is damaged (state.ErrCorrupt): %v", tc.name, err)
		case !strings.Contains(err.Error(), tc.object):
			t.Errorf("%s: error does not name %s: %v", tc.name, tc.object, err)
		case !strings.Contains(err.Error(), "--restore") && !strings.Contains(err.Error(), "intact checkpoint"):
			t.Errorf("%s: error does not say which checkpoint is still restorable: %v", tc.name, err)
		default:
			detected++
			c[0]++
			if c[0] == 1 && testing.Verbose() {
				t.Logf("%s: %v", tc.name, err)
			}
		}
		byClass[class] = c
	}
	for _, class := range slices.Sorted(func(yield func(string) bool) {
		for k := range byClass {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Logf("%-45s detected %d of %d", class, byClass[class][0], byClass[class][1])
	}
	t.Logf("corruptions tried %d, detected %d (%.1f%%), wrong results %d", len(cases), detected, 100*float64(detected)/float64(len(cases)), wrongs)
}

// flips flips one byte at each of the positions from, from+step, ... < to
// of object key.
func flips(region, key string, from, to, step int) []corruption {
	var out []corruption
	for i := from; i < to; i += step {
		out = append(out, corruption{fmt.Sprintf("%s byte %d", region, i), key, func(o map[string][]byte) {
			b := bytes.Clone(o[key])
			b[i] ^= 1 << (i % 8)
			o[key] = b
		}})
	}
	return out
}

// editManifest rewrites a manifest's JSON (keeping whatever follows the
// JSON, such as a checksum, as it was).
func editManifest(t *testing.T, b []byte, edit func(map[string]any)) []byte {
	t.Helper()
	end := bytes.LastIndexByte(b, '}') + 1
	var m map[string]any
	if err := json.Unmarshal(b[:end], &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return append(body, b[end:]...)
}

func clone(m map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// bigRun is a run of the latest checkpoint read by ranged reads (larger
// than SmallRun, several blocks); smallRun one read whole.
func (f corruptFixture) bigRun(t *testing.T) objpool.RunRef {
	for _, r := range f.runs {
		if r.Size > 2048*2 {
			return r
		}
	}
	t.Fatal("no large run")
	return objpool.RunRef{}
}

func (f corruptFixture) smallRun(t *testing.T) objpool.RunRef {
	for _, r := range f.runs {
		if r.Size <= 2048 && r.IndexOff > 600 {
			return r
		}
	}
	t.Fatal("no small run of two blocks")
	return objpool.RunRef{}
}

func (f corruptFixture) hotKeysKey(t *testing.T) string {
	for k := range f.objs {
		if strings.HasPrefix(k, "hotkeys/") && strings.Contains(k, fmt.Sprintf("%020d", f.latest)) {
			return k
		}
	}
	t.Fatal("no hot keys object")
	return ""
}
