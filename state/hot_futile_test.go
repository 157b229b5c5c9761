package state

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestFutileEvictionSkipIsExact drives two hot tiers through the same
// random writes, loads, captures, commits and touches; one forgets its
// futile-scan memo before every eviction. Both must evict the same entries
// in the same order, so the memo only saves work.
func TestFutileEvictionSkipIsExact(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		memo, ref := newTierModel(4000), newTierModel(4000)
		for step := 0; step < 4000; step++ {
			op, k := rng.Intn(10), fmt.Sprintf("k%03d", rng.Intn(400))
			memo.apply(op, k)
			ref.h.futile = false
			ref.apply(op, k)
			if !slices.Equal(memo.evicted, ref.evicted) {
				t.Fatalf("seed %d step %d: evictions differ:\nmemo %v\nref  %v", seed, step, memo.evicted, ref.evicted)
			}
		}
		if memo.h.bytes != ref.h.bytes || memo.h.n != ref.h.n {
			t.Fatalf("seed %d: tiers differ: %d/%d bytes, %d/%d keys", seed, memo.h.bytes, ref.h.bytes, memo.h.n, ref.h.n)
		}
	}
}

// tierModel is a hot tier with a backend's operations reduced to the ones
// that change evictability.
type tierModel struct {
	h       *hotTier
	pinned  [][]*entry
	loading []*entry
	evicted []string
}

func newTierModel(max int64) *tierModel { return &tierModel{h: newHotTier(max)} }

func (m *tierModel) evict() {
	m.h.evict(func(e *entry) { m.evicted = append(m.evicted, e.k) })
}

func (m *tierModel) apply(op int, k string) {
	h := m.h
	switch op {
	case 0, 1, 2: // write
		h.write(h.placeholder([]byte(k)), []byte("value"), false)
	case 3: // hit
		if e := h.get([]byte(k)); e != nil && e.valid {
			h.touch(e)
		}
	case 4: // miss: start a load
		if e := h.placeholder([]byte(k)); !e.valid {
			e.loads++
			m.loading = append(m.loading, e)
		}
	case 5: // a load completes
		if len(m.loading) > 0 {
			e := m.loading[0]
			m.loading = m.loading[1:]
			e.loads--
			h.changed(e)
			if e.valid {
				h.touch(e)
			} else {
				h.set(e, []byte("loaded"), false, false)
			}
		}
	case 6: // capture: dirty entries turn clean and pinned
		var pins []*entry
		for _, e := range h.dirtyList {
			if e.valid && e.dirty && h.m[e.k] == e {
				h.setDirty(e, false)
				h.pin(e)
				pins = append(pins, e)
			}
		}
		h.dirtyList = h.dirtyList[:0]
		m.pinned = append(m.pinned, pins)
	case 7: // the oldest capture commits
		if len(m.pinned) > 0 {
			for _, e := range m.pinned[0] {
				h.unpin(e)
			}
			m.pinned = m.pinned[1:]
		}
	case 8: // delete
		h.write(h.placeholder([]byte(k)), nil, true)
	case 9: // warm fill behind everything
		if e := h.placeholder([]byte(k)); !e.valid && e.loads == 0 {
			h.setCold(e, []byte("warm"), false)
		}
	}
	m.evict()
}
