package state

import (
	"context"
	"fmt"

	"clink/engine/event"
)

// warmer is one background warm-up of a restored checkpoint's hot keys.
// It never runs on a goroutine of its own: its steps are executor jobs and
// pool callbacks, each registered in the backend's WaitGroup while it runs,
// so Close can wait for them after cancelling.
type warmer struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     CheckpointID
	gen    uint64
	keys   []Key
	next   int
	filled int64
}

func (b *RemoteReadBackend) newWarmerLocked(id CheckpointID) *warmer {
	ctx, cancel := context.WithCancel(b.ctx)
	w := &warmer{ctx: ctx, cancel: cancel, id: id, gen: b.gen}
	b.warm = w
	return w
}

// enter registers a warm step about to run; false when the warm-up was
// cancelled, overtaken by another Restore, or the backend closed.
func (b *RemoteReadBackend) enter(w *warmer) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || w.ctx.Err() != nil || b.gen != w.gen {
		return false
	}
	b.wg.Add(1)
	return true
}

// startWarm reads the checkpoint's hot keys on the executor and begins
// loading them batch by batch. Restore returns before any of it runs, so
// the first record is not delayed; one batch at most is queued at a time,
// so cold reads interleave with the warm-up.
func (b *RemoteReadBackend) startWarm(w *warmer) {
	err := b.exec.SubmitBlocking(func() {
		if !b.enter(w) {
			return
		}
		defer b.wg.Done()
		keys, err := b.pool.HotKeys(w.ctx, w.id)
		if err != nil {
			b.warn(fmt.Sprintf("warm restore of checkpoint %d: %v", w.id, err))
			return
		}
		own := make([]Key, 0, len(keys))
		for _, k := range keys {
			if b.opts.owns(b.opts.keyGroup(k.Key)) {
				own = append(own, k)
			}
		}
		w.keys = own
		b.warmNext(w)
	})
	if err != nil {
		b.warn(fmt.Sprintf("warm restore of checkpoint %d: %v", w.id, err))
	}
}

// warmNext issues the next batch of keys that are not hot yet, stopping
// once the hot tier is at its budget.
func (b *RemoteReadBackend) warmNext(w *warmer) {
	var batch []Key
	b.mu.Lock()
	for w.next < len(w.keys) && len(batch) < b.opts.WarmBatch && b.gen == w.gen {
		if b.hot.max > 0 && b.hot.bytes >= b.hot.max {
			w.next = len(w.keys)
			break
		}
		k := w.keys[w.next]
		w.next++
		b.scratch = composeKey(b.scratch[:0], k.Op, k.Key)
		if b.hot.get(b.scratch) == nil {
			batch = append(batch, k)
		}
	}
	b.mu.Unlock()
	if len(batch) == 0 {
		b.emitWarm(w, "done")
		return
	}
	b.fetchAsync(w.ctx, batch, nil, func(res []Lookup, err error) {
		if !b.enter(w) {
			return
		}
		defer b.wg.Done()
		if err != nil {
			b.warn(fmt.Sprintf("warm restore of checkpoint %d: %v", w.id, err))
			return
		}
		b.warmFill(w, batch, res)
		b.emitWarm(w, "")
		b.warmNext(w)
	})
}

// warmFill inserts loaded keys that are still absent, behind every key the
// runner has touched (they are the previous run's working set, not this
// run's).
func (b *RemoteReadBackend) warmFill(w *warmer, batch []Key, res []Lookup) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen != w.gen {
		return
	}
	for i, k := range batch {
		b.scratch = composeKey(b.scratch[:0], k.Op, k.Key)
		if b.hot.get(b.scratch) != nil {
			continue
		}
		e := b.hot.placeholder(b.scratch)
		b.hot.setCold(e, res[i].Value, !res[i].Found)
		w.filled++
		b.st.warmed++
	}
	b.evictLocked()
}

func (b *RemoteReadBackend) emitWarm(w *warmer, text string) {
	if b.opts.Bus.Enabled() {
		b.emitter().emit(event.WarmupProgress, "", w.filled, int64(len(w.keys)), text)
	}
}

func (b *RemoteReadBackend) warn(text string) {
	if b.opts.Bus.Enabled() {
		b.emitter().emit(event.Warning, "", 0, 0, text)
	}
}
