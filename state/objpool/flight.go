package objpool

import (
	"context"
	"sync"
)

// flight collapses concurrent fetches of the same object part (a run index
// or block) into one request: many cold reads of keys in one block, issued
// by different records at once, cost one GET.
type flight struct {
	mu sync.Mutex
	m  map[cacheKey]*flightCall
}

type flightCall struct {
	done chan struct{}
	val  any
	err  error
}

// do runs fn once per key at a time; callers that arrive meanwhile wait for
// its result (or their own ctx).
func (f *flight) do(ctx context.Context, key cacheKey, fn func() (any, error)) (any, error) {
	f.mu.Lock()
	if f.m == nil {
		f.m = map[cacheKey]*flightCall{}
	}
	if c, ok := f.m[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.val, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &flightCall{done: make(chan struct{})}
	f.m[key] = c
	f.mu.Unlock()
	c.val, c.err = fn()
	f.mu.Lock()
	delete(f.m, key)
	f.mu.Unlock()
	close(c.done)
	return c.val, c.err
}
