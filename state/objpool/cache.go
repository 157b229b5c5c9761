package objpool

import (
	"container/list"
	"sync"
)

// lru is a byte-bounded cache of manifests, run indexes and blocks. They
// are immutable, so entries never go stale; they only age out.
type lru struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List
	m     map[cacheKey]*list.Element
}

// cacheKey names a cached object: its kind, its object key and, for a
// block, its index in the run. Built from strings the manifest already
// holds, so a lookup allocates nothing.
type cacheKey struct {
	kind  byte // 'm' manifest, 'i' run index, 'b' run block
	obj   string
	block int
}

func manifestCacheKey(key string) cacheKey { return cacheKey{kind: 'm', obj: key} }
func indexCacheKey(run string) cacheKey    { return cacheKey{kind: 'i', obj: run} }
func blockCacheKey(run string, i int) cacheKey {
	return cacheKey{kind: 'b', obj: run, block: i}
}

type lruEntry struct {
	key  cacheKey
	val  any
	size int64
}

func newLRU(max int64) *lru {
	return &lru{max: max, ll: list.New(), m: map[cacheKey]*list.Element{}}
}

// setMax changes the byte bound, evicting down to it.
func (c *lru) setMax(max int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = max
	c.shrinkLocked()
}

func (c *lru) get(key cacheKey) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry).val, true
	}
	return nil, false
}

func (c *lru) put(key cacheKey, val any, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		return
	}
	c.m[key] = c.ll.PushFront(&lruEntry{key: key, val: val, size: size})
	c.bytes += size
	c.shrinkLocked()
}

// remove drops key (an object garbage collection deleted).
func (c *lru) remove(key cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.Remove(e)
		delete(c.m, key)
		c.bytes -= e.Value.(*lruEntry).size
	}
}

// shrinkLocked evicts least recently used entries down to max (keeping
// the newest one).
func (c *lru) shrinkLocked() {
	for c.bytes > c.max && c.ll.Len() > 1 {
		e := c.ll.Back()
		ent := e.Value.(*lruEntry)
		c.ll.Remove(e)
		delete(c.m, ent.key)
		c.bytes -= ent.size
	}
}

// blockShare is the part of a cache budget of n bytes that holds run
// blocks; the rest holds indexes and manifests.
func blockShare(n int64) int64 { return n - n/4 }

// SetCacheBytes changes the bound of the pool's caches (Config.CacheBytes),
// evicting down to it; n <= 0 is ignored. The state URI factory sizes it
// relative to the hot-tier budget (docs/durability.md).
func (p *Pool) SetCacheBytes(n int64) {
	if n > 0 {
		p.cache.setMax(blockShare(n))
		p.meta.setMax(n - blockShare(n))
	}
}
