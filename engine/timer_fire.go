package engine

import (
	"fmt"
	"math"
)

// dueGroup collects group g's timers at or below wm: its pending ones, and
// those of every run whose earliest unfired timer is due, in every era
// whose earliest unfired timer is due (reading its summary if need be).
func (t *Timers) dueGroup(g *tgroup, wm int64) error {
	if g.pendMin <= wm {
		t.duePending(g, wm)
	}
	if g.eraMin > wm {
		return nil
	}
	kept := g.eras[:0]
	for _, x := range g.eras {
		if x.next <= wm {
			if err := t.dueEra(g, x, wm); err != nil {
				return err
			}
			g.dirDirty = true
		}
		if x.left > 0 {
			kept = append(kept, x)
		}
	}
	clear(g.eras[len(kept):])
	g.eras = kept
	g.setEraMin()
	return nil
}

// duePending collects group g's pending timers at or below wm.
func (t *Timers) duePending(g *tgroup, wm int64) {
	g.pendMin = math.MaxInt64
	for pk := range g.pending {
		ts := pendingTS(pk)
		if ts > wm {
			g.pendMin = min(g.pendMin, ts)
			continue
		}
		t.fired = append(t.fired, firedTimer{ts: ts, off: len(t.arena), n: len(pk) - 8})
		t.arena = append(t.arena, pk[8:]...)
		delete(g.pending, pk)
	}
}

// dueEra fires era x's due runs, deleting the pages left with nothing
// unfired, and the era's summary once the era is empty.
func (t *Timers) dueEra(g *tgroup, x *tera, wm int64) error {
	if err := t.loadEra(g, x); err != nil {
		return err
	}
	kept := x.runs[:0]
	for _, r := range x.runs {
		if r.next > wm {
			kept = append(kept, r)
			continue
		}
		r, err := t.fireRun(g, r, wm)
		if err != nil {
			return err
		}
		x.dirty = true
		if r.left > 0 {
			kept = append(kept, r)
			continue
		}
		if err := t.be.Delete(t.op, t.midKey(runTag, r.id, r.nonce)); err != nil {
			return fmt.Errorf("timers: delete page %d of key group %d: %w", r.id, g.g, err)
		}
	}
	x.runs = kept
	x.settle()
	if x.left == 0 && x.stored {
		if err := t.be.Delete(t.op, t.midKey(summaryTag, x.era, x.nonce)); err != nil {
			return fmt.Errorf("timers: delete era summary of key group %d: %w", g.g, err)
		}
		x.stored, x.dirty = false, false
	}
	return nil
}

// loadEra reads era x's summary unless its runs are in memory.
func (t *Timers) loadEra(g *tgroup, x *tera) error {
	if x.loaded {
		return nil
	}
	val, found, err := t.be.Get(t.op, t.midKey(summaryTag, x.era, x.nonce))
	if err != nil {
		return fmt.Errorf("timers: read era summary of key group %d: %w", g.g, err)
	}
	if !found {
		return fmt.Errorf("timers: key group %d: its directory names an era summary the checkpoint lacks", g.g)
	}
	if err := decodeEra(x, val); err != nil {
		return fmt.Errorf("timers: key group %d: %w", g.g, err)
	}
	x.loaded = true
	return nil
}

// fireRun reads run r's page, collects its unfired timers at or below wm
// and returns r with them marked fired.
func (t *Timers) fireRun(g *tgroup, r trun, wm int64) (trun, error) {
	val, found, err := t.be.Get(t.op, t.midKey(runTag, r.id, r.nonce))
	if err != nil {
		return r, fmt.Errorf("timers: read page %d of key group %d: %w", r.id, g.g, err)
	}
	if !found {
		return r, fmt.Errorf("timers: page %d of key group %d is missing", r.id, g.g)
	}
	rd := reader{b: val, ok: true}
	if rd.uvarint() != timerLayout {
		return r, fmt.Errorf("timers: corrupt page %d of key group %d", r.id, g.g)
	}
	n := rd.uvarint()
	r.left, r.next = 0, math.MaxInt64
	ts := int64(0)
	for i := uint64(0); i < n && rd.ok; i++ {
		if i == 0 {
			ts = rd.varint()
		} else {
			ts += int64(rd.uvarint())
		}
		key := rd.bytes(rd.uvarint())
		switch {
		case ts <= r.fired:
		case ts <= wm:
			t.collect(ts, key)
		default:
			r.left++
			r.next = min(r.next, ts)
		}
	}
	if !rd.ok {
		return r, fmt.Errorf("timers: corrupt page %d of key group %d", r.id, g.g)
	}
	r.fired = max(r.fired, wm)
	return r, nil
}
