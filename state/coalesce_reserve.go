package state

import "clink/engine/async"

// reserver is the narrow surface CoalescingBackend drives its inner
// backend through: a hit test that, on a miss, claims the key for a later
// batched load, the batched load of claimed keys, and giving claims up.
// RemoteReadBackend implements it (the claim is the key's hot-tier
// placeholder); asyncReserver adapts any other AsyncBackend.
type reserver interface {
	// hitOrReserve returns the hot value of (op, key) with hit true, or,
	// on a miss, a claim on the key for loadReserved. err is set (and
	// nothing claimed) when the backend cannot serve reads any more.
	hitOrReserve(op OpID, key []byte) (lk Lookup, r reservation, hit bool, err error)
	// loadReserved loads claimed keys (keys[j] is rs[j]'s key, owned by
	// the load) in one batched read and calls done(j, ...) for each on the
	// runner goroutine once its result is in.
	loadReserved(op OpID, rs []reservation, keys []Key, done func(j int, lk Lookup, err error))
	// release gives up claims that will not be loaded.
	release(rs []reservation)
}

// asyncReserver is reserver over any AsyncBackend: a miss claims nothing
// (the zero reservation), and a batch is one GetManyAsync.
type asyncReserver struct {
	b   AsyncBackend
	hot HotReader // nil when b cannot peek
}

func (a asyncReserver) hitOrReserve(op OpID, key []byte) (Lookup, reservation, bool, error) {
	if a.hot != nil {
		if lk, ok := a.hot.GetHot(op, key); ok {
			return lk, reservation{}, true, nil
		}
	}
	return Lookup{}, reservation{}, false, nil
}

func (a asyncReserver) loadReserved(op OpID, _ []reservation, keys []Key, done func(int, Lookup, error)) {
	ks := make([][]byte, len(keys))
	for i, k := range keys {
		ks[i] = k.Key
	}
	scatter := func(res []Lookup, err error) {
		for j := range keys {
			if err != nil {
				done(j, Lookup{}, err)
			} else {
				done(j, res[j], nil)
			}
		}
	}
	res, task := a.b.GetManyAsync(op, ks)
	if task == nil {
		scatter(res, nil)
		return
	}
	async.Await(task, scatter)
}

func (asyncReserver) release([]reservation) {}
