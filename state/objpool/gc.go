package objpool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"clink/state"
)

// DefaultRetain is how many checkpoints a state URI keeps restorable when
// it does not say (retain=N), like Flink's state.checkpoints.num-retained.
const DefaultRetain = 3

// ParseRetain reads a retain=N value: a positive count of checkpoints to
// keep, or "all" (0: never delete anything).
func ParseRetain(s string) (int, error) {
	if s == "all" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("retain=%q: want a positive number of checkpoints to keep, or all", s)
	}
	return n, nil
}

// RetainOf reads a pool URI's retain parameter: DefaultRetain when
// absent, else ParseRetain's value.
func RetainOf(q url.Values) (int, error) {
	if !q.Has("retain") {
		return DefaultRetain, nil
	}
	return ParseRetain(q.Get("retain"))
}

// GCStats counts a pool's garbage collection.
type GCStats struct {
	Passes  int64 // collections run after a commit
	Sweeps  int64 // of which listed the store for unreferenced objects
	Deleted int64 // objects deleted
	Failed  int64 // collections that stopped on an error
	LastErr error // the last collection's error (nil if it succeeded)
}

type gcCounters struct {
	mu sync.Mutex
	s  GCStats
}

// GCStats returns the pool's garbage-collection counters.
func (p *Pool) GCStats() GCStats {
	p.gcStats.mu.Lock()
	defer p.gcStats.mu.Unlock()
	return p.gcStats.s
}

// gcState is what one pool instance knows about collection so far.
type gcState struct {
	// swept: a listing sweep succeeded since the pool opened and no commit
	// or collection failed after it (else torn objects may lie around).
	swept bool
	// noList: the store refused to list (no s3:ListBucket); collect only
	// what dropped manifests name.
	noList bool
	// floor: every dropped checkpoint <= floor is collected.
	floor state.CheckpointID
}

// collect deletes what no retained checkpoint references, after commit m
// made CURRENT durable. It runs on the committing goroutine under
// commitMu. A failure is recorded, not returned: the commit stands, and the
// next collection (a listing sweep) picks up where this one stopped.
//
// Safety: it deletes only objects not reachable from the newest Retain
// manifests of m's chain, and (when sweeping) only keys whose checkpoint id
// is <= m's: a writer that took over after m writes ids above m's, and one
// that started before m is fenced at CURRENT. Runs and hot keys go before
// the manifest naming them, so a collection cut short leaves each dropped
// manifest with whatever it still needs to be collected again.
func (p *Pool) collect(ctx context.Context, m *manifest) {
	if p.cfg.Retain <= 0 {
		return
	}
	n, sweep, err := p.gcPass(ctx, m)
	if err != nil {
		p.gc.swept = false
	}
	p.gcStats.mu.Lock()
	defer p.gcStats.mu.Unlock()
	s := &p.gcStats.s
	s.Passes++
	s.Deleted += int64(n)
	if sweep {
		s.Sweeps++
	}
	s.LastErr = err
	if err != nil {
		s.Failed++
	}
}

// gcPass finds and deletes the garbage after m; it returns how many
// objects it deleted and whether it swept by listing.
func (p *Pool) gcPass(ctx context.Context, m *manifest) (int, bool, error) {
	retained, err := p.retainedChain(ctx, m, p.cfg.Retain)
	if err != nil {
		return 0, false, fmt.Errorf("objpool %s: gc after %d: %w", p, m.Checkpoint, err)
	}
	live := liveKeys(retained)
	var dead []string
	sweep := !p.gc.swept && !p.gc.noList
	if sweep {
		dead, err = p.listDead(ctx, m.Checkpoint, live)
		if errors.Is(err, ErrAccessDenied) {
			p.gc.noList, sweep = true, false
		} else if err != nil {
			return 0, true, fmt.Errorf("objpool %s: gc after %d: %w", p, m.Checkpoint, err)
		}
	}
	if !sweep {
		if dead, err = p.droppedDead(ctx, retained[len(retained)-1], live); err != nil {
			return 0, false, fmt.Errorf("objpool %s: gc after %d: %w", p, m.Checkpoint, err)
		}
	}
	n, err := p.deleteAll(ctx, dead)
	if err != nil {
		return n, sweep, fmt.Errorf("objpool %s: gc after %d: %w", p, m.Checkpoint, err)
	}
	if sweep {
		p.gc.swept = true
	}
	if old := retained[len(retained)-1]; len(old.Ancestors) > 0 {
		p.gc.floor = old.Ancestors[0].ID
	}
	return n, sweep, nil
}

// retainedChain returns m and up to k-1 of its ancestors, newest first.
// The chain ends early at a manifest already collected (an earlier writer
// kept fewer); any other read error fails the collection: never delete
// when unsure.
func (p *Pool) retainedChain(ctx context.Context, m *manifest, k int) ([]*manifest, error) {
	out := []*manifest{m}
	for cur := m; len(out) < k && len(cur.Ancestors) > 0; {
		a := cur.Ancestors[0]
		next, err := p.loadManifest(ctx, a.Manifest, a.ID, a.CRC)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("retained checkpoint %d: %w", cur.Ancestors[0].ID, err)
		}
		out, cur = append(out, next), next
	}
	return out, nil
}

// liveKeys is every object a retained manifest names, and CURRENT.
func liveKeys(retained []*manifest) map[string]bool {
	live := map[string]bool{currentKey: true}
	for _, m := range retained {
		live[m.key] = true
		if m.HotKeys != "" {
			live[m.HotKeys] = true
		}
		for _, runs := range m.Runs {
			for _, r := range runs {
				live[r.Key] = true
			}
		}
	}
	return live
}

// listDead lists the store for objects of checkpoints <= upTo that no
// retained manifest names: dropped checkpoints, torn commits' leftovers
// and what an interrupted collection left.
func (p *Pool) listDead(ctx context.Context, upTo state.CheckpointID, live map[string]bool) ([]string, error) {
	var dead []string
	for _, prefix := range []string{"hotkeys/", "runs/", "manifests/"} {
		keys, err := p.store.List(ctx, prefix)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, k := range keys {
			if id, ok := keyCheckpoint(k); ok && id <= upTo && !live[k] {
				dead = append(dead, k)
			}
		}
	}
	return dead, nil
}

// droppedDead collects without listing: the manifests oldest (the oldest
// retained) lists as ancestors are the dropped checkpoints not collected
// yet (down to the floor); their runs and hot keys that no retained
// manifest names, then the manifests themselves.
func (p *Pool) droppedDead(ctx context.Context, oldest *manifest, live map[string]bool) ([]string, error) {
	var objs, manifests []string
	seen := map[string]bool{}
	for _, a := range oldest.Ancestors {
		if a.ID <= p.gc.floor {
			break
		}
		m, err := p.loadManifest(ctx, a.Manifest, a.ID, a.CRC)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dropped checkpoint %d: %w", a.ID, err)
		}
		for k := range liveKeys([]*manifest{m}) {
			if !live[k] && !seen[k] && k != m.key {
				seen[k] = true
				objs = append(objs, k)
			}
		}
		manifests = append(manifests, m.key)
	}
	return append(objs, manifests...), nil
}

// keyCheckpoint parses the checkpoint id out of a manifest, run or hot-keys
// key (<id %020d>-<token>...); ok is false for any other key.
func keyCheckpoint(key string) (state.CheckpointID, bool) {
	base := path.Base(key)
	if len(base) < 21 || base[20] != '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(base[:20], 10, 64)
	return state.CheckpointID(n), err == nil
}

// deleteAll deletes keys, manifests last, in parallel within the pool's
// request slots; it stops at the first error.
func (p *Pool) deleteAll(ctx context.Context, keys []string) (int, error) {
	isManifest := func(k string) bool { return strings.HasPrefix(k, "manifests/") }
	var objs, manifests []string
	for _, k := range keys {
		if isManifest(k) {
			manifests = append(manifests, k)
		} else {
			objs = append(objs, k)
		}
	}
	n, err := p.deleteParallel(ctx, objs)
	if err != nil {
		return n, err
	}
	m, err := p.deleteParallel(ctx, manifests)
	return n + m, err
}

func (p *Pool) deleteParallel(ctx context.Context, keys []string) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	n := 0
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		if err := p.acquire(ctx); err != nil {
			mu.Lock()
			if len(errs) == 0 {
				errs = append(errs, err)
			}
			mu.Unlock()
			break
		}
		mu.Lock()
		failed := len(errs) > 0
		mu.Unlock()
		if failed {
			p.release()
			break
		}
		wg.Go(func() {
			defer p.release()
			err := p.store.Delete(ctx, k)
			if err == nil {
				p.meta.remove(manifestCacheKey(k))
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("delete %s: %w", k, err))
				cancel()
				return
			}
			n++
		})
	}
	wg.Wait()
	return n, errors.Join(errs...)
}
