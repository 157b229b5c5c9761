package filepool

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"clink/state"
	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

func TestConformance(t *testing.T) {
	objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore {
		s, err := NewStore(filepath.Join(t.TempDir(), "pool"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Many writers race to advance CURRENT from the same ETag: exactly one
// wins, through the flock, and no temp files are left behind.
func TestPutIfMatchRace(t *testing.T) {
	ctx := context.Background()
	s, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	etag, err := s.PutIfAbsent(ctx, "CURRENT", []byte("v0"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 16; i++ {
		wg.Go(func() {
			_, err := s.PutIfMatch(ctx, "CURRENT", []byte{byte('a' + i)}, etag)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, objpool.ErrPrecondition):
				t.Errorf("PutIfMatch: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d writers won the compare-and-swap, want 1", wins)
	}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Fatalf("temp file %s left behind", e.Name())
		}
	}
}

// A process restart (a new Pool on the same directory) sees exactly what
// was committed.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	u, _ := url.Parse("disagg-file://" + dir)
	p, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	model := objpooltest.Model{}
	rng := rand.New(rand.NewPCG(1, 2))
	for id := state.CheckpointID(1); id <= 3; id++ {
		if err := p.Commit(ctx, objpooltest.Workload(rng, model, id, 200, 500)); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	q, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := q.Latest(ctx); err != nil || id != 3 {
		t.Fatalf("Latest = %d, %v", id, err)
	}
	if err := q.Restore(ctx, 3); err != nil {
		t.Fatal(err)
	}
	objpooltest.Check(t, q, model, 500)
}

func TestURIAndBadInput(t *testing.T) {
	for _, tc := range []struct{ uri, dir, err string }{
		{uri: "disagg-file:///var/x", dir: "/var/x"},
		{uri: "disagg-file://rel/dir", dir: "rel/dir"},
		{uri: "disagg-file://", err: "needs a directory"},
		{uri: "file:///x", err: "scheme"},
	} {
		u, _ := url.Parse(tc.uri)
		dir, err := DirOf(u)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("DirOf(%s) = %v, want error %q", tc.uri, err, tc.err)
			}
		} else if err != nil || dir != tc.dir {
			t.Errorf("DirOf(%s) = %q, %v; want %q", tc.uri, dir, err, tc.dir)
		}
	}
	s, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../escape", "/abs", "", "a/.lock"} {
		if _, err := s.PutIfAbsent(context.Background(), key, nil); err == nil {
			t.Errorf("PutIfAbsent(%q) accepted a bad key", key)
		}
	}
}

// retain=N in the URI bounds the directory: after many commits it holds
// CURRENT and the objects of the newest N checkpoints, each restorable,
// and a restore of an older one names the restorable ones.
func TestURIRetain(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	u, _ := url.Parse("disagg-file://" + dir + "?retain=2")
	p, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	model, snaps := objpooltest.Model{}, map[state.CheckpointID]objpooltest.Model{}
	rng := rand.New(rand.NewPCG(3, 4))
	for id := state.CheckpointID(1); id <= 12; id++ {
		if err := p.Commit(ctx, objpooltest.Workload(rng, model, id, 100, 400)); err != nil {
			t.Fatal(err)
		}
		snaps[id] = maps.Clone(model)
	}
	st, _ := NewStore(dir)
	live, ids, err := objpooltest.Reachable(ctx, st, 2)
	if err != nil || len(ids) != 2 {
		t.Fatalf("retained %v, %v", ids, err)
	}
	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !live[f] {
			t.Errorf("%s survives garbage collection", f)
		}
	}
	if len(files) != len(live) {
		t.Fatalf("%d files, want %d", len(files), len(live))
	}
	r, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, id := range ids {
		if err := r.Restore(ctx, id); err != nil {
			t.Fatal(err)
		}
		objpooltest.Check(t, r, snaps[id], 400)
	}
	if err := r.Restore(ctx, 3); !errors.Is(err, state.ErrNoCheckpoint) || !strings.Contains(err.Error(), "restorable checkpoints: 11, 12") {
		t.Fatalf("Restore(3) = %v, want an error naming 11 and 12", err)
	}
	bad, _ := url.Parse("disagg-file://" + dir + "?retain=0")
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "retain") {
		t.Fatalf("Open(retain=0) = %v, want a retain error", err)
	}
}
