package objpool

import (
	"container/list"
	"sync"
)

// lru is a byte-bounded cache of parsed run indexes and blocks. Runs are
// immutable, so entries never go stale; they only age out.
type lru struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List
	m     map[string]*list.Element
}

type lruEntry struct {
	key  string
	val  any
	size int64
}

func newLRU(max int64) *lru {
	return &lru{max: max, ll: list.New(), m: map[string]*list.Element{}}
}

// setMax changes the byte bound, evicting down to it.
func (c *lru) setMax(max int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = max
	c.shrinkLocked()
}

func (c *lru) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry).val, true
	}
	return nil, false
}

func (c *lru) put(key string, val any, size int64) {
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
func (c *lru) remove(key string) {
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

// SetCacheBytes changes the bound of the parsed-block cache (Config.
// CacheBytes), evicting down to it; n <= 0 is ignored. The state URI
// factory sizes it relative to the hot-tier budget (docs/durability.md).
func (p *Pool) SetCacheBytes(n int64) {
	if n > 0 {
		p.cache.setMax(n)
	}
}
