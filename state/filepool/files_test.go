package filepool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"clink/state/objpool"
)

// Ranged reads of a run reuse one open file; deleting the run closes it
// and later reads see the object gone; the cache stays bounded; Close
// closes everything, and the store still reads afterwards.
func TestOpenRunFiles(t *testing.T) {
	ctx := context.Background()
	s, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(key, data string) {
		t.Helper()
		if _, err := s.PutIfAbsent(ctx, key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(key string, off, n int64) (string, error) {
		b, _, err := s.GetRange(ctx, key, off, n)
		return string(b), err
	}
	put("runs/000/a.run", "0123456789")
	put("manifests/m.json", "{}")
	for i := 0; i < 3; i++ {
		if got, err := read("runs/000/a.run", 2, 3); err != nil || got != "234" {
			t.Fatalf("read %d: %q %v", i, got, err)
		}
	}
	if _, err := read("manifests/m.json", 0, 2); err != nil {
		t.Fatal(err)
	}
	if n := s.files.open(); n != 1 {
		t.Fatalf("%d files open after reading one run (and a manifest), want 1", n)
	}
	if err := s.Delete(ctx, "runs/000/a.run"); err != nil {
		t.Fatal(err)
	}
	if n := s.files.open(); n != 0 {
		t.Fatalf("%d files open after deleting the run", n)
	}
	if _, err := read("runs/000/a.run", 0, 1); !errors.Is(err, objpool.ErrNotFound) {
		t.Fatalf("read of a deleted run: %v, want not found", err)
	}
	for i := range maxOpenFiles + 10 {
		k := fmt.Sprintf("runs/001/%d.run", i)
		put(k, "xy")
		if got, err := read(k, 1, 1); err != nil || got != "y" {
			t.Fatalf("%s: %q %v", k, got, err)
		}
	}
	if n := s.files.open(); n != maxOpenFiles {
		t.Fatalf("%d files open, want the bound %d", n, maxOpenFiles)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := fmt.Sprintf("runs/001/%d.run", (i*7+g)%(maxOpenFiles+10))
				if got, err := read(k, 0, 2); err != nil || got != "xy" {
					t.Errorf("%s: %q %v", k, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	s.Close()
	if n := s.files.open(); n != 0 {
		t.Fatalf("%d files open after Close", n)
	}
	if got, err := read("runs/001/3.run", 0, 2); err != nil || got != "xy" {
		t.Fatalf("read after Close: %q %v", got, err)
	}
	if n := s.files.open(); n != 0 {
		t.Fatalf("a read after Close left %d files cached", n)
	}
}
